package engine

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"time"

	phttp "github.com/perflab/perflab/protocol/http"
)

// On event loops (the default engine where it can run a scenario:
// chooseEngine) a scenario's VUs are state machines on event loops
// (phttp.Loop, raw epoll), one loop per CPU, instead of a goroutine each:
// no goroutine is parked and woken per response, which is where a
// goroutine per VU spends its CPU beyond wrk's (bench/README.md). A VU
// runs the same flow as worker.iteration, steps, transaction and leaf, in
// the same order, with the same timing and recording; its waits (a
// response, a think time, the next arrival) are the loop's callbacks.
//
// The workload models are the goroutine executor's: closed (iterations,
// total iterations, duration, ramp-up), ramping VUs, and arrival rates. In
// an arrival-rate model each of the L loops paces every L-th arrival and
// owns 1/L of the VU pool, at least 64 VUs (one loop below 128); an arrival
// that finds its loop's VUs busy is dropped (or queued) even if another
// loop has one idle.

// evLoop is one loop's share of a scenario.
type evLoop struct {
	e   *executor
	s   *scenario
	l   *phttp.Loop
	ctx context.Context // the VUs': the scenario's, or an open model's iterations'
	k   int             // this loop's index among n
	n   int
	vus []*loopVU
	// live counts VUs that have not ended.
	live int
	// closed and ramping models
	shared *atomic.Int64 // total_iterations
	target *atomic.Int64 // ramp_vus
	// arrival-rate models
	sched   context.Context // the schedule's end
	p       pacer
	next    int64 // the next arrival this loop paces
	pacing  *phttp.Timer
	over    bool // no arrival is left to pace
	idle    []*loopVU
	backlog []arrival
	maxVUs  int
	made    int
}

// Positions of a loopVU.
const (
	pcNext     = iota // start the next iteration, if the model gives one
	pcWalk            // ask the cursor what to do (worker.next)
	pcStepDone        // a response arrived for the step in flight
	pcCut             // a wait was cut short by the end of the load
	pcDead
)

type loopVU struct {
	*worker
	el    *evLoop
	x     *phttp.Exchange
	timer *phttp.Timer
	onRes func(phttp.Result)
	index int   // the VU's number in the scenario (${vu})
	count int64 // iterations started (closed and ramping models)
	delay time.Duration

	pc      int
	waiting bool  // for a response, a timer or an arrival
	step    *node // the step in flight
	started time.Time
	t0      time.Time
	ended   time.Time // when the last iteration ended, if the next begins at once
	// a sleep in progress (its timer armed)
	sleepFrom time.Time
	moveDue   bool
	okPC      int
	failPC    int
}

// loops runs scenario s on event loops; ctx ends at the scenario's
// deadline, parent when the load is stopped.
func (e *executor) loops(ctx, parent context.Context, s *scenario) {
	n := runtime.GOMAXPROCS(0)
	top := s.VUs // this worker's VUs (plan.Segment); ramp targets are the plan's
	for _, r := range s.RampVUs {
		top = max(top, int(s.seg.Share(int64(math.Ceil(r.Target)))))
	}
	if s.Open() {
		top = max(s.VUs, s.MaxVUs)
		// Each loop paces its share of the arrivals with its share of
		// the VUs: a few VUs split over many loops would drop arrivals
		// that one pool of them could take.
		n = min(n, top/openVUsPerLoop)
	}
	n = max(1, min(n, top))
	vctx := ctx
	var p pacer
	if s.Open() {
		p = scenarioPacer(s)
		vctx = e.iterationContext(ctx, parent) // as in arrivals
	}
	var target *atomic.Int64
	if len(s.RampVUs) > 0 {
		target = e.rampTarget(ctx, s)
	}
	shared := &atomic.Int64{}
	e.endOf(s)
	// Every loop is made before any starts: a system out of descriptors
	// runs none of the scenario rather than a part.
	ls := make([]*phttp.Loop, n)
	for k := range n {
		l, err := e.r.client.NewLoop()
		if err != nil {
			for _, l := range ls[:k] {
				l.Close()
			}
			e.r.opts.OnEvent("scenario " + s.sc.Name + " did not run: " + err.Error())
			return
		}
		ls[k] = l
	}
	e.mu.Lock()
	e.evLoops = append(e.evLoops, ls...)
	e.mu.Unlock()
	for k, l := range ls {
		el := &evLoop{e: e, s: s, l: l, ctx: vctx, k: k, n: n, shared: shared, target: target, sched: ctx, p: p, next: int64(k)}
		for i := k + 1; i <= top; i += n {
			if s.Open() {
				if i <= s.MaxVUs || i <= s.VUs {
					el.maxVUs++
				}
				if i > s.VUs {
					continue
				}
			}
			v := el.newVU(s.vu(i))
			if !s.Open() {
				v.delay = s.rampUpDelay(v.index)
			}
		}
		loopsStarted.Add(1)
		l.Post(el.start)
		stopWake := context.AfterFunc(vctx, func() { l.Post(el.wakeSleepers) })
		stopSched := func() bool { return false }
		if s.Open() {
			stopSched = context.AfterFunc(ctx, func() { l.Post(el.scheduleEnded) })
		}
		e.spawnOwned(func() {
			l.Run()
			stopWake()
			stopSched()
			for _, v := range el.vus { // the loop, which ran them, has ended
				e.processed(v.worker)
			}
		})
	}
}

