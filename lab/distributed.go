package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// Worker makes a run one worker of a distributed run: several perflab
// processes, on one machine or many, each running its share of the plan
// (plan.Segment) and meeting in a shared run history, which makes one run
// of them.
//
// Every worker registers in the history and waits until all have (the
// start barrier: JoinTimeout, then the run fails naming the missing
// workers). The first to get there runs setup; the others wait for its
// values. The load starts at one time decided for all, and each stage
// starts when every worker still running has reached it. A worker records
// its share as a part, a run of its own (RUN-wINDEX). Once its load has
// ended, a worker waits for the others'; the one that claims teardown runs
// it, waits for every part to be recorded, merges them exactly
// (results.Merge), judges the plan's thresholds on the whole, writes the
// run's directory and completes the run in the history. A worker that
// stops without a word (kill -9, a lost machine) is seen by its heartbeat:
// the run is degraded, says which worker stopped and when, and keeps all
// the others measured.
type Worker struct {
	// RunID is the distributed run's id, the same for every worker.
	RunID string
	// Segment is this worker's index and the count of workers.
	Segment plan.Segment
	// JoinTimeout bounds the wait for every worker to register (default
	// 2m).
	JoinTimeout time.Duration
}

// pollEvery is how often a worker waiting for the others looks at the
// history.
const pollEvery = 50 * time.Millisecond

// startMargin is how far ahead of the moment all workers are ready the
// load's start is set: time for each to see it.
const startMargin = 300 * time.Millisecond

// coordinator is a worker's side of a distributed run, in the history
// (engine.Coordinator).
type coordinator struct {
	st     *store.Store
	w      Worker
	part   string
	host   string
	stderr io.Writer
	// cancel stops this worker's load: another worker aborted the run.
	cancel context.CancelFunc
	// merges is set once this worker has claimed teardown: it merges
	// the run.
	merges bool

	stopBeat func()
	mu       sync.Mutex
	aborted  string // why another worker aborted the run

	// The thresholds marked abort, judged on the whole run by the
	// running worker of the lowest index (judgeWhole), and the stage this
	// worker is in.
	aborts []*plan.Threshold
	stage  atomic.Pointer[stageRef]
	whole  *wholeStage // the beat's goroutine's own
}

// stageRef is the stage a worker is in.
type stageRef struct {
	index int
	name  string
	load  []metrics.Load // this worker's share: which scenarios are open models
}

// joinRun registers this worker and makes its part's directory.
func joinRun(st *store.Store, cfg Config, p *plan.Plan, start time.Time) (*coordinator, *results.Writer, error) {
	w := *cfg.Worker
	if err := results.CheckRunID(w.RunID); err != nil {
		return nil, nil, fmt.Errorf("a distributed run needs --run-id, the same for every worker: %w", err)
	}
	if w.JoinTimeout <= 0 {
		w.JoinTimeout = 2 * time.Minute
	}
	part := store.PartID(w.RunID, w.Segment.Index)
	rd, err := results.CreateDir(filepath.Join(cfg.Out, part), part, p.Name, start, p.KeptSource(), cfg.Labels, p.KeptIncluded()...)
	if err != nil {
		return nil, nil, err
	}
	// What every worker must run alike: the plan's text and the files it
	// includes, the values set from outside, and the interval (sized to
	// the stages' lengths, which may read the environment): the workers'
	// intervals are merged by their place in the stage. Its hash is
	// stored: secrets are left out of it, as the history keeps them (a
	// guess at a password is not checked against it).
	sets := make([]string, 0, len(cfg.Overrides))
	for _, o := range cfg.Overrides {
		sets = append(sets, o.Name+"="+o.Kept())
	}
	slices.Sort(sets)
	kept := p.KeptIncluded()
	sig := string(p.KeptSource()) + "\nincludes " + store.PlanHash(nil, kept...) + "\n--set " + strings.Join(sets, "\n--set ") + "\ninterval " + p.Interval.D.String()
	if _, err := st.Join(w.RunID, w.Segment.Index, w.Segment.Count, p.Name, p.KeptSource(), sig, start, cfg.Labels, kept...); err != nil {
		rd.Close()
		os.RemoveAll(rd.Path)
		return nil, nil, err
	}
	host, _ := os.Hostname()
	c := &coordinator{st: st, w: w, part: part, host: host, stderr: cfg.Stderr}
	for _, t := range p.Thresholds {
		if t.Abort {
			c.aborts = append(c.aborts, t)
		}
	}
	return c, rd, nil
}

