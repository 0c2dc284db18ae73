package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
)

// Options controls a run.
type Options struct {
	// RunID names the run; it is ${run_id} in templates.
	RunID string
	// Sink, if set, returns where a phase's finished intervals go.
	Sink func(ph *metrics.Phase) metrics.Sink
	// OnTick is called about once per Tick while a stage runs, from the
	// collector's goroutine; it must not keep t.
	OnTick func(ph *metrics.Phase, t *metrics.Tick)
	// OnEvent receives one-line notes: stage started, setup failed, ...
	OnEvent func(msg string)
	// Requests receives requests.csv, the requests of the steps marked
	// correlate (nil: none is written).
	Requests io.Writer
	// Failures, if set, receives failed HTTP requests and their
	// responses (failures.jsonl), while it has room.
	Failures *phttp.FailureLog
	// Steps bind step names to functions run in-process instead of the
	// steps' requests (embedded mode); a plan's call steps need one each.
	Steps map[string]StepFunc
	// OnStage, if set, is called as each stage's load starts and as it
	// ends, such as to sample the monitors at the stage's edges.
	OnStage func(ph *metrics.Phase, end bool)
	// Tick is how often progress is refreshed (default 1s).
	Tick time.Duration
	// Grace is how long an interrupted run waits for requests in flight
	// before it stops waiting (default 5s).
	Grace time.Duration
	// TeardownTimeout bounds teardown after an interrupt (default 2m).
	TeardownTimeout time.Duration
	// Seed makes random choices reproducible (0: time-based).
	Seed uint64
	// Segment, unless whole, runs this worker's share of every scenario
	// of a distributed run (plan.Segment): VUs, shared iterations,
	// arrivals and sequential data rows.
	Segment plan.Segment
	// Coordinator, if set, joins the run to the other workers of a
	// distributed run: setup once for all, a barrier before each stage,
	// teardown once after all.
	Coordinator Coordinator
}

// Coordinator joins a worker's run to the other workers of a distributed
// run (package lab keeps one in the run history).
type Coordinator interface {
	// Join blocks until every worker has joined the run; an error (a
	// worker missing) stops the run before setup.
	Join(ctx context.Context) error
	// Setup runs setup once for all the workers: run (the plan's setup)
	// on the worker chosen for it, whose extracted values reach the
	// others as Setup's result; the others wait for them. An error is a
	// setup that failed, on whichever worker ran it.
	Setup(ctx context.Context, run func() (map[string]string, error)) (map[string]string, error)
	// Stage blocks until the workers still running are ready to start
	// stage index (from 1), so that their loads start together; an error
	// (a worker missing at the start) stops the run.
	Stage(ctx context.Context, index int) error
	// Teardown is called once this worker's load has ended (ctx may be
	// cancelled): it waits for the other workers' loads to end and calls
	// run (the plan's teardown) if this worker is the one to run it.
	Teardown(ctx context.Context, run func())
}

// ErrSetupFailed means a setup step failed and the load did not run.
var ErrSetupFailed = errors.New("setup failed")

// Run executes the plan and returns everything measured, whatever happens:
// on interrupt (ctx cancelled) or setup failure the run is marked so and
// teardown still runs. The error is non-nil when the run could not complete.
func Run(ctx context.Context, p *plan.Plan, opts Options) (*metrics.Run, error) {
	if err := p.ReadData(); err != nil { // validation kept none of the data files
		return nil, err
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 5 * time.Second
	}
	if opts.TeardownTimeout <= 0 {
		opts.TeardownTimeout = 2 * time.Minute
	}
	if opts.Seed == 0 {
		opts.Seed = uint64(time.Now().UnixNano())
	}
	if !opts.Segment.Whole() { // the workers of a run pick their own random rows
		opts.Seed ^= uint64(opts.Segment.Index+1) * 0x9e3779b97f4a7c15
	}
	if opts.OnEvent == nil {
		opts.OnEvent = func(string) {}
	}
	r := &runner{p: p, opts: opts, client: newClient(p, opts.Failures), requests: newRequestLog(opts.Requests)}
	defer func() {
		if err := r.requests.flush(); err != nil {
			opts.OnEvent("requests.csv: " + err.Error())
		}
	}()
	defer r.client.CloseIdleConnections()
	return r.run(ctx)
}

// rootCAs are the certificate authorities of the plan's http.ca_file, for
// every protocol's TLS; nil: the system's.
func rootCAs(p *plan.Plan) *x509.CertPool {
	if len(p.HTTP.CAs) == 0 {
		return nil
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.HTTP.CAs)
	return roots
}