// openVUsPerLoop is the fewest VUs an arrival-rate model gives each of its
// loops; one loop sends over 100,000 requests a second.
const openVUsPerLoop = 64

// loopsStarted counts the event loops started, for tests.
var loopsStarted atomic.Int64

func (el *evLoop) newVU(index int) *loopVU {
	v := &loopVU{worker: el.e.bareWorker(el.s, index), el: el, x: el.l.NewExchange(), index: index}
	// A loop's VUs record in one shard, the loop's (there are at least as
	// many shards as loops): its thread takes that shard's lock only, and
	// the loops do not contend for each other's.
	v.shard = el.k
	v.onRes = v.response
	v.timer = el.l.NewTimer(v.wake)
	el.vus = append(el.vus, v)
	el.live++
	el.made++
	return v
}

// start runs on the loop: every VU begins, and an open model's pacing.
func (el *evLoop) start() {
	if el.p != nil {
		el.pacing = el.l.NewTimer(el.arrive)
		el.schedule()
		for _, v := range el.vus {
			v.pc, v.waiting = pcNext, true
			el.idle = append(el.idle, v)
		}
		if el.over {
			el.scheduleEnded()
		}
		return
	}
	for _, v := range el.vus {
		if v.delay > 0 {
			v.sleep(v.delay, false, pcNext, pcDead)
			continue
		}
		v.advance()
	}
	el.maybeStop() // a loop left without VUs (vus: 0) ends at once
}

// wakeSleepers ends every think time in progress: the VUs' context ended.
func (el *evLoop) wakeSleepers() {
	for _, v := range el.vus {
		if el.l.Cancel(v.timer) {
			v.waiting = false
			v.pc = v.failPC
			v.advance()
		}
	}
}

// vuEnded is called as each VU stops; the loop ends with the last.
func (el *evLoop) vuEnded(v *loopVU) {
	v.x.Close()
	el.live--
	el.e.ended(el.s)
	el.maybeStop()
}

func (el *evLoop) maybeStop() {
	if el.live == 0 && (el.p == nil || el.over) {
		for range el.backlog { // queued for VUs that have all stopped
			el.e.rec.Drop(0, el.s.iterOp)
		}
		el.backlog = nil
		el.l.Stop()
	}
}

// schedule arms the pacing timer for this loop's next arrival.
func (el *evLoop) schedule() {
	d, ok := el.p.Due(el.next)
	if !ok {
		el.over = true
		return
	}
	el.l.ScheduleAt(el.pacing, el.e.start.Add(d).Add(pacerLateness))
}

