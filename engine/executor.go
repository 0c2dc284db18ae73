package engine

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	phttp "github.com/perflab/perflab/protocol/http"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// executor starts the VUs of a stage's scenarios by their workload model.
// Every goroutine it starts is counted in wg, which the stage waits for.
type executor struct {
	r     *runner
	rec   *metrics.Recorder
	base  map[string]string
	data  *sources
	stage plan.Stage
	start time.Time
	wg    *sync.WaitGroup

	mu      sync.Mutex
	workers int // workers made so far: their shard and random stream
	// inflight counts the goroutine VUs' requests being sent or awaited;
	// the event loops count their own (loops, abandoned).
	inflight *shardedCount
	evLoops  []*phttp.Loop // under mu
	// finish runs once every goroutine of the stage has ended, or the
	// interrupted stage's grace is over.
	finish []func()
	// ends holds, per scenario, when its last VU stopped (unix ns).
	ends sync.Map // scenario name -> *atomic.Int64
	// proc is what the VUs that ended spent processing responses (under
	// mu).
	proc metrics.Processing
}

// processed adds what a VU that ended spent processing its responses.
func (e *executor) processed(w *worker) {
	p := w.proc
	if p.responses == 0 {
		return
	}
	e.mu.Lock()
	e.proc.Add(metrics.Processing{Responses: p.responses, Seconds: p.time.Seconds(), LatencyS: p.latency.Seconds()})
	e.mu.Unlock()
}

// spans returns each scenario's active time: from the stage's start to its
// last VU's end, or to its deadline when it has one, so that a response
// arriving after the deadline does not dilute the scenario's rate.
func (e *executor) spans(scens []*scenario) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, s := range scens {
		v, ok := e.ends.Load(s.sc.Name)
		if !ok {
			continue
		}
		d := time.Unix(0, v.(*atomic.Int64).Load()).Sub(e.start)
		if l := s.Length(); l > 0 && l < d {
			d = l
		}
		out[s.sc.Name] = d
	}
	return out
}

func (e *executor) newWorker(s *scenario, vu int) *worker {
	w := e.bareWorker(s, vu)
	w.client = e.r.client.ForVU()
	return w
}

// bareWorker is a VU's variables and recording shard, without a client
// (an event loop's VU sends through its loop).
func (e *executor) bareWorker(s *scenario, vu int) *worker {
	e.mu.Lock()
	n := e.workers
	e.workers++
	e.mu.Unlock()
	v := newVars(vu, s.sc.Name, e.stage.Name(), e.r.opts.RunID, e.base, e.data, e.r.opts.Seed, uint64(e.stage.Index)<<32|uint64(n))
	return &worker{r: e.r, s: s, vars: v, rec: e.rec, shard: n, inflight: e.inflight}
}

// endOf is when scenario s's last VU stopped so far, made as its first
// starts (without allocating once it is: every VU asks).
func (e *executor) endOf(s *scenario) *atomic.Int64 {
	if v, ok := e.ends.Load(s.sc.Name); ok {
		return v.(*atomic.Int64)
	}
	v, _ := e.ends.LoadOrStore(s.sc.Name, new(atomic.Int64))
	return v.(*atomic.Int64)
}

// ended notes that a VU of scenario s stopped now, for the scenario's span.
func (e *executor) ended(s *scenario) {
	end := e.endOf(s)
	now := time.Now().UnixNano()
	for {
		old := end.Load()
		if now <= old || end.CompareAndSwap(old, now) {
			return
		}
	}
}

func (e *executor) spawnOwned(f func()) {
	e.wg.Add(1)
	go func() { defer e.wg.Done(); f() }()
}

// spawnVU runs a VU's loop and closes its own connection, if it has one, when
// the loop ends.
func (e *executor) spawnVU(w *worker, f func()) {
	e.endOf(w.s)
	e.spawnOwned(func() {
		defer func() {
			if w.client != e.r.client {
				w.client.CloseIdleConnections()
			}
			if w.ws != nil {
				w.ws.Close()
			}
			e.processed(w)
			e.ended(w.s)
		}()
		f()
	})
}

