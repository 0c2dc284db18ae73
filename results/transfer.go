package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// Import records a run directory in a store, with labels.
func Import(st *store.Store, dir string, labels map[string]string) (string, error) {
	rd, summary, totals, hs, err := encodeDir(dir)
	if err != nil {
		return "", err
	}
	s := rd.Summary
	if err := st.Import(s.RunID, s.Plan.Name, []byte(s.Plan.Source), s.Start, s.End, s.Status, labels, summary, totals, hs, s.Plan.Includes...); err != nil {
		return "", err
	}
	if len(rd.Points) > 0 {
		if err := st.AddSamples(s.RunID, StoreSamples(rd.Points)); err != nil {
			return "", err
		}
	}
	return s.RunID, nil
}

// Complete records the run of a run directory as the results of the run
// of its id begun in the history (store.Store.Complete): a distributed
// run, merged from its workers' parts.
func Complete(st *store.Store, dir string) error {
	rd, summary, totals, hs, err := encodeDir(dir)
	if err != nil {
		return err
	}
	s := rd.Summary
	if err := st.Complete(s.RunID, s.Status, s.Error, s.End, summary, totals, hs); err != nil {
		return err
	}
	if len(rd.Points) > 0 {
		return st.AddSamples(s.RunID, StoreSamples(rd.Points))
	}
	return nil
}

// storedTags are the tag suffixes of the histograms the history keeps
// beside an operation's latency, in the order of store.Encoded's fields.
var storedTags = [...]string{ServiceTimeTag, StartDelayTag, FailedTag}

