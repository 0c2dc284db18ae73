// Package lab runs a plan the way the perflab command does: the engine,
// the run directory, the run history, thresholds (regressions against
// stored runs included), log correlation and the printed tables. The
// command and Go programs (package perflab, embedded mode) share it.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/perflab/perflab/doctor"
	"github.com/perflab/perflab/engine"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/logcorr"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
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
	// Worker, if set, makes the run one worker of a distributed run
	// (Worker); the history (Store) must be one all the workers share.
	Worker *Worker
	// Started, if set, is told the run's id once it has one, before the
	// load starts (run --serve prints the run's page).
	Started func(runID string)
	// Observe, if set, sees the engine's progress ticks (about one a
	// second per stage), whatever the progress display: the Prometheus
	// exporter's figures. It must not keep the tick.
	Observe func(ph *metrics.Phase, tk *metrics.Tick)
	// Failures, if above 0, is how many failed HTTP requests and their
	// responses the run writes to failures.jsonl (--dump-failures).
	Failures int
}

// FailuresFile is the failed requests of a run directory (Config.Failures).
const FailuresFile = results.FailuresFile

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
	Failed                          // the run could not complete (setup failed, a simulator did not start, ...), or its results were not all recorded (Lost)
)

// Result is a finished run.
type Result struct {
	RunID, Dir string
	Summary    *results.Summary
	Outcome    Outcome
	// Err is why the run failed (Outcome Failed).
	Err error
	// Lost is what the run could not record (in its directory or the
	// history); a run that lost something is Failed.
	Lost []string
}