// launch starts a scenario; ctx ends at the scenario's deadline, if any,
// parent when the load is stopped.
func (e *executor) launch(ctx, parent context.Context, s *scenario) {
	switch {
	case s.engine == EngineLoop:
		e.loops(ctx, parent, s)
	case s.Open():
		e.arrivals(ctx, parent, s)
	case len(s.RampVUs) > 0:
		e.rampingVUs(ctx, s)
	default:
		e.closed(ctx, s)
	}
}

// closed runs VUs iterations back to back: a number each, a shared total, or
// until the deadline, their starts spread over the ramp-up.
func (e *executor) closed(ctx context.Context, s *scenario) {
	shared := &atomic.Int64{}
	for k := 1; k <= s.VUs; k++ {
		i := s.vu(k)
		w := e.newWorker(s, i)
		delay := s.rampUpDelay(i)
		e.spawnVU(w, func() {
			if delay > 0 && !w.sleep(ctx, delay) {
				return
			}
			w.keepBusy = true
			defer w.setBusy(false)
			for i := int64(0); ctx.Err() == nil; i++ {
				iter := i
				switch {
				case s.TotalIterations > 0:
					iter = s.iter(shared.Add(1) - 1)
					if iter >= s.TotalIterations {
						return
					}
				case s.Iterations > 0 && i >= s.Iterations:
					return
				}
				if w.iteration(ctx, iter, time.Time{}) {
					return
				}
			}
		})
	}
}

// rampingVUs changes the number of active VUs linearly through the ramp's
// segments. A VU above the current target finishes its iteration and waits.
func (e *executor) rampingVUs(ctx context.Context, s *scenario) {
	top := float64(s.planVUs)
	for _, r := range s.RampVUs {
		top = math.Max(top, r.Target)
	}
	target := e.rampTarget(ctx, s) // of the plan's VUs: VU i runs while i <= target
	for k := 1; k <= int(s.seg.Share(int64(top))); k++ {
		i := s.vu(k)
		w := e.newWorker(s, i)
		e.spawnVU(w, func() {
			for it := int64(0); ctx.Err() == nil; {
				if int64(i) > target.Load() {
					if !w.sleep(ctx, 20*time.Millisecond) {
						return
					}
					continue
				}
				if s.Iterations > 0 && it >= s.Iterations {
					return
				}
				if w.iteration(ctx, it, time.Time{}) {
					return
				}
				it++
			}
		})
	}
}

