// Package lab runs a plan the way the perflab command does: the engine,
// the run directory, the run history, thresholds (regressions against
// stored runs included), log correlation and the printed tables. The
// command and Go programs (package perflab, embedded mode) share it.
package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/perflab/perflab/engine"
	"github.com/perflab/perflab/logcorr"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/store"
)

// Config says where a run is recorded and how it is shown.
type Config struct {
	// Out is the directory under which the run gets its own (default runs).
	Out string
	// Store is the run history: a SQLite file (default Out/perflab.db), a
	// postgres:// URL, or off.
	Store string
	// Labels label the run in the history (release=Honeysuckle).
	Labels map[string]string
	// Overrides are the plan variables set from outside (--set), recorded
	// in the summary; the plan has them applied already.
	Overrides []plan.Override
	// Progress is auto (live on a terminal, else plain), live, plain or
	// none.
	Progress string
	// Stdout gets the tables, Stderr progress and notes (default
	// io.Discard for both).
	Stdout, Stderr io.Writer
	// Steps bind step names to Go functions run in-process instead of
	// their requests (embedded mode), and serve the plan's call steps.
	Steps map[string]engine.StepFunc
	// Monitors are watched beside the plan's own (--monitor).
	Monitors []monitor.Spec
}

func (c *Config) defaults() {
	if c.Out == "" {
		c.Out = "runs"
	}
	if c.Progress == "" {
		c.Progress = "auto"
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
}

// Outcome is how a run ended.
type Outcome int

// Outcomes, in the order of the perflab command's exit codes 0, 4, 130, 3.
const (
	Completed        Outcome = iota // the load ran to its end (failed requests are results)
	ThresholdsFailed                // a threshold failed, or aborted the run
	Interrupted                     // ctx was cancelled; teardown ran, results are written
	Failed                          // the run could not complete: setup failed, a simulator did not start, ...
)

// Result is a finished run.
type Result struct {
	RunID, Dir string
	Summary    *report.Summary
	Outcome    Outcome
	// Err is why the run failed (Outcome Failed).
	Err error
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Run runs a validated plan as `perflab run` does: it prints the tables to
// cfg.Stdout and progress to cfg.Stderr, writes the run directory and
// records the run in the history. Cancelling ctx stops the load; teardown
// still runs and everything measured is written (Interrupted). The error is
// non-nil only when the run directory could not be written.
func Run(ctx context.Context, p *plan.Plan, cfg Config) (*Result, error) {
	cfg.defaults()
	stdout, stderr := cfg.Stdout, cfg.Stderr
	start := time.Now()
	// Milliseconds keep run ids unique in the history even for runs started
	// in the same second.
	runID := start.Format("20060102-150405.000") + "-" + strings.Trim(unsafeID.ReplaceAllString(p.Name, "-"), "-")
	dir := filepath.Join(cfg.Out, runID)
	res := &Result{RunID: runID, Dir: dir}
	rd, err := report.CreateRunDir(dir, start, p.Source)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var requests *os.File // requests.csv, for the steps marked correlate
	if p.Correlated() {
		if requests, err = os.Create(filepath.Join(dir, "requests.csv")); err != nil {
			return nil, err
		}
		defer requests.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	mode := cfg.Progress
	isTerm := false
	if file, ok := stderr.(*os.File); ok {
		isTerm = term.IsTerminal(int(file.Fd()))
	}
	if mode == "auto" {
		mode = "plain"
		if isTerm {
			mode = "live"
		}
	}
	// The engine's events, progress, monitors and the store's sink write
	// from goroutines of their own: to a writer of the caller's (a
	// bytes.Buffer) one at a time.
	stderr = &syncWriter{w: stderr}
	st := openStore(cfg, stderr)
	if st != nil {
		defer st.Close()
		if err := st.Begin(runID, p.Name, p.Source, start, cfg.Labels); err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v; the run is not recorded in the history\n", err)
			st.Close()
			st = nil
		}
	}
	storeFailed := false
	prog := &report.Progress{W: stderr, Terminal: mode == "live", Every: min(10*time.Second, p.Interval.D)}
	opts := engine.Options{
		RunID: runID,
		Steps: cfg.Steps,
		Sink: func(ph *metrics.Phase) metrics.Sink {
			sinks := []metrics.Sink{rd.Sink(ph)}
			if st != nil {
				sinks = append(sinks, storeSink{st, runID, ph, &storeFailed, stderr})
			}
			return multiSink(sinks)
		},
		OnEvent: func(msg string) {
			prog.Done()
			fmt.Fprintln(stderr, msg)
		},
	}
	if requests != nil { // not a nil *os.File in the interface
		opts.Requests = requests
	}
	if mode != "none" {
		opts.OnTick = prog.Tick
	}
	// Thresholds marked abort stop the run as soon as they fail.
	var aborted atomic.Pointer[report.ThresholdResult]
	if slices.ContainsFunc(p.Thresholds, func(t *plan.Threshold) bool { return t.Abort }) {
		show := opts.OnTick
		opts.OnTick = func(ph *metrics.Phase, tk *metrics.Tick) {
			if show != nil {
				show(ph, tk)
			}
			if ph.Index == 0 || aborted.Load() != nil {
				return
			}
			if r := report.CheckEarly(p.Thresholds, ph.Name, tk); r != nil && aborted.CompareAndSwap(nil, r) {
				prog.Done()
				fmt.Fprintf(stderr, "perflab: threshold %q failed on %s in %s after %s: stopping the run (its results and teardown still follow)\n",
					r.Threshold, r.Operation, r.Stage, tk.Elapsed.Round(time.Millisecond))
				cancel()
			}
		}
	}
	fmt.Fprintf(stderr, "perflab: running %s (%d stage(s)); results go to %s\n", p.Name, len(p.Stages()), dir)
	sampler := startMonitors(ctx, p, cfg.Monitors, stderr)
	opts.OnStage = func(*metrics.Phase, bool) { sampler.Mark() }
	run, runErr := engine.Run(ctx, p, opts)
	prog.Done()
	// A monitor's last word (a database's statements) must not hold the
	// results back for ever.
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	sampled := sampler.Stop(stopCtx)
	stopCancel()
	for _, o := range cfg.Overrides {
		run.Overrides = append(run.Overrides, metrics.KV{Name: o.Name, Value: o.Value})
	}
	if r := aborted.Load(); r != nil {
		run.Status = metrics.StatusFailed
		run.Error = fmt.Sprintf("aborted: threshold %q failed on %s in %s", r.Threshold, r.Operation, r.Stage)
	}
	sum := report.Summarize(run, report.HostFacts())
	resources(&sampled, run, sum)
	if err := rd.WriteFile("resources.csv", func(w io.Writer) error { return report.WriteResources(w, sampled.All()) }); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
	}
	if len(p.Logs) > 0 && requests != nil {
		sum.Logs = correlateLogs(p, requests.Name(), stderr)
	}
	sum.Thresholds = report.CheckThresholds(p.Thresholds, sum)
	if err := report.WriteTable(stdout, sum); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
	}
	res.Summary = sum
	if err := rd.Finish(sum); err != nil {
		return res, fmt.Errorf("writing results: %w", err)
	}
	if rs := regressions(p, st, runID, dir, stderr); len(rs) > 0 {
		sum.Thresholds = append(sum.Thresholds, rs...)
		if err := rd.WriteFile("summary.json", sum.WriteJSON); err != nil {
			fmt.Fprintf(stderr, "perflab: writing results: %v\n", err)
		}
	}
	report.WriteThresholds(stdout, p.Thresholds, sum.Thresholds)
	if len(sum.Thresholds) > 0 {
		if err := rd.WriteFile("junit.xml", func(w io.Writer) error { return report.WriteJUnit(w, p.Thresholds, sum.Thresholds) }); err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
		}
	}
	if st != nil && !storeFailed && sampled.Len() > 0 {
		if err := addSamples(st, runID, &sampled); err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v\n", err)
		}
	}
	if st != nil && !storeFailed {
		var b bytes.Buffer
		if err := sum.WriteJSON(&b); err == nil {
			err = st.Finish(runID, run.Status, run.Error, run.End, b.Bytes(), run.Stages)
		}
		if err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "run %s %s; results in %s\n", runID, run.Status, dir)
	switch {
	case aborted.Load() != nil:
		fmt.Fprintf(stderr, "perflab: %s\n", run.Error)
		res.Outcome = ThresholdsFailed
	case runErr != nil:
		fmt.Fprintf(stderr, "perflab: %v\n", runErr)
		res.Outcome, res.Err = Failed, runErr
	case run.Status == metrics.StatusInterrupted:
		res.Outcome = Interrupted
	case report.Failed(sum.Thresholds) > 0:
		fmt.Fprintf(stderr, "perflab: %d threshold(s) failed\n", report.Failed(sum.Thresholds))
		res.Outcome = ThresholdsFailed
	}
	return res, nil
}

