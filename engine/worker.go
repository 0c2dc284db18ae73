package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
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
	// due is when the current iteration was due to start in an open model
	// (zero in closed models); the first request is timed from it.
	due time.Time
}

// iteration runs the flow once. due is when it was due to start (zero in
// closed models). It returns true when the VU must stop.
func (w *worker) iteration(ctx context.Context, iter int64, due time.Time) bool {
	w.vars.setIteration(iter)
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

// request sends one request and returns its result and its latency: from
// the iteration's due time for the first request of an open model's
// iteration, from the send otherwise. The result's Latency is the service
// time.
func (w *worker) request(req *phttp.Request) (phttp.Result, time.Duration) {
	if w.inflight != nil {
		w.inflight.Add(1)
		defer w.inflight.Add(-1)
	}
	res := w.client.Do(req, w.vars, &w.scr)
	lat := res.Latency
	if !w.due.IsZero() {
		if !res.Start.IsZero() {
			lat += res.Start.Sub(w.due)
		}
		w.due = time.Time{}
	}
	return res, lat
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
			res, lat := w.request(n.req)
			ek = res.Err
			w.rec.Record(w.shard, n.op, lat, res.Latency, ek, res.Bytes)
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
		if n.think != nil {
			t0 := time.Now()
			if !w.think(ctx, n.think) {
				return first, true, false
			}
			if !w.due.IsZero() { // a pause before the first request moves its due time
				w.due = w.due.Add(time.Since(t0))
			}
		}
	}
	return first, false, true
}

// transaction times a group of steps, think time inside it excluded.
func (w *worker) transaction(ctx context.Context, n *node) (metrics.ErrKind, bool) {
	first := metrics.OK
	var elapsed, svc time.Duration
	stop := false
	for i, c := range n.children {
		if ctx.Err() != nil {
			stop = true
			break
		}
		res, lat := w.request(c.req)
		elapsed += lat
		svc += res.Latency
		w.rec.Record(w.shard, c.op, lat, res.Latency, res.Err, res.Bytes)
		if res.Err != metrics.OK {
			if first == metrics.OK {
				first = res.Err
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
	}
	return first, stop
}

func (w *worker) think(ctx context.Context, t *plan.Think) bool {
	d := t.Min
	if t.Max > t.Min {
		d += time.Duration(w.vars.rng.Int64N(int64(t.Max - t.Min)))
	}
	return w.sleep(ctx, d)
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
