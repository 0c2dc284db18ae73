package engine

import (
	"context"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/plan/expr"
	phttp "github.com/perflab/perflab/protocol/http"
	pws "github.com/perflab/perflab/protocol/ws"
)

// worker is one virtual user of a scenario.
type worker struct {
	r        *runner
	client   *phttp.Client
	inflight *shardedCount // the stage's; nil in setup/teardown
	s        *scenario
	vars     *vars
	rec      *metrics.Recorder
	shard    int
	busy     bool // in an iteration, counted in rec's VUs (Recorder.Busy)
	// keepBusy: the VU begins its next iteration as one ends (a closed
	// model's), and stays counted in between; its goroutine uncounts it.
	keepBusy bool
	timer    *time.Timer
	scr      phttp.Scratch
	// ws are the VU's WebSocket connections, closed when it ends.
	ws *pws.Conns
	// due is when the current iteration was due to start in an open model
	// (zero in closed models); the first request is timed from it.
	due time.Time
	// cur is where the VU is in its iteration; once the once nodes it
	// has run; exprEnv its expression environment (logic.go).
	cur       cursor
	once      []bool
	exprEnv   *expr.Env
	jsonPaths map[string]*plan.JSONPath
	// ph is where setup's or teardown's one VU records (nil in a stage,
	// which records in rec).
	ph *phaseRec
	// proc is what the VU spent processing its responses (extractions
	// and checks), told its stage's executor when it ends (processed).
	proc processing
}

// processing is a VU's metrics.Processing, counted without a lock.
type processing struct {
	time, latency time.Duration
	responses     int64
}

// iteration runs the flow once, as the cursor walks it. due is when it
// was due to start (zero in closed models). It returns true when the VU
// must stop.
func (w *worker) iteration(ctx context.Context, iter int64, due time.Time) bool {
	started := time.Now()
	t0 := started
	if !due.IsZero() {
		t0 = due
	}
	w.due = due
	w.begin(iter)
	if !w.keepBusy {
		defer w.setBusy(false)
	}
	for {
		a := w.next(ctx.Err() != nil)
		switch a.kind {
		case actStep:
			res, ended := w.leaf(ctx, a.n)
			w.stepDone(a.n, res, ended)
		case actSleep:
			if !w.pause(ctx, a.d) {
				w.endWith(end(true, false))
			}
		case actEnd:
			if !a.complete && ctx.Err() != nil {
				return true // cut short by the end of the load: not a whole iteration
			}
			if w.cur.detail == "" { // no call more for the common case
				w.rec.Record(w.shard, w.s.iterOp, time.Since(t0), time.Since(started), w.cur.first, 0)
			} else {
				w.recordFailedIteration(time.Since(t0), time.Since(started))
			}
			return a.stop
		}
	}
}

// recordFailedIteration records an iteration that took lat from its due
// time (svc from its start) and failed, no step's result saying why:
// with the words of its failure (cursor.detail).
func (w *worker) recordFailedIteration(lat, svc time.Duration) {
	w.rec.RecordResult(w.shard, w.s.iterOp, lat, svc, w.cur.first, 0, w.cur.detail)
}

// setBusy counts the VU in its scenario's VUs in an iteration, or no
// longer: worker.begin starts it, the iteration's end or the VU's ends it,
// on both engines.
func (w *worker) setBusy(b bool) {
	if w.busy == b || w.rec == nil {
		return
	}
	w.busy = b
	if b {
		w.rec.Busy(w.s.iterOp, 1)
	} else {
		w.rec.Busy(w.s.iterOp, -1)
	}
}

// request sends one request; the result's Latency is its service time.
func (w *worker) request(req *phttp.Request) phttp.Result {
	if w.inflight != nil {
		w.inflight.add(w.shard, 1)
		defer w.inflight.add(w.shard, -1)
	}
	return w.client.Do(req, w.vars, &w.scr)
}

// latency is an operation's latency: from the iteration's due time for the
// first operation of an open model's iteration, else its service time.
func (w *worker) latency(res phttp.Result) time.Duration {
	lat := res.Latency
	if !w.due.IsZero() {
		if !res.Start.IsZero() {
			lat += res.Start.Sub(w.due)
		}
		w.due = time.Time{}
	}
	return lat
}

// pause waits d, a think time; before the first operation of an open
// model's iteration it moves that operation's due time, as the wait is the
// plan's, not the system's. It returns false when the load ended
// meanwhile.
func (w *worker) pause(ctx context.Context, d time.Duration) bool {
	t0 := time.Now()
	if !w.sleep(ctx, d) {
		return false
	}
	if !w.due.IsZero() {
		w.due = w.due.Add(time.Since(t0))
	}
	return true
}

// thinkTime draws a think time.
func (w *worker) thinkTime(t *plan.Think) time.Duration {
	d := t.Min
	if t.Max > t.Min {
		d += time.Duration(w.vars.rng.Int64N(int64(t.Max - t.Min)))
	}
	return d
}

// sleep waits d unless ctx ends first; it reuses one timer per VU.
func (w *worker) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		w.timer.Stop()
		return false
	}
}

// leaf runs one request, message, gRPC, WebSocket or bound step. ended
// is true when the load ended during an await (of a bus or a WebSocket) or
// a bound function (which gets the load's context): not a result, nothing
// to record.
func (w *worker) leaf(ctx context.Context, n *node) (res phttp.Result, ended bool) {
	switch {
	case n.fn != nil:
		res = call(ctx, n.fn, w.vars)
	case n.msg != nil:
		res = n.msg.do(ctx, w.vars)
	case n.ws != nil:
		res = w.wsDo(ctx, n).Result
	case n.grpc != nil:
		r := w.grpcCall(n.grpc)
		res = r.Result
		if r.Messages > 0 && n.firstOp > 0 {
			first := r.First
			if !w.due.IsZero() { // as the call's own latency: from its due time
				first += r.Start.Sub(w.due)
			}
			w.rec.Record(w.shard, n.firstOp, first, r.First, metrics.OK, 0)
		}
	default:
		res = w.request(n.req) // not bound to ctx: a request in flight completes
	}
	ended = res.Err != metrics.OK && (n.fn != nil || n.msg != nil || n.ws != nil) && ctx.Err() != nil
	return res, ended
}

// correlate writes a request of a step marked correlate to requests.csv.
func (w *worker) correlate(n *node, start, end time.Time, ek metrics.ErrKind) {
	if n.correlate == nil || w.r == nil || w.r.requests == nil {
		return
	}
	id, err := n.correlate.Expand(w.vars)
	if err != nil {
		id = "" // an id the step could not extract: the request is still listed
	}
	w.r.requests.add(n.name, id, start, end, ek == metrics.OK)
}
