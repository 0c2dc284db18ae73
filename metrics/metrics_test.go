package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

func TestStatsExactFigures(t *testing.T) {
	s := NewStats()
	// 1..1000 ms, shuffled, plus two failures that must not touch latency.
	r := rand.New(rand.NewPCG(1, 2))
	vals := r.Perm(1000)
	for _, v := range vals {
		s.Add(time.Duration(v+1)*time.Millisecond, time.Duration(v+1)*time.Millisecond, OK, 100)
	}
	s.Add(5*time.Microsecond, 5*time.Microsecond, ConnRefused, 0)
	s.Add(30*time.Second, 30*time.Second, Timeout, 0)
	sum := s.Summarize(10 * time.Second)
	if sum.Count != 1002 || sum.Errors.Total != 2 || sum.Errors.ByKind["connection_refused"] != 1 || sum.Errors.ByKind["timeout"] != 1 {
		t.Fatalf("counts wrong: %+v", sum)
	}
	l := sum.Latency
	if l.Min != 1 || l.Max != 1000 || l.Mean != 500.5 {
		t.Errorf("exact min/mean/max = %v/%v/%v, want 1/500.5/1000", l.Min, l.Mean, l.Max)
	}
	for _, c := range []struct{ got, want float64 }{{l.P50, 500}, {l.P75, 750}, {l.P90, 900}, {l.P95, 950}, {l.P99, 990}, {l.P999, 999}} {
		if math.Abs(c.got-c.want)/c.want > 0.001 {
			t.Errorf("percentile %v, want %v within 0.1%%", c.got, c.want)
		}
	}
	if sum.RPS != 100.2 {
		t.Errorf("rps = %v, want 100.2", sum.RPS)
	}
	if sum.Failed == nil || sum.Failed.Min != 0.005 || sum.Failed.Max != 30000 {
		t.Errorf("failed latency = %+v", sum.Failed)
	}
	if got := sum.SuccessRatio; math.Abs(got-1000.0/1002) > 1e-12 {
		t.Errorf("success ratio = %v", got)
	}
	// The CPS basic load test's operations per second: 1000/ms.
	if sum.OpRate.Min != 1 || sum.OpRate.Max != 1000 || math.Abs(sum.OpRate.Avg-1000/500.5) > 1e-9 {
		t.Errorf("op rate = %+v", sum.OpRate)
	}
	if sum.Bytes != 100000 {
		t.Errorf("bytes = %d", sum.Bytes)
	}
}

func TestStatsClampsBeyondRange(t *testing.T) {
	s := NewStats()
	s.Add(2*time.Hour, 2*time.Hour, OK, 0)
	sum := s.Summarize(time.Second)
	if s.Clamped != 1 || sum.Latency.Max != 7.2e6 {
		t.Fatalf("clamped=%d max=%v", s.Clamped, sum.Latency.Max)
	}
}

// Histograms recorded per shard and merged equal one histogram fed every value.
func TestRecorderMergeIsExact(t *testing.T) {
	ops := []Op{{Name: "a", Kind: KindStep}, {Name: "b", Kind: KindStep}}
	rec := NewRecorder(ops, 4, false)
	ref := []*Stats{NewStats(), NewStats()}
	var refMu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; i < 5000; i++ {
				op := i % 2
				d := time.Duration(r.ExpFloat64() * float64(20*time.Millisecond))
				ek := OK
				if r.IntN(100) == 0 {
					ek = HTTP5xx
				}
				rec.Record(w, op, d, d, ek, 10)
				refMu.Lock()
				ref[op].Add(d, d, ek, 10)
				refMu.Unlock()
			}
		}()
	}
	wg.Wait()
	got := []*Stats{NewStats(), NewStats()}
	rec.Drain(got)
	for i := range got {
		if !got[i].Hist.Equals(ref[i].Hist) {
			t.Errorf("op %d: merged histogram differs from the reference", i)
		}
		if got[i].Count != ref[i].Count || got[i].OK != ref[i].OK || got[i].Failed != ref[i].Failed || got[i].Errors != ref[i].Errors {
			t.Errorf("op %d: exact figures differ: %+v vs %+v", i, got[i].OK, ref[i].OK)
		}
		if got[i].Summarize(time.Second).Latency != ref[i].Summarize(time.Second).Latency {
			t.Errorf("op %d: summaries differ", i)
		}
	}
	// Drained shards are empty.
	again := []*Stats{NewStats(), NewStats()}
	rec.Drain(again)
	if again[0].Count != 0 || again[1].Count != 0 {
		t.Error("drain did not empty the shards")
	}
}