// arrive hands out every arrival that is due.
func (el *evLoop) arrive() {
	now := time.Now()
	for !el.over {
		d, ok := el.p.Due(el.next)
		if !ok {
			el.over = true
			break
		}
		due := el.e.start.Add(d)
		if due.Add(pacerLateness).After(now) { // as the goroutine pacer: each arrival that late
			el.schedule()
			return
		}
		if el.sched.Err() != nil {
			el.scheduleEnded()
			return
		}
		next := el.next + int64(el.n)
		if !el.dispatch(arrival{iter: el.s.iter(el.next), due: due}) {
			// Every VU is busy: so are they for this loop's arrivals
			// due since, dropped with it at once (as in arrivals).
			skip := nextOf(next, dueBefore(el.p, now.Sub(el.e.start)-pacerLateness), el.n)
			el.e.rec.DropN(0, el.s.iterOp, (skip-next)/int64(el.n))
			next = skip
		}
		el.next = next
	}
	// The schedule is over: idle VUs end; busy ones finish the backlog.
	el.releaseIdle()
	el.maybeStop()
}

// dispatch starts arrival a on a VU, or queues it, or drops it and returns
// false.
func (el *evLoop) dispatch(a arrival) bool {
	switch {
	case len(el.idle) > 0:
		v := el.idle[len(el.idle)-1]
		el.idle = el.idle[:len(el.idle)-1]
		v.begin(a.iter, a.due)
		v.advance()
	case el.made < el.maxVUs:
		v := el.newVU(el.s.vu(el.k + 1 + el.n*(el.made)))
		v.begin(a.iter, a.due)
		v.advance()
	case el.s.Queue && len(el.backlog) < maxBacklog/el.n:
		el.backlog = append(el.backlog, a)
		el.e.rec.Queue(0, el.s.iterOp)
	default:
		el.e.rec.Drop(0, el.s.iterOp)
		return false
	}
	return true
}

// scheduleEnded counts as dropped what was due and not started by the
// schedule's end, and ends the idle VUs.
func (el *evLoop) scheduleEnded() {
	if el.p == nil {
		return
	}
	if !el.over {
		end := time.Now()
		if dl, ok := el.sched.Deadline(); ok && dl.Before(end) {
			end = dl
		}
		next := nextOf(el.next, dueBefore(el.p, end.Sub(el.e.start)), el.n)
		el.e.rec.DropN(0, el.s.iterOp, (next-el.next)/int64(el.n))
		el.next = next
		el.l.Cancel(el.pacing)
		el.over = true
	}
	for range el.backlog {
		el.e.rec.Drop(0, el.s.iterOp)
	}
	el.backlog = nil
	el.releaseIdle()
	el.maybeStop()
}

func (el *evLoop) releaseIdle() {
	idle := el.idle
	el.idle = nil
	for _, v := range idle {
		v.waiting = false
		v.pc = pcDead
		v.advance()
	}
}

// advance runs the VU until it waits for something or ends.
func (v *loopVU) advance() {
	for !v.waiting {
		switch v.pc {
		case pcNext:
			v.nextIteration()
		case pcWalk:
			v.walk()
		case pcStepDone: // only response moves it on, with the result
			v.waiting = true
		case pcCut:
			v.endWith(end(true, false))
			v.pc = pcWalk
		case pcDead:
			v.setBusy(false)
			v.waiting = true
			v.el.vuEnded(v)
			return
		}
	}
}

// walk does what the cursor says (worker.iteration).
func (v *loopVU) walk() {
	a := v.next(v.ctx().Err() != nil)
	switch a.kind {
	case actStep:
		v.send(a.n)
	case actSleep:
		v.sleep(a.d, true, pcWalk, pcCut)
	case actEnd:
		v.endIteration(a.stop, a.complete)
	}
}

