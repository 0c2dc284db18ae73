package lab

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// Merge merges the run directories of one plan, run at the same time by
// several load generators, into one run as `perflab merge` does
// (results.Merge): it writes the merged run's directory under cfg.Out,
// judges the plan's thresholds on the whole (regressions against the
// history included), whether the generators kept to the plan and whether
// the system degraded over the run (its drift), prints
// the tables to cfg.Stdout and records the run in the history. cfg.Labels are added to the first run's labels. The error is
// non-nil when the runs could not be read or merged, or the directory
// could not be written.
func Merge(dirs []string, cfg Config) (*Result, error) {
	cfg.defaults()
	stdout, stderr := cfg.Stdout, cfg.Stderr
	var parts []*results.Run
	for _, dir := range dirs {
		rd, err := results.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		parts = append(parts, rd)
	}
	m, err := results.Merge(parts)
	if err != nil {
		return nil, err
	}
	s := m.Summary
	labels := maps.Clone(s.Labels)
	if labels == nil && len(cfg.Labels) > 0 {
		labels = map[string]string{}
	}
	maps.Copy(labels, cfg.Labels)
	s.Labels = labels

	// Whether the generators kept to the plan, on the whole: each part's
	// own CPU is in its warnings (the monitors stay each part's).
	judge.Generator(s, 0)
	judgeDrift(s, stderr, func() (*results.Run, error) { return m, nil })

	var lost []string
	st, err := openStore(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: %v; the merged run is recorded in its directory only\n", err)
		lost = append(lost, fmt.Sprintf("the run history (%v)", err))
	}
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	// The plan's thresholds, from its text: its data files may be on the
	// machines that ran it.
	ts, err := plan.Thresholds([]byte(s.Plan.Source), filepath.Join(dirs[0], "plan.yaml"))
	if err != nil {
		fmt.Fprintf(stderr, "perflab: the thresholds are not judged: %v\n", err)
	}
	s.Thresholds = judge.Thresholds(ts, s)
	s.Thresholds = append(s.Thresholds, regressions(ts, s.Plan.Name, st, "", func() (*results.Run, error) { return m, nil })...)
	dir, err := writeMerged(cfg.Out, m, st)
	if err != nil {
		return nil, err
	}
	res := &Result{RunID: s.RunID, Dir: dir, Summary: s}
	if err := report.WriteRunFiles(dir, s); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
		lost = append(lost, fmt.Sprintf("summary.txt or junit.xml (%v)", err))
	}
	if err := report.WriteTable(stdout, s); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
	}
	report.WriteThresholds(stdout, ts, s.Thresholds)
	if st != nil {
		if _, err := results.Import(st, dir, labels); err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v\n", err)
			lost = append(lost, fmt.Sprintf("the run history (%v)", err))
		}
	}
	fmt.Fprintf(stderr, "merged %d runs into run %s (%s); results in %s\n", len(parts), s.RunID, s.StatusLine(), dir)
	switch {
	case len(lost) > 0:
		res.Outcome, res.Lost = Failed, lost
		res.Err = fmt.Errorf("the merged run's results were not all recorded: %s", strings.Join(lost, "; "))
		fmt.Fprintf(stderr, "perflab: %v\n", res.Err)
	case s.Status == metrics.StatusFailed:
		res.Outcome, res.Err = Failed, errors.New(s.Error)
	case s.Status == metrics.StatusInterrupted:
		res.Outcome = Interrupted
	case results.Failed(s.Thresholds) > 0:
		fmt.Fprintf(stderr, "perflab: %d threshold(s) failed\n", results.Failed(s.Thresholds))
		res.Outcome = ThresholdsFailed
	}
	return res, nil
}

// writeMerged gives a merged run its id and writes its directory: the
// first part's id with "-merged", and -2, -3, ... while a directory of
// that name exists or the history holds a run of that id. The directory
// is created exclusively: two merges at once never share one.
func writeMerged(out string, m *results.Run, st *store.Store) (string, error) {
	base := m.Summary.RunID + "-merged"
	for n := 1; n <= 10000; n++ {
		id := base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		if err := results.CheckRunID(id); err != nil {
			return "", fmt.Errorf("the merged run's id, made from the first run's: %w", err)
		}
		if st != nil {
			if have, err := st.Runs(store.Filter{ID: id}); err == nil && len(have) > 0 {
				continue
			}
		}
		m.Summary.RunID = id
		dir := filepath.Join(out, id)
		err := results.WriteDir(m, dir)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return dir, err
	}
	return "", fmt.Errorf("no free run id for %s in %s", base, out)
}
