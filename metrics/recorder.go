package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/cede"
)

// Recorder is where workers record results during a stage. It is split into
// shards, each with its own lock and its own statistics per operation; a
// worker always records into the same shard, so locks are rarely contended,
// and memory grows with the number of shards, not of workers.
type Recorder struct {
	ops    []Op
	shards []shard
	vus    []vuGauge // per op: a scenario's VUs in an iteration

	// drainMu serialises Drain; spare is a shard's worth of empty
	// statistics, which Drain swaps with a shard's under its lock.
	drainMu sync.Mutex
	spare   []*Stats
	open    bool // service time kept beside latency (newShardStats)
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
	mu sync.Mutex
	// stats are made as the shard's first result is recorded: a shard no
	// worker records into (an event loop's scenario records into one a
	// loop) holds no histograms (about 190 KB each, one per operation).
	stats []*Stats
	_     [40]byte // keep neighbouring shards' locks on separate cache lines
}

// NewRecorder returns a recorder for ops with n shards (at least 1); open
// says whether service time is kept beside latency (open models).
func NewRecorder(ops []Op, n int, open bool) *Recorder {
	n = max(n, 1)
	r := &Recorder{ops: ops, shards: make([]shard, n), vus: make([]vuGauge, len(ops)), open: open}
	r.spare = newShardStats(len(ops), open)
	return r
}

// lock locks shard i, made ready for its first result.
func (r *Recorder) lock(i int) *shard {
	sh := &r.shards[i%len(r.shards)]
	sh.mu.Lock()
	if sh.stats == nil {
		sh.stats = newShardStats(len(r.ops), r.open)
	}
	return sh
}

// newShardStats is a shard's statistics for n operations.
func newShardStats(n int, open bool) []*Stats {
	s := newStatsSlice(n)
	if open {
		for j := range s {
			s[j] = NewOpenStats()
		}
	}
	return s
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
	sh := r.lock(shardIdx)
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
	sh := r.lock(shardIdx)
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
	sh := r.lock(shardIdx)
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
	sh := r.lock(shardIdx)
	sh.stats[op].Dropped += n
	sh.mu.Unlock()
}

// Queue counts an iteration of operation op that waited for a free VU.
func (r *Recorder) Queue(shardIdx, op int) {
	sh := r.lock(shardIdx)
	sh.stats[op].Queued++
	sh.mu.Unlock()
}

// Drain merges everything recorded since the last Drain into into (indexed by
// op id) and empties the shards.
func (r *Recorder) Drain(into []*Stats) { r.drain(into, nil) }

// drain is Drain, pausing at sl's points between histograms. A shard's
// lock, which every Record of its workers takes, is held only to swap its
// statistics with the spare ones, empty: the merges (tens of microseconds
// a histogram) and the emptying run outside it, and a worker records on
// meanwhile. The spare then holds the statistics taken out, emptied, for
// the next shard.
func (r *Recorder) drain(into []*Stats, sl *cede.Slicer) {
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		if sh.stats == nil { // nothing recorded yet
			sh.mu.Unlock()
			continue
		}
		sh.stats, r.spare = r.spare, sh.stats
		sh.mu.Unlock()
		for op, s := range r.spare {
			if s.Count > 0 || s.Dropped > 0 || s.Queued > 0 {
				drainHook()
				into[op].Merge(s)
				s.Reset()
				sl.Point()
			}
		}
	}
}

// drainHook runs before each merge of Drain: tests check there that no
// shard's lock is held.
var drainHook = func() {}