// nextIteration starts an iteration if the workload model gives one.
func (v *loopVU) nextIteration() {
	el, s := v.el, v.s
	if el.p != nil { // an arrival-rate model
		if len(el.backlog) > 0 {
			a := el.backlog[0]
			el.backlog = el.backlog[1:]
			v.begin(a.iter, a.due)
			return
		}
		if el.over {
			v.pc = pcDead
			return
		}
		v.waiting = true
		el.idle = append(el.idle, v)
		return
	}
	if v.ctx().Err() != nil {
		v.pc = pcDead
		return
	}
	if el.target != nil && int64(v.index) > el.target.Load() {
		v.setBusy(false)
		v.sleep(20*time.Millisecond, false, pcNext, pcDead)
		return
	}
	iter := v.count
	switch {
	case s.TotalIterations > 0:
		iter = s.iter(el.shared.Add(1) - 1)
		if iter >= s.TotalIterations {
			v.pc = pcDead
			return
		}
	case s.Iterations > 0 && v.count >= s.Iterations:
		v.pc = pcDead
		return
	}
	v.count++
	v.begin(iter, time.Time{})
}

func (v *loopVU) ctx() context.Context { return v.el.ctx }

// begin starts iteration iter, due at due in an open model (else zero);
// advance runs it.
func (v *loopVU) begin(iter int64, due time.Time) {
	if v.ended.IsZero() {
		v.started = time.Now()
	} else { // straight after the previous iteration: no need to read the clock again
		v.started, v.ended = v.ended, time.Time{}
	}
	v.t0 = v.started
	if !due.IsZero() {
		v.t0 = due
	}
	v.due = due
	v.worker.begin(iter)
	v.pc, v.waiting = pcWalk, false
	if v.el.p != nil && v.el.sched.Err() != nil {
		// handed out as the schedule ended: never started
		v.el.e.rec.Drop(0, v.s.iterOp)
		v.pc = pcDead
	}
}

// endIteration is the end of worker.iteration.
func (v *loopVU) endIteration(stop, complete bool) {
	// A closed model's VU stays counted in an iteration into its next,
	// which begins at once: nextIteration (or pcDead) uncounts it where
	// it does not. An open model's waits for its next arrival.
	if v.el.p != nil {
		v.setBusy(false)
	}
	if !complete && v.ctx().Err() != nil {
		v.pc = pcDead // cut short by the end of the load: not a whole iteration
		return
	}
	took := time.Since(v.started)
	if v.cur.detail == "" { // no call more for the common case
		v.rec.Record(v.shard, v.s.iterOp, took+v.started.Sub(v.t0), took, v.cur.first, 0)
	} else {
		v.recordFailedIteration(took+v.started.Sub(v.t0), took)
	}
	if stop {
		v.pc = pcDead
		return
	}
	v.pc = pcNext
	if v.el.p == nil {
		v.ended = v.started.Add(took)
	}
}

func (v *loopVU) send(n *node) {
	v.step = n
	v.pc, v.waiting = pcStepDone, true
	v.x.Send(n.req, v.vars, &v.scr, v.onRes)
}

// response is the loop's callback with a step's result: taken at once,
// so that a VU keeps no copy of it (120 bytes a VU).
func (v *loopVU) response(res phttp.Result) {
	v.waiting = false
	if v.pc == pcStepDone {
		v.stepDone(v.step, res, false)
		v.pc = pcWalk
	}
	v.advance()
}

// sleep waits d on the loop's timer, then goes on at ok, or at fail if the
// VUs' context ends first. moveDue makes the wait the plan's, not the
// system's, in an open model (worker.pause).
func (v *loopVU) sleep(d time.Duration, moveDue bool, ok, fail int) {
	if d <= 0 {
		v.pc = ok
		return
	}
	if v.ctx().Err() != nil {
		v.pc = fail
		return
	}
	v.waiting = true
	v.ended = time.Time{} // the next iteration does not begin where the last ended
	v.moveDue, v.okPC, v.failPC = moveDue, ok, fail
	v.sleepFrom = time.Now()
	v.el.l.Schedule(v.timer, d)
}

// wake is the timer's callback.
func (v *loopVU) wake() {
	v.waiting = false
	if v.moveDue && !v.due.IsZero() {
		v.due = v.due.Add(time.Since(v.sleepFrom))
	}
	v.pc = v.okPC
	v.advance()
}