// openStore opens the run history named by --store (default beside the run
// directories); nil when it is off or cannot be opened, which is said once.
func openStore(cfg Config, stderr io.Writer) *store.Store {
	path := cfg.Store
	if path == "off" {
		return nil
	}
	if path == "" {
		path = store.DefaultPath(cfg.Out)
	}
	st, err := store.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: %v; the run is not recorded in the history\n", err)
		return nil
	}
	return st
}

// storeSink writes a stage's intervals to the run history. The run
// directory is the record that must not fail: a history that cannot be
// written is reported once and the load goes on.
type storeSink struct {
	st     *store.Store
	runID  string
	ph     *metrics.Phase
	failed *bool
	stderr io.Writer
}

func (s storeSink) Interval(iv *metrics.Interval) error {
	if *s.failed {
		return nil
	}
	if err := s.st.Interval(s.runID, s.ph, iv); err != nil {
		*s.failed = true
		fmt.Fprintf(s.stderr, "perflab: store: %v; the run goes on, recorded in its directory only\n", err)
	}
	return nil
}

// multiSink hands each interval to several sinks.
type multiSink []metrics.Sink

func (m multiSink) Interval(iv *metrics.Interval) error {
	for _, s := range m {
		if err := s.Interval(iv); err != nil {
			return err
		}
	}
	return nil
}