// Run runs a validated plan as `perflab run` does: it prints the tables to
// cfg.Stdout and progress to cfg.Stderr, writes the run directory and
// records the run in the history. Cancelling ctx stops the load; teardown
// still runs and everything measured is written (Interrupted). The error is
// non-nil only when the run directory could not be written.
func Run(ctx context.Context, p *plan.Plan, cfg Config) (*Result, error) {
	cfg.defaults()
	// The data files' rows, before anything is recorded: a file over its
	// limit (it grew since the plan was loaded) leaves no run behind.
	if err := p.ReadData(); err != nil {
		return nil, err
	}
	stdout, stderr := cfg.Stdout, cfg.Stderr
	start := time.Now()
	// lost is what the run could not record: said at its end, and the run
	// fails (exit 3) however its load went.
	var lost []string
	st, err := openStore(cfg)
	if err != nil {
		if cfg.Worker != nil { // the workers meet in the history: no run without it
			return nil, fmt.Errorf("a distributed run: %w", err)
		}
		fmt.Fprintf(stderr, "perflab: %v; the run is recorded in its directory only\n", err)
		lost = append(lost, fmt.Sprintf("the run history (%v)", err))
	}
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		runID   string
		rd      *results.Writer
		histErr error
		coord   *coordinator // a worker of a distributed run
	)
	if cfg.Worker != nil {
		if st == nil {
			return nil, errors.New("a distributed run needs a run history all its workers share (--store postgres://...): --store off has none")
		}
		if coord, rd, err = joinRun(st, cfg, p, start); err != nil {
			return nil, err
		}
		runID = coord.part
		coord.start(cancel)
		defer coord.stop()
		fmt.Fprintf(stderr, "perflab: worker %s of run %s (its part: %s)\n", cfg.Worker.Segment, cfg.Worker.RunID, runID)
	} else if runID, rd, histErr, err = claimRun(cfg.Out, start, p, st, cfg.Labels); err != nil {
		return nil, err
	}
	defer rd.Close()
	if histErr != nil {
		fmt.Fprintf(stderr, "perflab: store: %v; the run is recorded in its directory only\n", histErr)
		lost = append(lost, fmt.Sprintf("the run history (%v)", histErr))
		st.Close()
		st = nil
	}
	if st != nil && coord == nil {
		stop := heartbeat(st, runID)
		defer stop()
	}
	dir := rd.Path
	res := &Result{RunID: runID, Dir: dir}
	var requests *os.File // requests.csv, for the steps marked correlate
	if p.Correlated() {
		if requests, err = os.Create(filepath.Join(dir, "requests.csv")); err != nil {
			return nil, err
		}
		defer requests.Close()
	}
	var failures *phttp.FailureLog
	if cfg.Failures > 0 {
		f, err := os.Create(filepath.Join(dir, FailuresFile))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		failures = phttp.NewFailureLog(f, cfg.Failures)
	}
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
	var storeFailed atomic.Bool
	// A plain line every interval, but at most one a second (a short
	// run's intervals are of 100 ms) and at least one every 10 s.
	prog := &report.Progress{W: stderr, Terminal: mode == "live", Every: min(10*time.Second, max(time.Second, p.Interval.D))}
	opts := engine.Options{
		RunID: runID,
		Steps: cfg.Steps,
		Sink: func(ph *metrics.Phase) metrics.Sink {
			sinks := []metrics.Sink{rd.Sink(ph)}
			if st != nil {
				sinks = append(sinks, storeSink{st, runID, ph, &storeFailed, stderr, coord})
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
	opts.Failures = failures
	if coord != nil {
		// ${run_id} is the distributed run's, in every worker.
		opts.RunID, opts.Segment, opts.Coordinator = cfg.Worker.RunID, cfg.Worker.Segment, coord
	}
	if mode != "none" {
		opts.OnTick = prog.Tick
	}
	if observe := cfg.Observe; observe != nil {
		show := opts.OnTick
		opts.OnTick = func(ph *metrics.Phase, tk *metrics.Tick) {
			if show != nil {
				show(ph, tk)
			}
			observe(ph, tk)
		}
	}
	// Thresholds marked abort stop the run as soon as they fail.
	var aborted atomic.Pointer[results.ThresholdResult]
	switch {
	case coord != nil:
		// A distributed run's are judged on the whole, merged from the
		// workers' stored intervals, by one of the workers (judgeWhole).
	case slices.ContainsFunc(p.Thresholds, func(t *plan.Threshold) bool { return t.Abort }):
		show := opts.OnTick
		opts.OnTick = func(ph *metrics.Phase, tk *metrics.Tick) {
			if show != nil {
				show(ph, tk)
			}
			if ph.Index == 0 || aborted.Load() != nil {
				return
			}
			if r := judge.Early(p.Thresholds, ph, tk); r != nil && aborted.CompareAndSwap(nil, r) {
				prog.Done()
				fmt.Fprintf(stderr, "perflab: threshold %q failed on %s in %s after %s: stopping the run (its results and teardown still follow)\n",
					r.Threshold, r.Operation, r.Stage, tk.Elapsed.Round(time.Millisecond))
				cancel()
			}
		}
	}
	fmt.Fprintf(stderr, "perflab: running %s (%d stage(s); %s); results go to %s\n", p.Name, len(p.Stages()), p.IntervalText(), dir)
	doctor.AtStart(stderr, p, opts.Segment)
	if cfg.Started != nil {
		cfg.Started(runID)
	}
	sampler := startMonitors(ctx, p, cfg.Monitors, stderr, coord == nil || cfg.Worker.Segment.Index == 0)
	opts.OnStage = func(ph *metrics.Phase, end bool) {
		sampler.Mark()
		if coord != nil && !end {
			coord.stageStarted(ph)
		}
	}
	run, runErr := engine.Run(ctx, p, opts)
	prog.Done()
	// The stages' recorders and collectors, their histograms (315 KB
	// each, a few per operation and shard: tens of MB for a plan of many
	// operations), are garbage now: their memory goes back to the system
	// before the end of the run reads the run back, whose peak would
	// otherwise come on top of the load's, and the end of the run may use
	// as much as the load did (endCeiling).
	defer endCeiling()()
	// A monitor's last word (a database's statements) must not hold the
	// results back for ever.
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	sampled := sampler.Stop(stopCtx)
	defer sampled.Close() // the files its points were spilled to
	stopCancel()
	for _, o := range cfg.Overrides {
		run.Overrides = append(run.Overrides, metrics.KV{Name: o.Name, Value: o.Kept()})
	}
	if r := aborted.Load(); r != nil {
		run.Status = metrics.StatusFailed
		run.Error = fmt.Sprintf("aborted: threshold %q failed on %s in %s", r.Threshold, r.Operation, r.Stage)
	}
	if why := coord.abortedBy(); why != "" { // the run stopped itself: a threshold failed on the whole, a worker did not join
		run.Status, run.Error = metrics.StatusFailed, why
	}
	// The end of the run: its summary, its analyses (each failing alone)
	// and its records.
	end := &ending{p: p, cfg: cfg, st: st, rd: rd, runID: runID, dir: dir, coord: coord, stdout: stdout, stderr: stderr, storeFailed: &storeFailed, lost: lost}
	sum := end.summarize(run, &sampled, failures)
	res.Summary = sum
	end.analyze(sum, run, requests)
	end.record(sum, run, &sampled)
	lost = end.lost
	if storeFailed.Load() {
		lost = append(lost, "the run history (it could not be written: the run is whole in its directory only)")
	}
	fmt.Fprintf(stderr, "run %s %s; results in %s\n", runID, sum.StatusLine(), dir)
	if coord != nil {
		coord.finished(!storeFailed.Load())
		if coord.merges {
			return coord.merge(p, cfg)
		}
	}
	switch {
	case len(lost) > 0:
		// A run that is not whole where it was asked to be fails, whatever
		// else happened: a script must not take it for a complete run.
		res.Outcome, res.Err = Failed, fmt.Errorf("the run's results were not all recorded: %s", strings.Join(lost, "; "))
		res.Lost = lost
		if runErr != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", runErr)
		}
		fmt.Fprintf(stderr, "perflab: %v\n", res.Err)
		if st == nil || storeFailed.Load() {
			fmt.Fprintf(stderr, "perflab: once the history can be written, `perflab import %s` records the run there\n", dir)
		}
	case aborted.Load() != nil:
		fmt.Fprintf(stderr, "perflab: %s\n", run.Error)
		res.Outcome = ThresholdsFailed
	case runErr != nil:
		fmt.Fprintf(stderr, "perflab: %v\n", runErr)
		res.Outcome, res.Err = Failed, runErr
	case run.Status == metrics.StatusInterrupted:
		res.Outcome = Interrupted
	case results.Failed(sum.Thresholds) > 0:
		fmt.Fprintf(stderr, "perflab: %d threshold(s) failed\n", results.Failed(sum.Thresholds))
		res.Outcome = ThresholdsFailed
	}
	return res, nil
}

// openStore opens the run history named by --store (default beside the run
// directories); nil when it is off.
func openStore(cfg Config) (*store.Store, error) {
	path := cfg.Store
	if path == "off" {
		return nil, nil
	}
	if path == "" {
		path = store.DefaultPath(cfg.Out)
	}
	return store.Open(path)
}

// claimRun gives a run its id and directory: the start time to the
// millisecond and the plan's name, with -2, -3, ... appended while a
// directory of that name exists or the history holds a run of that id. The
// directory is created exclusively and the id inserted into the history
// under a uniqueness constraint, so that two runs started at once never
// share either. histErr is why the history could not record the run (the
// run goes on in its directory).
func claimRun(out string, start time.Time, p *plan.Plan, st *store.Store, labels map[string]string) (id string, rd *results.Writer, histErr, err error) {
	base := results.RunIDBase(start, p.Name)
	for n := 1; n <= 10000; n++ {
		id = base
		if n > 1 {
			id = fmt.Sprintf("%s-%d", base, n)
		}
		rd, err = results.CreateDir(filepath.Join(out, id), id, p.Name, start, p.KeptSource(), labels, p.KeptIncluded()...)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, nil, err
		}
		if st != nil {
			histErr = st.Begin(id, p.Name, p.KeptSource(), start, labels, p.KeptIncluded()...)
			if errors.Is(histErr, store.ErrExists) {
				// Another machine's run of this id, in a shared history.
				rd.Close()
				os.RemoveAll(rd.Path)
				continue
			}
		}
		return id, rd, histErr, nil
	}
	return "", nil, nil, fmt.Errorf("no free run id for %s in %s", base, out)
}