// start says this worker is alive every store.WorkerBeat, and stops its
// load (cancel) when another worker aborts the run.
func (c *coordinator) start(cancel context.CancelFunc) {
	c.cancel = cancel
	c.stopBeat = every(store.WorkerBeat, c.beat)
}

// beat says this worker is alive, hears of an abort (and stops the load),
// and judges the abort thresholds on the whole run if none has aborted it.
func (c *coordinator) beat() {
	c.st.Beat(c.w.RunID, c.w.Segment.Index) // a missed beat is no loss: the next one may pass
	d, err := c.st.Distributed(c.w.RunID)
	switch {
	case err != nil:
	case d.Abort == "":
		if len(c.aborts) > 0 {
			c.judgeWhole()
		}
	default:
		c.mu.Lock()
		first := c.aborted == ""
		c.aborted = d.Abort
		c.mu.Unlock()
		if first {
			fmt.Fprintf(c.stderr, "perflab: the run is stopped: %s (its results and teardown still follow)\n", d.Abort)
			c.cancel()
		}
	}
}

func (c *coordinator) stop() {
	if c.stopBeat != nil {
		c.stopBeat()
	}
}

// abort stops every worker of the run, saying why.
func (c *coordinator) abort(why string) {
	c.mu.Lock()
	c.aborted = why
	c.mu.Unlock()
	if err := c.st.Abort(c.w.RunID, why); err != nil {
		fmt.Fprintf(c.stderr, "perflab: store: %v: the other workers are not stopped\n", err)
	}
}

// abortedBy is why the run stopped itself, if it did: a threshold failed
// on the whole ("aborted: ..."), or a worker did not join. Every worker's
// part says it, and fails: the run was not stopped by its user. Nil-safe:
// "" for a run of one generator.
func (c *coordinator) abortedBy() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.aborted
}

// stored says this worker has stored interval ivl of its stage: the whole
// run's intervals up to the lowest any running worker has stored are
// whole, and judged.
func (c *coordinator) stored(ivl int) {
	c.st.Stored(c.w.RunID, c.w.Segment.Index, ivl) // a lost one is no loss: the next says more
}

// stageStarted notes the stage this worker's load is in.
func (c *coordinator) stageStarted(ph *metrics.Phase) {
	c.stage.Store(&stageRef{index: ph.Index, name: ph.Name, load: ph.Load})
}

// wholeStage is a stage of the whole run so far, merged from the
// intervals its workers have stored: each operation's counts and
// latencies, added as new intervals come.
type wholeStage struct {
	index      int
	whole      int            // the last interval merged from every worker
	seen       map[string]int // per part, the last interval merged
	ops        map[wholeKey]*wholeOp
	order      []wholeKey
	start, end time.Time
}

type wholeKey struct{ scenario, name, kind string }

type wholeOp struct {
	// h is the successful operations' latency, ko the failed ones' (nil
	// until one failed).
	h, ko                *hdr.Histogram
	count, errs, dropped int64
	start, end           time.Time
}