// tlsConfig is the plan's TLS settings (http.ca_file,
// http.insecure_skip_verify) for its gRPC and WebSocket connections.
func tlsConfig(p *plan.Plan) *tls.Config {
	return &tls.Config{RootCAs: rootCAs(p), InsecureSkipVerify: p.HTTP.InsecureSkipVerify} //nolint:gosec // the plan's choice, for test systems
}

func newClient(p *plan.Plan, failures *phttp.FailureLog) *phttp.Client {
	maxConns := p.HTTP.MaxConnsPerHost
	if maxConns == 0 {
		for _, st := range p.Stages() {
			vars := p.VarsFor(st)
			total := 0
			for _, sc := range p.Scenarios {
				l, _ := sc.LoadFor(vars)
				total += l.Peak()
			}
			maxConns = max(maxConns, total+16)
		}
	}
	keep := p.HTTP.KeepAlive == nil || *p.HTTP.KeepAlive
	roots := rootCAs(p)
	var st *phttp.ServerTime
	if p.HTTP.ServerTime != nil {
		st = &phttp.ServerTime{Header: p.HTTP.ServerTime.Header, Metric: p.HTTP.ServerTime.Metric}
	}
	return phttp.NewClient(phttp.Options{
		Timeout: p.HTTP.Timeout.D, ConnectTimeout: p.HTTP.ConnectTimeout.D, KeepAlive: keep, MaxConnsPerHost: maxConns,
		InsecureSkipVerify: p.HTTP.InsecureSkipVerify, RootCAs: roots, UserAgent: "perflab", HTTP2: p.HTTP.Version == "2", PerVU: p.HTTP.Connections == "per-vu",
		ServerTime: st, BodyLimit: p.HTTP.BodyLimit.N, ParseLimit: p.HTTP.ParseLimit.N, Cookies: p.HTTP.Cookies, Failures: failures,
	})
}

type runner struct {
	p      *plan.Plan
	opts   Options
	client *phttp.Client
	msg    *messaging
	// requests is requests.csv, for the steps marked correlate.
	requests *requestLog
	// setupVars are values extracted by setup, visible to stages and teardown.
	setupVars map[string]string
	// host is what the generator's host lets the run open, read before
	// setup: each stage's load is checked against it (limits.go).
	host hostLimits
}

func (r *runner) run(ctx context.Context) (*metrics.Run, error) {
	p := r.p
	run := &metrics.Run{
		ID: r.opts.RunID, PlanName: p.Name, PlanFile: p.File, PlanSource: p.KeptSource(), PlanIncludes: p.KeptIncluded(),
		Interval: p.Interval.D, Start: time.Now(), Status: metrics.StatusCompleted,
	}
	for _, v := range p.Vars {
		run.Vars = append(run.Vars, metrics.Var{Name: v.Name, Values: v.Kept(), Swept: v.Swept()})
	}
	r.setupVars = map[string]string{}
	var runErr error
	stages := p.Stages()
	if len(p.Buses) > 0 || len(p.Simulators) > 0 || p.GRPC != nil || p.HasWS() {
		m, err := startMessaging(ctx, p, r.opts.Seed)
		if err != nil {
			run.End, run.Status, run.Error = time.Now(), metrics.StatusFailed, err.Error()
			return run, err
		}
		r.msg = m
		defer func() { run.Simulators = m.close() }()
	}
	r.host = readHostLimits()

	// Teardown must run even when the load is interrupted: it gets a context
	// of its own.
	teardown := func(st plan.Stage) {
		if len(p.Teardown) == 0 {
			return
		}
		tctx, cancel := context.WithTimeout(context.Background(), r.opts.TeardownTimeout)
		defer cancel()
		ph, err := r.phase(tctx, "teardown", p.Teardown, st)
		run.Teardown = append(run.Teardown, ph)
		if err != nil {
			r.opts.OnEvent("teardown: " + err.Error())
		}
	}

	coord := r.opts.Coordinator
	if coord != nil {
		if err := coord.Join(ctx); err != nil {
			if ctx.Err() == nil {
				runErr = err
			}
			stages = nil
		}
	}
	if !p.SetupPerStage && len(p.Setup) > 0 && (runErr == nil && ctx.Err() == nil || coord == nil) {
		setup := func() (map[string]string, error) {
			ph, err := r.phase(ctx, "setup", p.Setup, stages[0])
			run.Setup = append(run.Setup, ph)
			return r.setupVars, err
		}
		var err error
		if coord != nil {
			var vals map[string]string
			if vals, err = coord.Setup(ctx, setup); err == nil {
				r.setupVars = vals
			}
		} else {
			_, err = setup()
		}
		if err != nil {
			runErr = fmt.Errorf("%w: %v", ErrSetupFailed, err)
			stages = nil
		}
	}
	for _, st := range stages {
		if ctx.Err() != nil {
			break
		}
		if coord != nil {
			if err := coord.Stage(ctx, st.Index); err != nil {
				if ctx.Err() == nil {
					runErr = err
				}
				break
			}
		}
		if p.SetupPerStage && len(p.Setup) > 0 {
			ph, err := r.phase(ctx, "setup", p.Setup, st)
			ph.Name = "setup " + st.Name()
			run.Setup = append(run.Setup, ph)
			if err != nil {
				runErr = fmt.Errorf("%w (stage %s): %v", ErrSetupFailed, st.Name(), err)
				teardown(st)
				break
			}
		}
		ph, err := r.stage(ctx, st, len(stages))
		run.Stages = append(run.Stages, ph)
		if err != nil {
			runErr = err
		}
		if p.SetupPerStage {
			teardown(st)
		}
		if err != nil {
			break
		}
	}
	switch {
	case coord != nil:
		coord.Teardown(ctx, func() { teardown(plan.Stage{}) })
	case !p.SetupPerStage:
		teardown(plan.Stage{})
	}
	run.End = time.Now()
	switch {
	case ctx.Err() != nil:
		// An interrupt is not a failure, even when it cut setup short.
		run.Status = metrics.StatusInterrupted
		if runErr != nil {
			run.Error = runErr.Error()
		}
		return run, nil
	case runErr != nil:
		run.Status, run.Error = metrics.StatusFailed, runErr.Error()
	}
	return run, runErr
}