// heartbeat says every store.HeartbeatEvery that the run is alive, until
// stopped: a run whose heartbeat stops is shown as killed.
func heartbeat(st *store.Store, id string) (stop func()) {
	return every(store.HeartbeatEvery, func() {
		st.Heartbeat(id) // a missed beat is no loss: the next one may pass
	})
}

// every calls f every d on a goroutine of its own, until stopped (stop
// returns once f has returned).
func every(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// storeSink writes a stage's intervals to the run history. The run
// directory is the record that must not fail: a history that cannot be
// written is reported once and the load goes on.
type storeSink struct {
	st     *store.Store
	runID  string
	ph     *metrics.Phase
	failed *atomic.Bool
	stderr io.Writer
	// coord, for a worker of a distributed run, hears of each interval
	// stored.
	coord *coordinator
}

func (s storeSink) Interval(iv *metrics.Interval) error {
	if s.failed.Load() {
		return nil
	}
	if err := s.st.Interval(s.runID, s.ph, iv); err != nil {
		s.failed.Store(true)
		fmt.Fprintf(s.stderr, "perflab: store: %v; the run goes on, recorded in its directory only\n", err)
		return nil
	}
	if s.coord != nil {
		s.coord.stored(iv.Index)
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

// regressions judges the plan's regression thresholds: the run (read
// once, when there is one to judge) against the stored runs of the same
// plan that carry each threshold's baseline label. Without a store, each
// fails with a note.
func regressions(ts []*plan.Threshold, planName string, st *store.Store, runID string, read func() (*results.Run, error)) []results.ThresholdResult {
	var out []results.ThresholdResult
	var cand *results.Run
	for _, t := range ts {
		if !t.Regression() {
			continue
		}
		if st == nil {
			out = append(out, results.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "no run history (--store off, or it could not be opened) to find the baseline in"})
			continue
		}
		if cand == nil {
			var err error
			if cand, err = read(); err != nil {
				out = append(out, results.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "reading the run back: " + err.Error()})
				continue
			}
		}
		base, err := results.LabelledRuns(st, t.Baseline, planName, runID)
		if err != nil {
			out = append(out, results.ThresholdResult{Threshold: t.Source, Operation: t.Operation, Note: "reading the baseline: " + err.Error()})
			continue
		}
		out = append(out, judge.Regression(t, base, cand)...)
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

// ceiling is the soft memory limit of the runs ending in this process
// (endCeiling): set by the first, restored by the last.
var ceiling struct {
	sync.Mutex
	runs int
	old  int64
}

// endCeiling gives the Go runtime's memory back to the system once the
// load has ended, and sets a soft memory limit (debug.SetMemoryLimit) of
// what the runtime held then, at least 64 MB, for the end of the run:
// judging a run's drift reads every interval back and builds its series,
// and with the garbage collector's usual headroom (a heap twice the live
// one) the end of a 20-minute run at 100 ms intervals peaked at twice the
// memory of its load. A limit the user set (GOMEMLIMIT) stays. It returns
// the function that restores the limit.
func endCeiling() func() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	held := int64(ms.Sys - ms.HeapReleased)
	debug.FreeOSMemory()
	ceiling.Lock()
	defer ceiling.Unlock()
	if ceiling.runs == 0 {
		ceiling.old = debug.SetMemoryLimit(-1)
		if ceiling.old == math.MaxInt64 {
			debug.SetMemoryLimit(max(held, 64<<20))
		}
	}
	ceiling.runs++
	return func() {
		ceiling.Lock()
		defer ceiling.Unlock()
		if ceiling.runs--; ceiling.runs == 0 {
			debug.SetMemoryLimit(ceiling.old)
		}
	}
}