// judgeWhole judges the abort thresholds on the whole run's current stage
// so far, if this worker is the one to (the running worker of the lowest
// index), and stops every worker when one fails. The figures are those of
// the stored intervals, merged: up to an interval behind the load.
func (c *coordinator) judgeWhole() {
	ref := c.stage.Load()
	if ref == nil || c.abortedBy() != "" {
		return
	}
	ws, err := c.workers()
	if err != nil {
		return
	}
	now := time.Now()
	for _, w := range ws {
		if w.State == store.WorkerRunning && !w.Dead(c.host, now) {
			if w.Index != c.w.Segment.Index {
				return // another judges
			}
			break
		}
	}
	ws2 := c.whole
	if ws2 == nil || ws2.index != ref.index {
		ws2 = &wholeStage{index: ref.index, seen: map[string]int{}, ops: map[wholeKey]*wholeOp{}, whole: -1}
		c.whole = ws2
	}
	// The intervals every worker has stored: those up to the lowest last
	// interval of a worker still in the stage (one past it has all of
	// them; one ended or dead has stored all it will).
	whole := math.MaxInt
	for _, w := range ws {
		switch {
		case w.State != store.WorkerRunning || w.Dead(c.host, now) || w.Stage > ref.index:
		case w.Stage < ref.index:
			whole = -1
		default:
			whole = min(whole, w.Interval)
		}
	}
	if whole <= ws2.whole {
		return // nothing new is whole
	}
	for _, w := range ws {
		after, ok := ws2.seen[w.Part]
		if !ok {
			after = -1
		}
		rows, err := c.st.StageIntervals(w.Part, ref.index, after, whole)
		if err != nil {
			return
		}
		for _, h := range rows {
			k := wholeKey{h.Scenario, h.Operation, h.Kind}
			op := ws2.ops[k]
			if op == nil {
				op = &wholeOp{h: metrics.NewHistogram(), start: h.Start, end: h.End}
				ws2.ops[k] = op
				ws2.order = append(ws2.order, k)
			}
			if metrics.DecodeInto(op.h, []byte(h.Encoded)) != nil {
				continue
			}
			if h.Failed != "" {
				if op.ko == nil {
					op.ko = metrics.NewHistogram()
				}
				if metrics.DecodeInto(op.ko, []byte(h.Failed)) != nil {
					continue
				}
			}
			op.count += h.Count
			op.errs += h.Errors
			op.dropped += h.Dropped
			op.start, op.end = minTime(op.start, h.Start), maxTime(op.end, h.End)
			if ws2.start.IsZero() || h.Start.Before(ws2.start) {
				ws2.start = h.Start
			}
			ws2.end = maxTime(ws2.end, h.End)
		}
		ws2.seen[w.Part] = whole
	}
	ws2.whole = whole
	var ops []results.Operation
	for _, k := range ws2.order {
		op := ws2.ops[k]
		o := results.Operation{Name: k.name, Kind: metrics.Kind(k.kind), Scenario: k.scenario,
			Summary: metrics.SummarizeHistogram(op.h, op.ko, op.count, op.errs, op.end.Sub(op.start))}
		o.Dropped = op.dropped
		ops = append(ops, o)
	}
	r := judge.EarlyOps(c.aborts, ref.name, ref.load, ops, ws2.end.Sub(ws2.start))
	if r == nil {
		return
	}
	why := fmt.Sprintf("aborted: threshold %q failed on %s in %s, judged on the whole run so far", r.Threshold, r.Operation, r.Stage)
	fmt.Fprintf(c.stderr, "perflab: %s: stopping every worker (the results and teardown still follow)\n", why)
	c.abort(why)
	c.cancel()
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// workers reads the workers, and which are dead.
func (c *coordinator) workers() ([]store.Worker, error) {
	return c.st.Workers(c.w.RunID)
}

// Join waits until every worker has registered, for JoinTimeout; the
// first worker to give up stops the others waiting.
func (c *coordinator) Join(ctx context.Context) error {
	err := c.waitJoined(ctx)
	if err != nil && ctx.Err() == nil {
		c.abort(err.Error())
	}
	return err
}

func (c *coordinator) waitJoined(ctx context.Context) error {
	deadline := time.Now().Add(c.w.JoinTimeout)
	for {
		ws, err := c.workers()
		if err == nil && len(ws) == c.w.Segment.Count {
			return nil
		}
		if d, err := c.st.Distributed(c.w.RunID); err == nil && d.Abort != "" {
			return errors.New(d.Abort)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not join run %s within %v: the run does not start (are they all given --run-id %s and this history?)",
				missing(ws, c.w.Segment.Count), c.w.RunID, c.w.JoinTimeout, c.w.RunID)
		}
		if !sleep(ctx, pollEvery) {
			// Stopped by another worker giving up (beat heard it), or by
			// the user.
			if d, err := c.st.Distributed(c.w.RunID); err == nil && d.Abort != "" {
				return errors.New(d.Abort)
			}
			return ctx.Err()
		}
	}
}