// baseVars is what every template of a stage sees besides built-ins.
func (r *runner) baseVars(st plan.Stage) map[string]string {
	m := r.p.VarsFor(st)
	for k, v := range r.setupVars {
		m[k] = v
	}
	return m
}

// stage runs the scenarios of one stage: at the same time, or one after
// another when the plan says consecutive.
func (r *runner) stage(ctx context.Context, st plan.Stage, nStages int) (*metrics.Phase, error) {
	base := r.baseVars(st)
	scens, lay, err := compileStage(r.p, r.msg, r.opts.Steps, base, r.opts.Segment)
	if err == nil {
		var closeAwaiters func()
		if closeAwaiters, err = openAwaiters(ctx, scens); err == nil {
			defer closeAwaiters()
		}
	}
	ph := &metrics.Phase{Index: st.Index, Name: st.Name(), Start: time.Now()}
	for _, d := range st.Values {
		ph.Values = append(ph.Values, metrics.KV{Name: d.Name, Value: d.Values[0]})
	}
	if err != nil {
		ph.End, ph.Error = ph.Start, err.Error()
		return ph, err
	}
	ph.Ops = lay.ops
	totalVUs := 0
	var desc []string
	for _, s := range scens {
		totalVUs += s.Peak()
		// A worker's load is its share: the parts' loads add up to the plan's.
		l := metrics.Load{
			Scenario: s.sc.Name, VUs: s.VUs, Iterations: s.Iterations, TotalIterations: s.seg.Share(s.TotalIterations),
			Duration: s.Length(), DurationS: s.Length().Seconds(), RampUpS: s.RampUp.Seconds(),
		}
		if s.Open() {
			l.Open, l.Rate, l.MaxVUs = true, s.Rate, s.MaxVUs
			if n := len(s.RampRate); n > 0 {
				l.Rate = s.RampRate[n-1].Target
			}
			if !s.seg.Whole() {
				l.Rate /= float64(s.seg.Count)
			}
		}
		if whole, err := s.sc.LoadFor(base); err == nil { // the plan's, not this worker's share
			l.Model = whole.String()
		}
		s.engine, s.why = chooseEngine(r.p, s, base)
		l.Engine, l.EngineWhy = s.engine, s.why
		ph.Load = append(ph.Load, l)
		d := s.sc.Name + " " + s.Workload.String() + " on " + engineText(s.engine)
		if s.why != "" {
			d += " (" + s.why + ")"
		}
		desc = append(desc, d)
	}
	open := false
	for _, s := range scens {
		open = open || s.Open()
	}
	rec := metrics.NewRecorder(lay.ops, min(max(totalVUs, 1), 2*runtime.GOMAXPROCS(0)), open)
	r.opts.OnEvent(fmt.Sprintf("stage %d/%d %s: %s", st.Index, nStages, st.Name(), strings.Join(desc, "; ")))
	ph.Limits = checkLimits(st, stageSockets(r.p, scens, base), r.host)
	for _, l := range ph.Limits {
		r.opts.OnEvent("warning: " + l.Sentence)
	}

	var sink metrics.Sink
	if r.opts.Sink != nil {
		sink = r.opts.Sink(ph)
	}
	// The stage starts now, its bookkeeping done: open models' due times
	// and every deadline count from here. Monitors mark the start after it
	// (their samples are stamped when read), so the stage's window holds
	// its first sample.
	ph.Start = time.Now()
	if r.opts.OnStage != nil {
		r.opts.OnStage(ph, false)
		defer r.opts.OnStage(ph, true)
	}
	// Nothing watching the ticks (no progress display, no live figures),
	// the recorder is drained only as each interval closes: what perflab
	// does per second whatever the load is less by a drain a tick.
	var onTick func(*metrics.Tick)
	tick := r.p.Interval.D
	if r.opts.OnTick != nil {
		onTick = func(t *metrics.Tick) { r.opts.OnTick(ph, t) }
		tick = r.opts.Tick
	}
	col := metrics.NewCollector(rec, ph.Start, r.p.Interval.D, tick, sink, onTick)
	colCtx, stopCol := context.WithCancel(context.Background())
	var colWG sync.WaitGroup
	colWG.Add(1)
	go func() { defer colWG.Done(); col.Run(colCtx) }()

	data := newSources(r.p, r.opts.Segment)
	// Together (the default), every scenario runs from the stage's start;
	// consecutive, each from the end of the one before, in the plan's
	// order, as JMeter's thread groups run when its test plan says so.
	groups := [][]*scenario{scens}
	if r.p.Consecutive {
		groups = nil
		for _, s := range scens {
			groups = append(groups, []*scenario{s})
		}
	}
	ph.Spans = map[string]time.Duration{}
	workers := 0
	for _, g := range groups {
		start := ph.Start
		if r.p.Consecutive {
			start = time.Now()
		}
		ex := &executor{r: r, rec: rec, base: base, data: data, stage: st, start: start, workers: workers, inflight: newShardedCount()}
		ph.Abandoned += r.runTogether(ctx, ex, g, st)
		ex.mu.Lock()
		if ex.proc.Responses > 0 {
			if ph.Processing == nil {
				ph.Processing = &metrics.Processing{}
			}
			ph.Processing.Add(ex.proc)
		}
		ex.mu.Unlock()
		workers = ex.workers
		for name, d := range ex.spans(g) {
			ph.Spans[name] = d
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopCol()
	colWG.Wait()
	ph.End = time.Now()
	var sinkErr error
	ph.Totals, sinkErr = col.Stop(ph.End)
	dropIdleHops(ph, scens)
	pack(ph)
	if sinkErr != nil {
		return ph, fmt.Errorf("writing intervals: %w", sinkErr)
	}
	return ph, nil
}

// runTogether runs scenarios at the same time from ex.start, and returns
// once each has ended (or, interrupted, after the grace for requests in
// flight): the requests still in flight then, abandoned.
func (r *runner) runTogether(ctx context.Context, ex *executor, scens []*scenario, st plan.Stage) (abandoned int64) {
	var wg sync.WaitGroup
	ex.wg = &wg
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for _, s := range scens {
		// A scenario with a length ends at its deadline, think time and
		// iterations in progress included; requests in flight complete.
		sctx := ctx
		if l := s.Length(); l > 0 {
			var cancel context.CancelFunc
			sctx, cancel = context.WithDeadline(ctx, ex.start.Add(l))
			cancels = append(cancels, cancel)
		}
		ex.launch(sctx, ctx, s)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		// Interrupted: VUs stop after the request they are in; do not wait
		// for ever on a hung server.
		select {
		case <-done:
		case <-time.After(r.opts.Grace):
			abandoned = ex.abandoned()
			r.opts.OnEvent(fmt.Sprintf("stage %s: %d requests still in flight after %v; not waiting for them (counted as abandoned)", st.Name(), abandoned, r.opts.Grace))
		}
	}
	// Count what is left queued as dropped, even when VUs hung on a server
	// are not waited for: the pacers have closed their queues.
	for _, f := range ex.finish {
		f()
	}
	return abandoned
}

// pack packs a finished phase's totals (metrics.Stats.Pack): its intervals
// are written, and what the summary and the run history need at the end
// of the run unpacks from a few KB per operation, where the histograms
// themselves take about 190 KB each (up to four an operation). A sweep of
// 10,000 stages kept 0.7 MB per stage.
func pack(ph *metrics.Phase) {
	for _, st := range ph.Totals {
		st.Pack()
	}
}