// encodeDir reads a finished run directory as the history stores it: its
// summary.json, its totals and its histograms per interval and stage.
func encodeDir(dir string) (rd *Run, summary, totals []byte, hs []store.Encoded, err error) {
	rd, err = ReadDir(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := CheckRunID(rd.Summary.RunID); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("summary.json: %w", err)
	}
	s := rd.Summary
	if s.Status == metrics.StatusRunning {
		return nil, nil, nil, nil, fmt.Errorf("%s: the run is still going (its process holds the interval log); import it once it has ended", dir)
	}
	summary, err = inputfile.ReadFile(filepath.Join(dir, "summary.json"), MaxSummary)
	if errors.Is(err, os.ErrNotExist) {
		// A killed run: its summary as rebuilt from its intervals.
		var b bytes.Buffer
		err = s.WriteJSON(&b)
		summary = b.Bytes()
	}
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if rd.Totals != nil { // ReadDir read them and found them whole
		if totals, err = inputfile.ReadFile(filepath.Join(dir, TotalsFile), MaxSummary); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	for _, ph := range s.Stages {
		for _, op := range UniqueOps(ph.Operations) {
			ivs := rd.IntervalsOf(ph.Index, op)
			total := metrics.NewHistogram()
			// An open model's service time and start delay, and the
			// failed operations' latency, by the interval's start, and
			// their totals.
			tag := StageTag(ph.Index, op.Scenario, op.Name, op.Kind)
			durs := map[string]map[int64]string{}
			durTotals := map[string]*hdr.Histogram{}
			for _, suffix := range storedTags {
				for _, iv := range rd.Intervals[tag+suffix] {
					if durs[suffix] == nil {
						durs[suffix], durTotals[suffix] = map[int64]string{}, metrics.NewHistogram()
					}
					h, err := iv.Histogram()
					if err != nil {
						return nil, nil, nil, nil, err
					}
					h.MergeInto(durTotals[suffix])
					durs[suffix][iv.StartMs] = iv.enc
				}
			}
			for i, iv := range ivs {
				h, err := iv.Histogram()
				if err != nil {
					return nil, nil, nil, nil, err
				}
				h.MergeInto(total)
				q := metrics.QuantilesOf(h)
				hs = append(hs, store.Encoded{Phase: ph.Index, PhaseName: ph.Name, Scenario: op.Scenario, Operation: op.Name, Kind: string(op.Kind),
					Interval: i, StartMs: iv.StartMs, EndMs: iv.EndMs, Count: iv.OpCount(h), Errors: max(iv.Errors, 0), Hist: iv.enc,
					ServiceTime: durs[ServiceTimeTag][iv.StartMs], StartDelay: durs[StartDelayTag][iv.StartMs], Failed: durs[FailedTag][iv.StartMs], Quantiles: &q, PeakVUs: iv.PeakVUs,
					Bytes: iv.Bytes, Failures: iv.Failures})
			}
			enc, q := metrics.Encode(total), metrics.QuantilesOf(total)
			var totalEnc [len(storedTags)]string
			for j, suffix := range storedTags {
				if h := durTotals[suffix]; h != nil {
					totalEnc[j] = string(metrics.Encode(h))
				}
			}
			var count, errs, dropped int64 // over every operation of the key (a step in several transactions)
			for _, o := range ph.Operations {
				if o.Scenario == op.Scenario && o.Name == op.Name && o.Kind == op.Kind {
					count, errs, dropped = count+o.Count, errs+o.Errors.Total, dropped+o.Dropped
				}
			}
			hs = append(hs, store.Encoded{Phase: ph.Index, PhaseName: ph.Name, Scenario: op.Scenario, Operation: op.Name, Kind: string(op.Kind),
				Interval: -1, StartMs: ph.Start.UnixMilli(), EndMs: ph.End.UnixMilli(), Count: count, Errors: errs, Dropped: dropped, Hist: string(enc),
				ServiceTime: totalEnc[0], StartDelay: totalEnc[1], Failed: totalEnc[2], Quantiles: &q, PeakVUs: -1, Bytes: -1})
		}
	}
	return rd, summary, totals, hs, nil
}

// Export writes a stored run as a run directory: summary.json, plan.yaml
// (and PlanDir, the plan and the files it includes, if any),
// latency.hlog, intervals.csv and resources.csv, readable by perflab and
// HdrHistogram's tools. It returns the run's summary, from which the
// renderers write the rest of a run directory (summary.txt, junit.xml).
// dir must be missing or empty (freshDir).
func Export(st *store.Store, id, dir string) (*Summary, error) {
	sum, err := st.Summary(id)
	if err != nil {
		return nil, err
	}
	if err := freshDir(dir); err != nil {
		return nil, err
	}
	src, err := st.PlanSource(id)
	if err != nil {
		return nil, err
	}
	includes, err := st.PlanIncludes(id)
	if err != nil {
		return nil, err
	}
	hs, err := st.Histograms(id)
	if err != nil {
		return nil, err
	}
	samples, err := st.Samples(id)
	if err != nil {
		return nil, err
	}
	if len(samples) > 0 {
		if err := WriteFile(filepath.Join(dir, "resources.csv"), func(w io.Writer) error { return WriteResources(w, slices.Values(pointsOf(samples))) }); err != nil {
			return nil, err
		}
	}
	totals, err := st.Totals(id)
	if err != nil {
		return nil, err
	}
	if len(totals) > 0 {
		if err := os.WriteFile(filepath.Join(dir, TotalsFile), totals, 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), sum, 0o644); err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(sum, &s); err != nil {
		return nil, fmt.Errorf("run %s: summary: %w", id, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), src, 0o644); err != nil {
		return nil, err
	}
	if err := writePlan(dir, src, includes); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "latency.hlog"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	var baseMs int64 = -1
	for _, h := range hs {
		if h.Interval >= 0 && (baseMs < 0 || h.Start.UnixMilli() < baseMs) {
			baseMs = h.Start.UnixMilli()
		}
	}
	if baseMs < 0 {
		baseMs = 0
	}
	baseMs = baseMs / 1000 * 1000
	fmt.Fprintf(w, "#perflab interval histograms exported from the run history: latency of successful operations in microseconds (the Interval_Max column is in seconds)\n#%s\n#%s\n", openTagsComment, failedTagComment)
	fmt.Fprintf(w, "#[Histogram log format version 1.3]\n#[StartTime: %d (seconds since epoch), %s]\n#[BaseTime: %d (seconds since epoch)]\n",
		baseMs/1000, time.UnixMilli(baseMs).UTC().Format(time.RFC3339), baseMs/1000)
	fmt.Fprintln(w, `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`)
	rows, errRows := [][]string{IntervalsHeader}, [][]string{IntervalErrorsHeader}
	for _, h := range hs {
		if h.Interval < 0 {
			continue
		}
		p, err := hdr.DecodePacked([]byte(h.Encoded))
		if err != nil {
			return nil, err
		}
		tag := StageTag(h.Phase, h.Scenario, h.Operation, metrics.Kind(h.Kind))
		if err := logLine(w, baseMs, tag, h.Start.UnixMilli(), h.End.UnixMilli(), p.Max(), []byte(h.Encoded)); err != nil {
			return nil, err
		}
		for _, d := range storedDurations(h) {
			dp, err := hdr.DecodePacked([]byte(d.enc))
			if err != nil {
				return nil, err
			}
			if err := logLine(w, baseMs, tag+d.suffix, h.Start.UnixMilli(), h.End.UnixMilli(), dp.Max(), []byte(d.enc)); err != nil {
				return nil, err
			}
		}
		var ko metrics.Quantiles
		if h.Failed != "" {
			fp, err := hdr.DecodePacked([]byte(h.Failed))
			if err != nil {
				return nil, err
			}
			ko = metrics.QuantilesOf(fp)
		}
		rows = append(rows, WithBytes(WithPeakVUs(IntervalRow(h.Phase, h.Scenario, h.Operation, metrics.Kind(h.Kind), h.Interval, h.Start.UnixMilli(), h.End.UnixMilli(), h.Count, h.Errors, p, ko,
			(&IntervalData{StartMs: h.Start.UnixMilli(), EndMs: h.End.UnixMilli()}).Partial(s.IntervalLength())), h.PeakVUs), h.Bytes))
		errRows = append(errRows, intervalErrorRows(h.Phase, h.Scenario, h.Operation, metrics.Kind(h.Kind), h.Interval, h.Start.UnixMilli(), h.End.UnixMilli(), h.Failures)...)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	if err := WriteFile(filepath.Join(dir, IntervalsCSV), func(w io.Writer) error { return csv.NewWriter(w).WriteAll(rows) }); err != nil {
		return nil, err
	}
	if err := WriteFile(filepath.Join(dir, IntervalErrorsCSV), func(w io.Writer) error { return csv.NewWriter(w).WriteAll(errRows) }); err != nil {
		return nil, err
	}
	return &s, nil
}

// freshDir makes dir for a run directory of its own: missing, it is made;
// it may exist empty. A directory holding anything is refused, untouched:
// another run's files would be overwritten, or left beside this run's
// (its run.json beside this summary.json).
func freshDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a directory: give a new or empty directory", dir)
		}
		return err
	case len(entries) > 0:
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		if len(entries) > 3 {
			names = append(names, "...")
		}
		return fmt.Errorf("%s is not empty (it holds %s): a run is exported into a directory of its own; give a new or empty directory", dir, strings.Join(names, ", "))
	}
	return nil
}