// missing names the workers not among ws: "worker 2 of 3", "workers 1, 2
// of 3".
func missing(ws []store.Worker, count int) string {
	var idx []string
	for i := range count {
		if !slices.ContainsFunc(ws, func(w store.Worker) bool { return w.Index == i }) {
			idx = append(idx, fmt.Sprint(i))
		}
	}
	if len(idx) == 1 {
		return fmt.Sprintf("worker %s of %d", idx[0], count)
	}
	return fmt.Sprintf("workers %s of %d", strings.Join(idx, ", "), count)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Setup runs setup on the first worker to claim it; the others wait for
// its values.
func (c *coordinator) Setup(ctx context.Context, run func() (map[string]string, error)) (map[string]string, error) {
	mine, err := c.st.ClaimSetup(c.w.RunID)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if mine {
		vars, err := run()
		if serr := c.st.SetupDone(c.w.RunID, vars, err); serr != nil && err == nil {
			err = fmt.Errorf("store: %w", serr)
		}
		return vars, err
	}
	for {
		d, err := c.st.Distributed(c.w.RunID)
		if err == nil {
			switch d.Setup {
			case "ok":
				return d.SetupVars, nil
			case "failed":
				return nil, fmt.Errorf("on another worker: %s", d.SetupError)
			}
			if d.Abort != "" {
				return nil, errors.New(d.Abort)
			}
		}
		if !sleep(ctx, pollEvery) {
			return nil, ctx.Err()
		}
		if ws, err := c.workers(); err == nil && len(c.live(ws)) == 0 {
			return nil, errors.New("every worker that could run setup has stopped")
		}
	}
}

// live is the workers that are not dead.
func (c *coordinator) live(ws []store.Worker) []store.Worker {
	now := time.Now()
	return slices.DeleteFunc(slices.Clone(ws), func(w store.Worker) bool { return w.Dead(c.host, now) })
}

// Stage waits until every worker still running has reached stage index;
// the first stage starts at one time decided for all.
func (c *coordinator) Stage(ctx context.Context, index int) error {
	if err := c.st.SetStage(c.w.RunID, c.w.Segment.Index, index); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	for {
		ws, err := c.workers()
		if err == nil && c.allPast(ws, func(w store.Worker) bool { return w.Stage >= index || w.State != store.WorkerRunning }) {
			break
		}
		if !sleep(ctx, pollEvery) {
			return ctx.Err()
		}
	}
	if index > 1 {
		return nil
	}
	at, err := c.st.SetStart(c.w.RunID, time.Now().Add(startMargin))
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	// A clock far from the deciding worker's must not hold the load back
	// for long: at most maxStartWait.
	if d := min(time.Until(at), maxStartWait); d > 0 && !sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// maxStartWait bounds a worker's wait for the common start.
const maxStartWait = 5 * time.Second

// allPast reports whether every worker but this one is dead or past the
// point ok says.
func (c *coordinator) allPast(ws []store.Worker, ok func(store.Worker) bool) bool {
	now := time.Now()
	for _, w := range ws {
		if w.Index != c.w.Segment.Index && !w.Dead(c.host, now) && !ok(w) {
			return false
		}
	}
	return true
}

// interruptedWait is how long a worker whose own load was interrupted
// waits for the others' to end before it leaves teardown to them.
const interruptedWait = 10 * time.Second

// Teardown says this worker's load has ended, waits for the others', and
// runs teardown if this worker is the first to claim it (it then merges
// the run).
func (c *coordinator) Teardown(ctx context.Context, run func()) {
	if err := c.st.SetWorker(c.w.RunID, c.w.Segment.Index, store.WorkerEnded); err != nil {
		fmt.Fprintf(c.stderr, "perflab: store: %v\n", err)
	}
	var deadline time.Time
	if ctx.Err() != nil {
		deadline = time.Now().Add(interruptedWait)
	}
	for {
		ws, err := c.workers()
		if err == nil && c.allPast(ws, func(w store.Worker) bool { return w.State != store.WorkerRunning }) {
			break
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			fmt.Fprintf(c.stderr, "perflab: the other workers are still running: one of them runs teardown and merges the run\n")
			return
		}
		time.Sleep(4 * pollEvery)
	}
	mine, err := c.st.ClaimTeardown(c.w.RunID, c.w.Segment.Index)
	if err != nil {
		fmt.Fprintf(c.stderr, "perflab: store: %v: teardown is left to another worker\n", err)
		return
	}
	if mine {
		c.merges = true
		run()
	}
}

// finished records that this worker's part is in the history (or that it
// has none to merge).
func (c *coordinator) finished(recorded bool) {
	state := store.WorkerFinished
	if !recorded {
		state = store.WorkerFailed
	}
	if err := c.st.SetWorker(c.w.RunID, c.w.Segment.Index, state); err != nil {
		fmt.Fprintf(c.stderr, "perflab: store: %v\n", err)
	}
}

// merge waits for every part of the run to be recorded (or its worker to
// be dead), merges the parts, judges the plan's thresholds on the whole,
// writes the run's directory under cfg.Out, completes the run in the
// history and prints its tables.
func (c *coordinator) merge(p *plan.Plan, cfg Config) (*Result, error) {
	stdout, stderr := cfg.Stdout, cfg.Stderr
	id := c.w.RunID
	var ws []store.Worker
	for {
		var err error
		ws, err = c.workers()
		if err == nil && c.allPast(ws, func(w store.Worker) bool { return w.State == store.WorkerFinished || w.State == store.WorkerFailed }) {
			break
		}
		time.Sleep(4 * pollEvery)
	}
	now := time.Now()
	var parts []*results.Run
	var infos []results.WorkerInfo
	var gone []string
	for _, w := range ws {
		info := results.WorkerInfo{Index: w.Index, Part: w.Part, Host: w.Host, PID: w.PID, End: w.Ended}
		switch {
		case w.State == store.WorkerFinished:
			r, err := results.FromStore(c.st, w.Part)
			if err != nil {
				info.Status = store.WorkerFailed
				gone = append(gone, fmt.Sprintf("worker %d's part %s could not be read (%v)", w.Index, w.Part, err))
				break
			}
			info.Status = r.Summary.Status
			r.Part = fmt.Sprintf("w%d", w.Index) // its monitors: generator#w2
			parts = append(parts, r)
		case w.State == store.WorkerFailed:
			info.Status = metrics.StatusFailed
			gone = append(gone, fmt.Sprintf("worker %d (%s, pid %d) could not record its part in the history: its share of the load is missing here; its run directory on %s has it (perflab import)",
				w.Index, w.Host, w.PID, w.Host))
		case w.Dead(c.host, now):
			info.Status, info.End = metrics.StatusKilled, w.Heartbeat
			gone = append(gone, fmt.Sprintf("worker %d (%s, pid %d) stopped at %s without recording its part: its share of the load is missing; what it measured until then is in part %s",
				w.Index, w.Host, w.PID, info.End.Format("15:04:05"), w.Part))
		}
		infos = append(infos, info)
	}
	if len(parts) == 0 {
		why := "no worker recorded its part: " + strings.Join(gone, "; ")
		c.st.FailRun(id, why)
		return nil, errors.New(why)
	}
	m, err := results.Merge(parts)
	if err != nil {
		c.st.FailRun(id, err.Error())
		return nil, err
	}
	s := m.Summary
	s.RunID, s.Workers = id, infos
	s.Labels = maps.Clone(cfg.Labels)
	if len(gone) > 0 {
		s.Warnings = append(s.Warnings, gone...)
		if s.Status == metrics.StatusCompleted || s.Status == metrics.StatusInterrupted {
			s.Status = metrics.StatusDegraded
			s.Error = strings.Join(gone, "; ")
		}
	}
	judge.Generator(s, 0)
	judgeDrift(s, stderr, func() (*results.Run, error) { return m, nil })
	s.Thresholds = judge.Thresholds(p.Thresholds, s)
	s.Thresholds = append(s.Thresholds, regressions(p.Thresholds, p.Name, c.st, id, func() (*results.Run, error) { return m, nil })...)
	dir := filepath.Join(cfg.Out, id)
	if err := results.WriteDir(m, dir); err != nil {
		c.st.FailRun(id, "writing the merged run: "+err.Error())
		return nil, err
	}
	res := &Result{RunID: id, Dir: dir, Summary: s}
	var lost []string
	if err := report.WriteRunFiles(dir, s); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
		lost = append(lost, fmt.Sprintf("summary.txt or junit.xml (%v)", err))
	}
	fmt.Fprintf(stdout, "\nrun %s: %d workers merged\n", id, len(parts))
	if err := report.WriteTable(stdout, s); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
	}
	report.WriteThresholds(stdout, p.Thresholds, s.Thresholds)
	if err := results.Complete(c.st, dir); err != nil {
		fmt.Fprintf(stderr, "perflab: store: %v\n", err)
		lost = append(lost, fmt.Sprintf("the run history (%v)", err))
	}
	fmt.Fprintf(stderr, "run %s %s: %d of %d workers merged; results in %s\n", id, s.StatusLine(), len(parts), c.w.Segment.Count, dir)
	switch {
	case len(lost) > 0:
		res.Outcome, res.Lost = Failed, lost
		res.Err = fmt.Errorf("the run's results were not all recorded: %s", strings.Join(lost, "; "))
		fmt.Fprintf(stderr, "perflab: %v\n", res.Err)
	case s.Status == metrics.StatusFailed && strings.HasPrefix(s.Error, "aborted"):
		fmt.Fprintf(stderr, "perflab: %s\n", s.Error)
		res.Outcome = ThresholdsFailed
	case s.Status == metrics.StatusFailed, s.Status == metrics.StatusDegraded:
		res.Outcome, res.Err = Failed, errors.New(s.Error)
		fmt.Fprintf(stderr, "perflab: %v\n", res.Err)
	case s.Status == metrics.StatusInterrupted:
		res.Outcome = Interrupted
	case results.Failed(s.Thresholds) > 0:
		fmt.Fprintf(stderr, "perflab: %d threshold(s) failed\n", results.Failed(s.Thresholds))
		res.Outcome = ThresholdsFailed
	}
	return res, nil
}