// addSamples stores the monitors' samples in the run history a batch at a
// time (a transaction each): a long run's samples are never all unpacked
// at once.
func addSamples(st *store.Store, runID string, res *monitor.Result) error {
	batch := make([]store.Sample, 0, min(res.Len(), 8192))
	for p := range res.All() {
		batch = append(batch, store.Sample{Time: p.Time, Monitor: p.Monitor, Metric: p.Metric, Value: p.Value})
		if len(batch) == cap(batch) {
			if err := st.AddSamples(runID, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if len(batch) == 0 {
		return nil
	}
	return st.AddSamples(runID, batch)
}

// regressions judges the plan's regression thresholds: the run, read back
// from its directory, against the stored runs of the same plan that carry
// each threshold's baseline label. Without a store, each fails with a note.
func regressions(p *plan.Plan, st *store.Store, runID, dir string, stderr io.Writer) []report.ThresholdResult {
	var out []report.ThresholdResult
	var cand *report.RunData
	for _, t := range p.Thresholds {
		if !t.Regression() {
			continue
		}
		if st == nil {
			out = append(out, report.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "no run history (--store off, or it could not be opened) to find the baseline in"})
			continue
		}
		if cand == nil {
			var err error
			if cand, err = report.ReadRunDir(dir); err != nil {
				out = append(out, report.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "reading the run back: " + err.Error()})
				continue
			}
		}
		base, err := LabelledRuns(st, t.Baseline, p.Name, runID)
		if err != nil {
			out = append(out, report.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "reading the baseline: " + err.Error()})
			continue
		}
		out = append(out, report.CheckRegression(t, base, cand)...)
	}
	return out
}

// correlateLogs matches the requests of the steps marked correlate with
// the service's logs. A failure is reported and leaves the run's results
// as they are.
func correlateLogs(p *plan.Plan, requestsCSV string, stderr io.Writer) *logcorr.Result {
	reqs, err := logcorr.ReadRequestsFile(requestsCSV)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: logs: %v\n", err)
		return nil
	}
	var sources []logcorr.Source
	for _, l := range p.Logs {
		src := logcorr.Source{Pattern: l.Pattern}
		for _, f := range l.Files {
			if !filepath.IsAbs(f) && p.File != "" {
				f = filepath.Join(filepath.Dir(p.File), f)
			}
			src.Files = append(src.Files, f)
		}
		sources = append(sources, src)
	}
	res, err := logcorr.Correlate(reqs, sources)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: logs: %v\n", err)
		return nil
	}
	return res
}

// LabelledRuns reads the finished stored runs that carry a label
// (selector "name=value"), of one plan if planName is set, leaving out the
// run exclude.
func LabelledRuns(st *store.Store, selector, planName, exclude string) ([]*report.RunData, error) {
	k, v, _ := strings.Cut(selector, "=")
	runs, err := st.Runs(store.Filter{Labels: map[string]string{k: v}, Plan: planName})
	if err != nil {
		return nil, err
	}
	var out []*report.RunData
	for _, r := range runs {
		if r.Status == "running" || r.ID == exclude {
			continue
		}
		rd, err := report.FromStore(st, r.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, rd)
	}
	return out, nil
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