// rampTarget keeps the number of VUs a ramp_vus model wants now.
func (e *executor) rampTarget(ctx context.Context, s *scenario) *atomic.Int64 {
	var target atomic.Int64
	target.Store(int64(s.planVUs))
	e.spawnOwned(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			n, done := rampAt(float64(s.planVUs), s.RampVUs, time.Since(e.start))
			target.Store(int64(math.Floor(n + 1e-9)))
			if done {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return &target
}

// rampAt is the value of a piecewise-linear ramp from start at elapsed, and
// whether the ramp is over.
func rampAt(start float64, segs []*plan.RampStep, elapsed time.Duration) (float64, bool) {
	v := start
	for _, s := range segs {
		if elapsed < s.Duration.D {
			return v + (s.Target-v)*float64(elapsed)/float64(s.Duration.D), false
		}
		elapsed -= s.Duration.D
		v = s.Target
	}
	return v, true
}

// scenarioPacer is an arrival-rate scenario's schedule: the plan's, or a
// worker's share of it.
func scenarioPacer(s *scenario) pacer {
	var p pacer = constantPacer{rate: s.Rate, duration: s.Duration}
	if len(s.RampRate) > 0 {
		segs := make([]rampSegment, len(s.RampRate))
		for i, r := range s.RampRate {
			segs[i] = rampSegment{Target: r.Target, Duration: r.Duration.D}
		}
		p = newRampPacer(s.StartRate, segs)
	}
	if s.seg.Whole() {
		return p
	}
	return segmentPacer{p: p, seg: s.seg}
}

// iterationContext is the context of an open model's iterations: one that
// started before the scenario's end (ctx) runs to its end, within the
// request timeout (as k6's gracefulStop): cut short, it would count as
// neither run nor dropped. Stopping the load (parent) stops it at once.
func (e *executor) iterationContext(ctx, parent context.Context) context.Context {
	ictx, icancel := context.WithCancel(parent)
	context.AfterFunc(ctx, func() {
		if parent.Err() != nil {
			icancel()
			return
		}
		time.AfterFunc(e.r.client.Timeout(), icancel)
	})
	e.finish = append(e.finish, icancel)
	return ictx
}

// arrival is an iteration an open model hands to a VU.
type arrival struct {
	iter int64
	due  time.Time
}

// arrivals starts iterations at the pacer's due times whatever the response
// times: each goes to an idle VU, to a new VU while fewer than MaxVUs exist,
// and otherwise is dropped and counted, or (when_busy: queue) waits for the
// first free VU. Latency is measured from the due time either way.
func (e *executor) arrivals(ctx, parent context.Context, s *scenario) {
	p := scenarioPacer(s)
	idle := make(chan arrival) // unbuffered: a send succeeds only to an idle VU
	var backlog chan arrival   // when_busy: queue
	if s.Queue {
		backlog = make(chan arrival, maxBacklog)
	}
	ictx := e.iterationContext(ctx, parent)
	run := func(w *worker, a arrival) bool {
		if ctx.Err() != nil { // the load ended before this iteration could start
			e.rec.Drop(w.shard, s.iterOp)
			return true
		}
		return w.iteration(ictx, a.iter, a.due)
	}
	if s.Queue { // iterations still queued when the load ended were never run
		e.finish = append(e.finish, func() {
			for range backlog {
				e.rec.Drop(0, s.iterOp)
			}
		})
	}
	vus := 0
	spawn := func(first *arrival) {
		vus++
		w := e.newWorker(s, s.vu(vus))
		e.spawnVU(w, func() {
			if first != nil && run(w, *first) {
				return
			}
			for {
				var a arrival
				var ok bool
				select { // the oldest queued iteration first
				case a, ok = <-backlog:
				default:
					select {
					case a, ok = <-backlog:
					case a, ok = <-idle:
					}
				}
				if !ok { // the schedule is over: finish the queue, if any
					if backlog == nil {
						return
					}
					for a := range backlog {
						if run(w, a) {
							return
						}
					}
					return
				}
				if run(w, a) {
					return
				}
			}
		})
	}
	for range s.VUs {
		spawn(nil)
	}
	e.spawnOwned(func() {
		defer func() {
			close(idle)
			if backlog != nil {
				close(backlog)
			}
		}()
		// ended counts as dropped the iterations from n on that were due
		// before the load ended but never dispatched: a pacer that wakes
		// late, past the stage's end, must not lose them from the counts.
		ended := func(n int64) {
			end := time.Now()
			if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
				end = dl
			}
			e.rec.DropN(0, s.iterOp, dueBefore(p, end.Sub(e.start))-n)
		}
		al := newAlarm(ctx, func() bool { return e.inflight.load() == 0 })
		defer al.close()
		for n := int64(0); ; n++ {
			d, ok := p.Due(n)
			if !ok {
				return
			}
			due := e.start.Add(d)
			if !al.wait(due.Add(pacerLateness)) || ctx.Err() != nil {
				ended(n)
				return
			}
			a := arrival{iter: s.iter(n), due: due}
			select {
			case idle <- a:
				continue
			default:
			}
			switch {
			case vus < s.MaxVUs:
				spawn(&a)
				continue
			case backlog != nil:
				select {
				case backlog <- a:
					e.rec.Queue(0, s.iterOp)
					continue
				default:
				}
			}
			// Every VU is busy (and the queue full): the arrivals already
			// due after this one find them busy too, and are dropped with
			// it at once, however many a late wake-up or a rate beyond
			// the machine left behind.
			m := max(dueBefore(p, time.Since(e.start)-pacerLateness), n+1)
			e.rec.DropN(0, s.iterOp, m-n)
			n = m - 1
		}
	})
}

// pacerLateness delays every wake-up of the arrival pacer; tests set it to
// play a loaded machine whose timers fire late.
var pacerLateness time.Duration

// maxBacklog bounds the iterations queued for busy VUs.
const maxBacklog = 1 << 20

// abandoned is the number of requests still in flight: the goroutine VUs'
// and the event loops' (each loop is asked on its own thread, which a hung
// server does not hold up).
func (e *executor) abandoned() int64 {
	n := e.inflight.load()
	e.mu.Lock()
	loops := e.evLoops
	e.mu.Unlock()
	for _, l := range loops {
		n += int64(l.InFlight(time.Second))
	}
	return n
}
