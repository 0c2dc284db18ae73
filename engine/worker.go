package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	pws "github.com/perflab/perflab/protocol/ws"
)

// worker is one virtual user of a scenario.
type worker struct {
	r        *runner
	client   *phttp.Client
	inflight *atomic.Int64 // shared by the stage; nil in setup/teardown
	s        *scenario
	vars     *vars
	rec      *metrics.Recorder
	shard    int
	timer    *time.Timer
	scr      phttp.Scratch
	// ws are the VU's WebSocket connections, closed when it ends.
	ws *pws.Conns
	// due is when the current iteration was due to start in an open model
	// (zero in closed models); the first request is timed from it.
	due time.Time
}

// iteration runs the flow once. due is when it was due to start (zero in
// closed models). It returns true when the VU must stop.
func (w *worker) iteration(ctx context.Context, iter int64, due time.Time) bool {
	w.vars.setIteration(iter)
	w.scr.NewIteration()
	started := time.Now()
	t0 := started
	if !due.IsZero() {
		t0 = due
	}
	w.due = due
	ek, stop, complete := w.steps(ctx, w.s.nodes)
	if !complete && ctx.Err() != nil {
		return true // cut short by the end of the load: not a whole iteration
	}
	w.rec.Record(w.shard, w.s.iterOp, time.Since(t0), time.Since(started), ek, 0)
	return stop
}

// request sends one request; the result's Latency is its service time.
func (w *worker) request(req *phttp.Request) phttp.Result {
	if w.inflight != nil {
		w.inflight.Add(1)
		defer w.inflight.Add(-1)
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

// pause waits a think time; before the first operation of an open model's
// iteration it moves that operation's due time, as the wait is the plan's,
// not the system's. It returns false when the load ended meanwhile.
func (w *worker) pause(ctx context.Context, t *plan.Think) bool {
	t0 := time.Now()
	if !w.think(ctx, t) {
		return false
	}
	if !w.due.IsZero() {
		w.due = w.due.Add(time.Since(t0))
	}
	return true
}

// steps runs a list of nodes; it returns the first error kind met, whether
// the VU must stop, and whether every node ran.
func (w *worker) steps(ctx context.Context, nodes []*node) (first metrics.ErrKind, stop, complete bool) {
	for _, n := range nodes {
		if ctx.Err() != nil {
			return first, true, false
		}
		var ek metrics.ErrKind
		switch {
		case n.pause:
		case n.children != nil:
			ek, stop = w.transaction(ctx, n)
		default:
			var ended bool
			if _, _, ek, ended = w.leaf(ctx, n); ended {
				return first, true, false
			}
		}
		if ek != metrics.OK && first == metrics.OK {
			first = ek
		}
		if stop {
			return first, true, false
		}
		if ek != metrics.OK {
			switch w.s.onError {
			case "next_iteration":
				return first, false, false
			case "stop_vu":
				return first, true, false
			}
		}
		if n.think != nil && !w.pause(ctx, n.think) {
			return first, true, false
		}
	}
	return first, false, true
}

// transaction times a group of steps, think time inside it excluded.
func (w *worker) transaction(ctx context.Context, n *node) (metrics.ErrKind, bool) {
	first := metrics.OK
	var elapsed, svc time.Duration
	stop := false
	began := time.Now()
	for i, c := range n.children {
		if ctx.Err() != nil {
			stop = true
			break
		}
		if c.pause {
			if !w.pause(ctx, c.think) {
				stop = true
				break
			}
			continue
		}
		lat, s, ek, ended := w.leaf(ctx, c)
		if ended {
			stop = true
			break
		}
		elapsed += lat
		svc += s
		if ek != metrics.OK {
			if first == metrics.OK {
				first = ek
			}
			if w.s.onError == "next_iteration" || w.s.onError == "stop_vu" {
				stop = w.s.onError == "stop_vu"
				break
			}
		}
		if c.think != nil && i < len(n.children)-1 && !w.think(ctx, c.think) {
			stop = true
			break
		}
	}
	if !stop || first != metrics.OK && ctx.Err() == nil {
		w.rec.Record(w.shard, n.op, elapsed, svc, first, 0)
		w.correlate(n, began, time.Now(), first)
	}
	return first, stop
}

func (w *worker) think(ctx context.Context, t *plan.Think) bool {
	return w.sleep(ctx, w.thinkTime(t))
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

// leaf runs one request or message step and records it. lat is from the
// iteration's due time for an open model's first operation, svc from the
// send. ended is true when the load ended during an await (of a bus or a
// WebSocket) or a bound function (which gets the load's context): not a
// result, nothing recorded.
func (w *worker) leaf(ctx context.Context, n *node) (lat, svc time.Duration, ek metrics.ErrKind, ended bool) {
	var res phttp.Result
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
	if res.Err != metrics.OK && (n.fn != nil || n.msg != nil || n.ws != nil) && ctx.Err() != nil {
		return 0, 0, res.Err, true
	}
	w.hops(n, res)
	lat = w.latency(res)
	w.rec.Record(w.shard, n.op, lat, res.Latency, res.Err, res.Bytes)
	if res.HasServer && res.Err == metrics.OK {
		w.rec.RecordServer(w.shard, n.op, res.Server, res.Latency)
	}
	if !res.Start.IsZero() {
		w.correlate(n, res.Start, res.Start.Add(res.Latency), res.Err)
	}
	return lat, res.Latency, res.Err, false
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
