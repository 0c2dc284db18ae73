package metrics

import (
	"sync"
	"sync/atomic"
	"time"
)

// Recorder is where workers record results during a stage. It is split into
// shards, each with its own lock and its own statistics per operation; a
// worker always records into the same shard, so locks are rarely contended,
// and memory grows with the number of shards, not of workers.
type Recorder struct {
	ops    []Op
	shards []shard
	vus    []vuGauge // per op: a scenario's VUs in an iteration
}

// vuGauge counts a scenario's VUs in an iteration now (cur) and the most
// at once since the last interval closed (peak).
type vuGauge struct{ cur, peak atomic.Int64 }

// raise makes peak at least v.
func (g *vuGauge) raise(v int64) {
	for p := g.peak.Load(); v > p && !g.peak.CompareAndSwap(p, v); p = g.peak.Load() {
	}
}

type shard struct {
	mu    sync.Mutex
	stats []*Stats
	_     [40]byte // keep neighbouring shards' locks on separate cache lines
}

// NewRecorder returns a recorder for ops with n shards (at least 1); open
// says whether service time is kept beside latency (open models).
func NewRecorder(ops []Op, n int, open bool) *Recorder {
	n = max(n, 1)
	r := &Recorder{ops: ops, shards: make([]shard, n), vus: make([]vuGauge, len(ops))}
	for i := range r.shards {
		r.shards[i].stats = newStatsSlice(len(ops))
		if open {
			for j := range r.shards[i].stats {
				r.shards[i].stats[j] = NewOpenStats()
			}
		}
	}
	return r
}

func newStatsSlice(n int) []*Stats {
	s := make([]*Stats, n)
	for i := range s {
		s[i] = NewStats()
	}
	return s
}

// Ops returns the operations recorded, indexed by op id.
func (r *Recorder) Ops() []Op { return r.ops }

// Shards is the number of shards; workers pick theirs as worker % Shards().
func (r *Recorder) Shards() int { return len(r.shards) }

// Record adds one result of operation op to a shard: its latency (from the
// due time in open models), its service time (from the send) and outcome.
func (r *Recorder) Record(shardIdx, op int, lat, svc time.Duration, ek ErrKind, bytes int) {
	sh := &r.shards[shardIdx%len(r.shards)]
	sh.mu.Lock()
	sh.stats[op].Add(lat, svc, ek, bytes)
	sh.mu.Unlock()
}

// RecordResult is Record of a step's result, with what a failure said
// (Stats.AddResult): a success costs nothing more, a failure its message
// (MessageOf), made outside the lock, and a map lookup.
func (r *Recorder) RecordResult(shardIdx, op int, lat, svc time.Duration, ek ErrKind, bytes int, detail string) {
	var msg string
	if ek != OK {
		msg = MessageOf(ek, detail)
	}
	sh := &r.shards[shardIdx%len(r.shards)]
	sh.mu.Lock()
	st := sh.stats[op]
	st.Add(lat, svc, ek, bytes)
	if ek != OK {
		st.addMessage(ek, msg, detail)
	}
	sh.mu.Unlock()
}

// RecordServer adds the server's own time for a successful operation op
// whose service time was svc.
func (r *Recorder) RecordServer(shardIdx, op int, srv, svc time.Duration) {
	sh := &r.shards[shardIdx%len(r.shards)]
	sh.mu.Lock()
	sh.stats[op].AddServer(srv, svc)
	sh.mu.Unlock()
}

// Busy counts a VU of scenario operation op starting (d = 1) or ending
// (d = -1) an iteration.
func (r *Recorder) Busy(op int, d int64) {
	g := &r.vus[op]
	if c := g.cur.Add(d); d > 0 {
		g.raise(c)
	}
}

// takePeakVUs is, per scenario, the most VUs in an iteration at once
// since the last call: the peak starts again from the VUs in one now.
func (r *Recorder) takePeakVUs() map[string]int64 {
	out := map[string]int64{}
	for i, op := range r.ops {
		if op.Kind != KindScenario {
			continue
		}
		g := &r.vus[i]
		peak := g.peak.Swap(0)
		g.raise(g.cur.Load())
		out[op.Scenario] = max(out[op.Scenario], peak)
	}
	return out
}

// Drop counts an iteration of operation op that could not start.
func (r *Recorder) Drop(shardIdx, op int) { r.DropN(shardIdx, op, 1) }

// DropN counts n iterations of operation op that could not start.
func (r *Recorder) DropN(shardIdx, op int, n int64) {
	if n <= 0 {
		return
	}
	sh := &r.shards[shardIdx%len(r.shards)]
	sh.mu.Lock()
	sh.stats[op].Dropped += n
	sh.mu.Unlock()
}

// Queue counts an iteration of operation op that waited for a free VU.
func (r *Recorder) Queue(shardIdx, op int) {
	sh := &r.shards[shardIdx%len(r.shards)]
	sh.mu.Lock()
	sh.stats[op].Queued++
	sh.mu.Unlock()
}

// Drain merges everything recorded since the last Drain into into (indexed by
// op id) and empties the shards.
func (r *Recorder) Drain(into []*Stats) {
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		for op, s := range sh.stats {
			if s.Count > 0 || s.Dropped > 0 || s.Queued > 0 {
				into[op].Merge(s)
				s.Reset()
			}
		}
		sh.mu.Unlock()
	}
}