type captureSink struct{ ivs []Interval }

func (c *captureSink) Interval(iv *Interval) error {
	cp := Interval{Index: iv.Index, Start: iv.Start, End: iv.End}
	for _, s := range iv.Ops {
		x := NewStats()
		x.Merge(s)
		cp.Ops = append(cp.Ops, x)
	}
	c.ivs = append(c.ivs, cp)
	return nil
}

// Intervals partition the stage: their sum is the total, and each has the
// configured length except the last.
func TestCollectorIntervals(t *testing.T) {
	ops := []Op{{Name: "a", Kind: KindStep}}
	rec := NewRecorder(ops, 2, false)
	sink := &captureSink{}
	start := time.Now()
	col := NewCollector(rec, start, 50*time.Millisecond, 10*time.Millisecond, sink, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { col.Run(ctx); close(done) }()
	n := 0
	for time.Since(start) < 230*time.Millisecond {
		rec.Record(n, 0, time.Millisecond, time.Millisecond, OK, 0)
		n++
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	totals, err := col.Stop(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if totals[0].Count != int64(n) {
		t.Fatalf("total count %d, recorded %d", totals[0].Count, n)
	}
	var sum int64
	for i, iv := range sink.ivs {
		sum += iv.Ops[0].Count
		if iv.Index != i {
			t.Errorf("interval %d: index %d", i, iv.Index)
		}
		if i < len(sink.ivs)-1 && iv.End.Sub(iv.Start) != 50*time.Millisecond {
			t.Errorf("interval %d lasts %v", i, iv.End.Sub(iv.Start))
		}
		if i > 0 && !iv.Start.Equal(sink.ivs[i-1].End) {
			t.Errorf("interval %d does not start where %d ended", i, i-1)
		}
	}
	if sum != int64(n) || len(sink.ivs) < 4 {
		t.Fatalf("intervals hold %d of %d in %d intervals", sum, n, len(sink.ivs))
	}
}

func TestStatusKind(t *testing.T) {
	for code, want := range map[int]ErrKind{101: HTTP1xx, 200: HTTP2xx, 302: HTTP3xx, 404: HTTP4xx, 503: HTTP5xx, 700: Other} {
		if got := StatusKind(code); got != want {
			t.Errorf("StatusKind(%d) = %v, want %v", code, got, want)
		}
	}
	if HTTP5xx.String() != "http_5xx" || ConnReset.String() != "connection_reset" {
		t.Error("kind names changed: they are part of summary.json")
	}
}

func BenchmarkRecord(b *testing.B) {
	rec := NewRecorder([]Op{{Name: "a"}}, 4, false)
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			rec.Record(i, 0, time.Duration(i%1000)*time.Microsecond, time.Duration(i%1000)*time.Microsecond, OK, 0)
			i++
		}
	})
}

func BenchmarkStatsAdd(b *testing.B) {
	s := NewStats()
	for i := 0; i < b.N; i++ {
		s.Add(time.Duration(i%100000)*time.Microsecond, time.Duration(i%100000)*time.Microsecond, OK, 100)
	}
}

// BenchmarkStatsAddFailed is Add of failed operations, timed in their
// own histogram (KO) as successful ones are in theirs.
func BenchmarkStatsAddFailed(b *testing.B) {
	s := NewStats()
	for i := 0; i < b.N; i++ {
		s.Add(time.Duration(i%100000)*time.Microsecond, time.Duration(i%100000)*time.Microsecond, HTTP5xx, 100)
	}
}

func BenchmarkRecordOneWorker(b *testing.B) {
	rec := NewRecorder([]Op{{Name: "a"}}, 4, false)
	for i := 0; i < b.N; i++ {
		rec.Record(0, 0, time.Duration(i%100000)*time.Microsecond, 0, OK, 100)
	}
}

// BenchmarkRecordResultOneWorker is what the engines record a step's
// result by: Record and, for a failure, its detail.
func BenchmarkRecordResultOneWorker(b *testing.B) {
	rec := NewRecorder([]Op{{Name: "a"}}, 4, false)
	for i := 0; i < b.N; i++ {
		rec.RecordResult(0, 0, time.Duration(i%100000)*time.Microsecond, 0, OK, 100, "")
	}
}

