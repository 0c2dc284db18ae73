package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// ManifestFile is run.json: what a run directory is, written when the run
// starts and as each stage begins, so that a run that never writes its
// summary (killed) can still be read.
const ManifestFile = "run.json"

// Manifest is the content of run.json.
type Manifest struct {
	Format string `json:"format"`
	RunID  string `json:"run_id"`
	Plan   string `json:"plan"`
	// PlanIncludes are the paths of the files the plan includes, which
	// PlanDir holds.
	PlanIncludes []string  `json:"plan_includes,omitempty"`
	Start        time.Time `json:"start"`
	// Host and PID are the process making the run.
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Labels are the run's labels (release=Goldenrod).
	Labels map[string]string `json:"labels,omitempty"`
	// Stages are the phases begun so far (setup and teardown are index 0).
	Stages []ManifestStage `json:"stages"`
}

// ManifestStage is a phase that has begun.
type ManifestStage struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// writeManifest replaces run.json whole (a new file renamed over the old),
// so that a reader never sees half of one.
func (rd *Writer) writeManifest() error {
	return WriteFile(filepath.Join(rd.Path, ManifestFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rd.manifest)
	})
}

// beginPhase records a phase in run.json, once.
func (rd *Writer) beginPhase(ph *metrics.Phase) error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	for _, s := range rd.manifest.Stages {
		if s.Index == ph.Index && s.Name == ph.Name {
			return nil
		}
	}
	rd.manifest.Stages = append(rd.manifest.Stages, ManifestStage{Index: ph.Index, Name: ph.Name})
	return rd.writeManifest()
}

// readUnfinished reads a run directory without summary.json: a run that is
// still going (its interval log is locked by its process) or was killed.
// Its summary is rebuilt from latency.hlog and intervals.csv, its stages
// named from run.json.
func readUnfinished(dir string) (*Run, error) {
	var m Manifest
	b, err := inputfile.ReadFile(filepath.Join(dir, ManifestFile), MaxSummary)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// A directory of a perflab without run.json: named after itself.
		m.RunID = filepath.Base(dir)
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "latency.hlog")); err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	status := store.Killed
	if logLocked(filepath.Join(dir, "latency.hlog")) {
		status = metrics.StatusRunning
	}
	rd, err := readIntervals(dir)
	if err != nil {
		return nil, err
	}
	names := map[int]string{}
	for _, s := range m.Stages {
		names[s.Index] = s.Name
	}
	rows, err := readIntervalRows(filepath.Join(dir, IntervalsCSV))
	if err != nil {
		return nil, err
	}
	var hs []store.Histogram
	for _, r := range rows {
		tag := StageTag(r.Phase, r.Scenario, r.Operation, metrics.Kind(r.Kind))
		d := findSorted(rd.Intervals[tag], r.Start.UnixMilli())
		if d == nil {
			continue // its histogram was not flushed before the process ended
		}
		r.Encoded = d.enc
		if d := findInterval(rd.Intervals[tag+ServiceTimeTag], r.Start.UnixMilli()); d != nil {
			r.ServiceTime = d.enc
		}
		if d := findInterval(rd.Intervals[tag+StartDelayTag], r.Start.UnixMilli()); d != nil {
			r.StartDelay = d.enc
		}
		if d := findInterval(rd.Intervals[tag+FailedTag], r.Start.UnixMilli()); d != nil {
			r.Failed = d.enc
		}
		r.PhaseName = names[r.Phase]
		if r.PhaseName == "" {
			r.PhaseName = "stage " + strconv.Itoa(r.Phase)
		}
		hs = append(hs, r)
	}
	start := m.Start
	if start.IsZero() && len(hs) > 0 {
		start = hs[0].Start
	}
	src, _ := inputfile.ReadFile(filepath.Join(dir, "plan.yaml"), MaxSummary)
	s, err := rebuildSummary(store.Run{ID: m.RunID, Plan: m.Plan, Status: status, Start: start, Labels: m.Labels}, src, readPlan(dir, m.PlanIncludes), hs)
	if err != nil {
		return nil, err
	}
	rd.Summary = s
	return rd, nil
}

// findInterval is the interval of a list that starts at startMs.
func findInterval(list []*IntervalData, startMs int64) *IntervalData {
	for _, d := range list {
		if d.StartMs == startMs {
			return d
		}
	}
	return nil
}