// An interval that is not a whole number of the requested ticks still gets
// exactly its own data: at a steady rate, every full interval counts the same.
func TestIntervalNotAMultipleOfTick(t *testing.T) {
	rec := NewRecorder([]Op{{Name: "a"}}, 1, false)
	start := time.Now()
	sink := &captureSink{}
	col := NewCollector(rec, start, 150*time.Millisecond, 100*time.Millisecond, sink, nil)
	// The collector's own ticks, driven by hand so that a loaded machine's
	// late timers cannot move records between intervals: 200 records a
	// second, on schedule, drained at each tick.
	for now := start.Add(col.tick); now.Sub(start) <= 600*time.Millisecond; now = now.Add(col.tick) {
		for range int(col.tick / (5 * time.Millisecond)) {
			rec.Record(0, 0, time.Millisecond, time.Millisecond, OK, 0)
		}
		col.step(now, nil)
	}
	if _, err := col.Stop(start.Add(600 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if len(sink.ivs) != 4 {
		t.Fatalf("%d intervals in 600 ms, want 4", len(sink.ivs))
	}
	for i := 0; i < 4; i++ { // 4 full intervals of 150 ms: 30 each
		if c := sink.ivs[i].Ops[0].Count; c != 30 {
			t.Errorf("interval %d counted %d, want 30 (tick %v)", i, c, col.tick)
		}
	}
}

// A long stage costs the collector no memory per interval: the heap after
// 10,000 intervals of 5 operations is what it was after 1,000 (when it
// kept each interval's figures, about 1 KB per interval and operation:
// 45 MB more). Not a timing test: the ticks are driven by hand.
func TestCollectorMemoryBoundedOverIntervals(t *testing.T) {
	ops := make([]Op, 5)
	for i := range ops {
		ops[i] = Op{Name: fmt.Sprint("op", i), Kind: KindStep}
	}
	rec := NewRecorder(ops, 1, false)
	start := time.Now()
	col := NewCollector(rec, start, 10*time.Second, 10*time.Second, nopSink{}, nil)
	now := start
	run := func(n int) {
		for range n {
			for op := range ops {
				rec.Record(0, op, time.Duration(op+1)*time.Microsecond, 0, OK, 10)
			}
			now = now.Add(10 * time.Second)
			col.step(now, nil)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	run(1000)
	before := heap()
	run(9000)
	after := heap()
	if after > before+4<<20 {
		t.Errorf("the heap grew from %d to %d bytes over 9,000 intervals", before, after)
	}
	totals, err := col.Stop(now)
	if err != nil || totals[0].Count != 10000 || col.ivIndex != 10000 {
		t.Fatalf("%v: %d recorded, %d intervals", err, totals[0].Count, col.ivIndex)
	}
}

type nopSink struct{}

func (nopSink) Interval(*Interval) error { return nil }

// Steps of one name in several transactions merge into one; a scenario of
// the same name keeps its own.
func TestMergeByKey(t *testing.T) {
	ops := []Op{
		{Name: "loans", Kind: KindStep, Scenario: "s", Transaction: "check-out"},
		{Name: "s", Kind: KindStep, Scenario: "s"},
		{Name: "loans", Kind: KindStep, Scenario: "s", Transaction: "check-in"},
		{Name: "s", Kind: KindScenario, Scenario: "s"},
	}
	stats := make([]*Stats, len(ops))
	for i := range stats {
		stats[i] = NewStats()
		for range i + 1 {
			stats[i].Add(time.Duration(i+1)*time.Millisecond, 0, OK, 0)
		}
	}
	keys, merged := MergeByKey(ops, stats)
	if len(keys) != 3 || keys[0].Name != "loans" || keys[1] != ops[1] || keys[2] != ops[3] {
		t.Fatalf("keys %+v", keys)
	}
	if merged[0].Count != 1+3 || merged[0].Hist.TotalCount() != 4 || merged[1] != stats[1] || merged[2] != stats[3] {
		t.Errorf("merged counts %d, %v, %v", merged[0].Count, merged[1] == stats[1], merged[2] == stats[3])
	}
	if stats[0].Count != 1 {
		t.Errorf("the first member was changed: %d", stats[0].Count)
	}
}

// An open model's start delay (latency less service time) is kept for
// every operation that started, failed ones too, merged exactly and reset
// with the rest; queued iterations are counted like dropped ones.
func TestOpenStatsStartDelay(t *testing.T) {
	a, b := NewOpenStats(), NewOpenStats()
	a.Add(5*time.Millisecond, 2*time.Millisecond, OK, 0)     // 3 ms late
	a.Add(4*time.Millisecond, 4*time.Millisecond, OK, 0)     // on time
	b.Add(10*time.Millisecond, time.Millisecond, Timeout, 0) // failed, 9 ms late
	b.Add(time.Millisecond, 0, NotSent, 0)                   // nothing sent: no delay
	b.Queued, b.Dropped = 2, 1
	a.Merge(b)
	if a.DelayAll.N != 3 || a.DelayAll.Min != 0 || a.DelayAll.Max != int64(9*time.Millisecond) || a.DelayAll.Sum != int64(12*time.Millisecond) {
		t.Fatalf("start delay moments %+v: want 3 of 0, 3 and 9 ms", a.DelayAll)
	}
	if a.Delay.TotalCount() != 3 || a.Queued != 2 || a.Dropped != 1 {
		t.Fatalf("histogram %d values, queued %d, dropped %d", a.Delay.TotalCount(), a.Queued, a.Dropped)
	}
	s := a.Summarize(time.Second)
	if d := s.StartDelay; d == nil || d.Min != 0 || d.Max != 9 || d.Mean != 4 || math.Abs(d.P50-3) > 0.003 || s.Queued != 2 {
		t.Errorf("summary start delay %+v, queued %d", s.StartDelay, s.Queued)
	}
	a.Reset()
	if a.DelayAll.N != 0 || a.Delay.TotalCount() != 0 || a.Queued != 0 || a.Delay == nil {
		t.Errorf("reset kept %+v, %d values, queued %d", a.DelayAll, a.Delay.TotalCount(), a.Queued)
	}
	if NewStats().Delay != nil {
		t.Error("a closed model's statistics keep a start delay")
	}
}

// A packed Stats keeps a few KB where its histograms took about 190 KB
// each, and gives the same figures: summaries, merges and the histograms
// themselves, exactly.
func TestPackIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fill := func(s *Stats) {
		for range 5000 {
			lat := time.Duration(r.ExpFloat64() * float64(20*time.Millisecond))
			svc := lat - time.Duration(r.IntN(100))*time.Microsecond
			ek := OK
			if r.IntN(50) == 0 {
				ek = HTTP5xx
			}
			s.Add(lat, svc, ek, 100)
			if ek == OK && r.IntN(2) == 0 {
				s.AddServer(svc/2, svc)
			}
		}
		s.Dropped, s.Queued = 3, 4
	}
	for _, mk := range []func() *Stats{NewStats, NewOpenStats} {
		orig := mk()
		fill(orig)
		packed := mk()
		packed.Merge(orig)
		packed.Pack()
		if packed.Hist != nil || packed.Svc != nil || packed.Delay != nil || packed.Server != nil {
			t.Fatal("a packed Stats keeps its histograms")
		}
		if n := len(packed.packed.hist) + len(packed.packed.svc) + len(packed.packed.delay) + len(packed.packed.server); n > 40<<10 {
			t.Errorf("packed histograms take %d bytes", n)
		}
		want, _ := json.Marshal(orig.Summarize(time.Second))
		got, _ := json.Marshal(packed.Summarize(time.Second))
		if string(got) != string(want) {
			t.Errorf("packed summary\n%s\nwant\n%s", got, want)
		}
		u := packed.Unpacked()
		if !u.Hist.Equals(orig.Hist) || !u.Server.Equals(orig.Server) || (orig.Svc != nil && (!u.Svc.Equals(orig.Svc) || !u.Delay.Equals(orig.Delay))) {
			t.Error("unpacked histograms differ")
		}
		if packed.Hist != nil {
			t.Error("Unpacked unpacked in place")
		}
		// Merging a packed Stats, and into one.
		a, b := mk(), mk()
		a.Merge(orig)
		a.Merge(orig)
		b.Merge(packed)
		b.Pack()
		b.Merge(packed)
		wa, _ := json.Marshal(a.Summarize(time.Second))
		wb, _ := json.Marshal(b.Summarize(time.Second))
		if string(wa) != string(wb) {
			t.Errorf("merged packed\n%s\nwant\n%s", wb, wa)
		}
		_, merged := MergeByKey([]Op{{Name: "a"}}, []*Stats{packed})
		if merged[0].Hist == nil || !merged[0].Hist.Equals(orig.Hist) {
			t.Error("MergeByKey did not unpack")
		}
	}
}

// AddN of n operations is n calls of Add: the same counts, moments,
// histogram and clamping.
func TestAddNIsAddRepeated(t *testing.T) {
	one, many := NewStats(), NewStats()
	for _, c := range []struct {
		lat time.Duration
		ek  ErrKind
		n   int64
	}{{3 * time.Millisecond, OK, 5}, {0, OK, 2}, {250 * time.Microsecond, OK, 1}, {2 * time.Hour, OK, 3},
		{time.Second, Timeout, 4}, {40 * time.Millisecond, HTTP5xx, 2}, {0, NotSent, 3}, {time.Millisecond, OK, 0}} {
		for range c.n {
			one.Add(c.lat, c.lat, c.ek, 100)
		}
		many.AddN(c.lat, c.ek, 100*c.n, c.n)
	}
	if one.Count != many.Count || one.Errors != many.Errors || one.OK != many.OK || one.Failed != many.Failed ||
		one.Bytes != many.Bytes || one.Clamped != many.Clamped || !one.Hist.Equals(many.Hist) || many.Count != 20 {
		t.Errorf("Add: %+v %+v\nAddN: %+v %+v", one.OK, one.Failed, many.OK, many.Failed)
	}
}

// BenchmarkRecordResultFailedOneWorker is RecordResult of failures, as a
// refused connection repeats them: what a failure costs on top of a
// success.
func BenchmarkRecordResultFailedOneWorker(b *testing.B) {
	rec := NewRecorder([]Op{{Name: "a"}}, 4, false)
	details := []string{"connect: connection refused", "read: connection reset by peer", "status 503"}
	kinds := []ErrKind{ConnRefused, ConnReset, HTTP5xx}
	for i := 0; i < b.N; i++ {
		rec.RecordResult(0, 0, time.Duration(i%100000)*time.Microsecond, 0, kinds[i%3], 100, details[i%3])
	}
}

// Drain holds a shard's lock only to swap its statistics with empty ones:
// every merge runs with every shard's lock free, so a worker recording
// into its shard never waits for a merge (tens of microseconds a
// histogram; a millisecond at an interval's end of many operations), and
// the work under the lock is the same whatever the histograms hold.
func TestDrainMergesOutsideTheShardsLocks(t *testing.T) {
	ops := []Op{{Name: "a", Kind: KindStep}, {Name: "b", Kind: KindStep}}
	rec := NewRecorder(ops, 3, true)
	for w := range 3 {
		for op := range ops {
			rec.Record(w, op, time.Duration(w+op+1)*time.Millisecond, time.Millisecond, OK, 1)
		}
	}
	merges := 0
	old := drainHook
	t.Cleanup(func() { drainHook = old })
	drainHook = func() {
		merges++
		for i := range rec.shards {
			if !rec.shards[i].mu.TryLock() {
				t.Fatalf("merge %d: shard %d's lock is held", merges, i)
			}
			// A worker records meanwhile: into the shard's new statistics.
			rec.shards[i].stats[0].Add(time.Microsecond, time.Microsecond, OK, 0)
			rec.shards[i].mu.Unlock()
		}
	}
	got := []*Stats{NewOpenStats(), NewOpenStats()}
	rec.Drain(got)
	if merges != 6 {
		t.Fatalf("%d merges, want 6 (3 shards, 2 operations)", merges)
	}
	// Each merge added one to every shard's "a". Shard i was swapped
	// before merge 2i+1: the adds of the merges before went out with it
	// (0, 2 and 4: 6 with the 3 recorded before), those from merge 2i+1 on
	// stay in it for the next drain (6, 4 and 2): none lost, none twice.
	if got[0].Count != 3+6 || got[1].Count != 3 {
		t.Fatalf("drained %d and %d, want 9 and 3", got[0].Count, got[1].Count)
	}
	drainHook = func() {}
	next := []*Stats{NewOpenStats(), NewOpenStats()}
	rec.Drain(next)
	if next[0].Count != 6+4+2 || next[1].Count != 0 {
		t.Fatalf("recorded during the drain, drained after it: %d and %d, want 12 and 0", next[0].Count, next[1].Count)
	}
}
