package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// constantRate is what a run of 200 iterations/s for 1 s against an
// instant server gave: the iterations, the step, what the server saw, and
// how long Run took.
type constantRate struct {
	it, a  *metrics.Stats
	served int64
	took   time.Duration
}

func runConstantRate(t testing.TB) constantRate {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 200, duration: 1s, vus: 5, max_vus: 20, flow: [{name: a, url: /a}]}
`, nil)
	start := time.Now()
	r := run(t, p)
	took := time.Since(start)
	return constantRate{it: op(t, r.Stages[0], "s"), a: op(t, r.Stages[0], "a"), served: int64(c.total()), took: took}
}

// Every scheduled iteration runs or is counted as dropped, the server sees
// each one that ran, and the stage lasts its second. How few are dropped
// and how soon the stage ends on an idle machine are measured by
// BenchmarkConstantArrivalRate: here, where other tests share the cores,
// the bounds are what a wrong pacer would break.
func TestConstantArrivalRate(t *testing.T) {
	m := runConstantRate(t)
	it := m.it
	// A pacer woken late by a loaded machine may find every VU busy and
	// drop an iteration (and counts it); one that drops a tenth of them
	// while VUs are free to start them is wrong. Over TLS (TestEventLoopTLS)
	// each iteration crosses a proxy in this process too: on a loaded
	// machine that keeps all 20 VUs busy and drops are right, so only the
	// counting is checked there.
	if it.Count+it.Dropped != 200 || (!overTLS && it.Dropped > 20) || m.served != it.Count {
		t.Errorf("iterations %d, dropped %d, server %d; want 200 scheduled, at most 20 dropped, the server's count", it.Count, it.Dropped, m.served)
	}
	// Never shorter than its duration; a stage that waited for its grace
	// (5 s) or its requests' timeout to end would take far longer than 2 s.
	if m.took < time.Second-10*time.Millisecond || m.took > 2*time.Second {
		t.Errorf("1 s at 200/s took %v", m.took)
	}
	if m.a.Svc == nil || m.a.SvcOK.N != it.Count {
		t.Errorf("open models keep service time: %d of %d iterations have one", m.a.SvcOK.N, it.Count)
	}
}

// BenchmarkConstantArrivalRate measures what TestConstantArrivalRate
// bounds: at 200/s for 1 s (bench/README.md), the iterations dropped, how
// long past its second the run took, and the rate the server saw over that
// second.
//
//	go test -run '^$' -bench ConstantArrivalRate -benchtime 10x ./engine
func BenchmarkConstantArrivalRate(b *testing.B) {
	eachEngine(b, func(b *testing.B) {
		var dropped, over, served float64
		for range b.N {
			m := runConstantRate(b)
			dropped += float64(m.it.Dropped)
			over += float64(m.took-time.Second) / 1e6
			served += float64(m.served)
		}
		n := float64(b.N)
		b.ReportMetric(dropped/n, "dropped/run")
		b.ReportMetric(over/n, "ms-over-1s")
		b.ReportMetric(served/n, "served/s")
		b.ReportMetric(0, "ns/op")
	})
}

// stallServer holds every response in [from, to) until to, as a server
// that freezes (a GC pause, a failover) does, and counts the requests in c.
func stallServer(c *counter, from, to time.Time) *httptest.Server {
	return httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if now := time.Now(); !now.Before(from) && now.Before(to) {
			time.Sleep(to.Sub(now))
		}
	}))
}

// At a constant rate, a 1 s stall of the server shows in the latency
// percentiles (measured from each iteration's due time) but not in the
// service time; a closed model against the same stall hides it.
func TestStallShowsInLatencyNotServiceTime(t *testing.T) {
	var served counter
	t0 := time.Now()
	srv := stallServer(&served, t0.Add(time.Second), t0.Add(2*time.Second))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: open, rate: 200, duration: 3s, vus: 2, max_vus: 2, when_busy: queue, flow: [{name: a, url: /a}]}
`, nil)
	r := run(t, p)
	a := op(t, r.Stages[0], "a").Summarize(r.Stages[0].Elapsed())
	// Queued, none is dropped but those a pacer woken late (a loaded
	// machine) finds due after the end; dropping instead of queueing
	// during the stall would lose a third of them.
	if a.Count+a.Dropped != 600 || a.Dropped > 60 || a.Count != int64(served.total()) {
		t.Fatalf("count %d dropped %d, server %d; want 600 scheduled, at most 60 dropped, the server's count", a.Count, a.Dropped, served.total())
	}
	t.Logf("open model, 1 s stall: latency p50 %.2f p90 %.1f p99 %.1f max %.1f ms; service time p99 %.2f max %.1f ms",
		a.Latency.P50, a.Latency.P90, a.Latency.P99, a.Latency.Max, a.ServiceTime.P99, a.ServiceTime.Max)
	if a.Latency.P99 < 300 || a.Latency.Max < 900 {
		t.Errorf("latency p99 %.1f ms, max %.1f ms: the stall does not show", a.Latency.P99, a.Latency.Max)
	}
	// Requests queued during the stall wait before they are sent: their
	// service time is short. Counted from the due time, as latency is, its
	// p99 would be the latency's, 300 ms and more.
	if a.ServiceTime == nil || a.ServiceTime.P99 > 150 {
		t.Errorf("service time p99 %+v: should stay small (requests waited before being sent)", a.ServiceTime)
	}

	// The same stall in a closed model: only the requests in flight wait,
	// and p99 hides the stall (coordinated omission).
	t1 := time.Now()
	srv2 := stallServer(new(counter), t1.Add(time.Second), t1.Add(2*time.Second))
	defer srv2.Close()
	p2 := load(t, srv2.URL, `target: TARGET
scenarios:
  - {name: closed, vus: 2, duration: 3s, think: 5ms, flow: [{name: a, url: /a}]}
`, nil)
	r2 := run(t, p2)
	c := op(t, r2.Stages[0], "a").Summarize(r2.Stages[0].Elapsed())
	t.Logf("closed model, same stall: latency p50 %.2f p90 %.1f p99 %.1f max %.1f ms (%d requests)", c.Latency.P50, c.Latency.P90, c.Latency.P99, c.Latency.Max, c.Count)
	// Only the two requests in flight, of hundreds, wait out the stall:
	// p99 stays far below the open model's 300 ms and more.
	if c.Latency.P99 > 150 || c.Latency.Max < 900 {
		t.Errorf("closed model: p99 %.1f ms, max %.1f ms", c.Latency.P99, c.Latency.Max)
	}
}

func TestDroppedIterationsAreCounted(t *testing.T) {
	var c counter
	t0 := time.Now()
	srv := stallServer(&c, t0.Add(500*time.Millisecond), t0.Add(time.Second))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 200, duration: 2s, vus: 2, max_vus: 2, flow: [{name: a, url: /a}]}
`, nil)
	r := run(t, p)
	it := op(t, r.Stages[0], "s")
	// Every scheduled iteration ran, as the server saw, or was dropped.
	if it.Count+it.Dropped != 400 || it.Count != int64(c.total()) {
		t.Errorf("ran %d + dropped %d != 400 scheduled, or the server saw %d", it.Count, it.Dropped, c.total())
	}
	// Both VUs are held for 0.5 s: the 100 iterations due then are dropped,
	// give or take the stall's ends (a loaded machine delays both, and can
	// drop a few more when both VUs are slow). A pacer that queued them
	// instead would drop none, one that dropped with VUs free far more.
	if it.Dropped < 50 || it.Dropped > 200 {
		t.Errorf("dropped %d, want about 100", it.Dropped)
	}
	s := it.Summarize(time.Second)
	if s.Dropped != it.Dropped {
		t.Error("summary loses dropped")
	}
}

func TestRampingArrivalRate(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	// A VU for every iteration the schedule starts: however late a busy
	// machine wakes the pacer mid-run, a burst of arrivals due at once
	// finds VUs to start them (with max_vus 20 a stall of 100 ms at 200/s
	// found every VU busy, and 60 or 90 were dropped, rightly). The rate
	// falls to 0 half a second before the hold at 0 ends the schedule: a
	// wake-up late by up to about a second still starts each arrival
	// before the end, where it would otherwise be dropped.
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 4
    max_vus: 250
    ramp_rate: [{target: 200, duration: 1s}, {target: 200, duration: 500ms}, {target: 0, duration: 500ms}, {target: 0, duration: 1s}]
    flow: [{name: a, url: /a}]
`, nil)
	r := run(t, p)
	// 0 -> 200/s over 1 s is 100 iterations; 200/s for 0.5 s another 100;
	// 200/s -> 0 over 0.5 s another 50; the hold at 0, none. A pacer that
	// drops arrivals while VUs are free to start them drops more than a
	// few.
	if it := op(t, r.Stages[0], "s"); it.Count+it.Dropped != 250 || it.Dropped > 20 || int64(c.total()) != it.Count {
		t.Errorf("iterations %d, dropped %d, server %d; want 250 scheduled, at most 20 dropped", it.Count, it.Dropped, c.total())
	}
}

// A pacer that wakes late (a loaded machine) never loses an iteration:
// each one due before the end runs or is counted as dropped, and the
// server saw exactly those that ran.
func TestLatePacerLosesNoIteration(t *testing.T) {
	pacerLateness = 100 * time.Millisecond // the last wake-up falls after the end
	defer func() { pacerLateness = 0 }()
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 200, duration: 1s, vus: 20, flow: [{name: a, url: /a}]}
`, nil)
	r := run(t, p)
	it := op(t, r.Stages[0], "s")
	if it.Count+it.Dropped != 200 || it.Dropped == 0 || int64(c.total()) != it.Count {
		t.Errorf("iterations %d + dropped %d, server %d; want 200 scheduled with the late last one dropped", it.Count, it.Dropped, c.total())
	}
}

// A ramp of VUs (0 to 4 over 400 ms, then 4 for a second) starts its VUs
// one after another and keeps all four to the end. Judged by the server,
// by which VUs it heard from and when, from its first request: a busy
// machine starts VUs late and slows them down, but never starts one before
// its time, nor stops one that runs.
func TestRampingVUs(t *testing.T) {
	var active, peak atomic.Int32
	var mu sync.Mutex
	var first time.Time
	early, late := map[string]bool{}, map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		if first.IsZero() {
			first = time.Now()
		}
		switch since, vu := time.Since(first), r.URL.Query().Get("vu"); {
		case since < 100*time.Millisecond:
			early[vu] = true
		case since > 600*time.Millisecond:
			late[vu] = true
		}
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    ramp_vus: [{target: 4, duration: 400ms}, {target: 4, duration: 1s}]
    flow: [{name: a, url: "/a?vu=${vu}"}]
`, nil)
	r := run(t, p)
	if pk := peak.Load(); pk != 4 {
		t.Errorf("peak concurrency %d, want 4", pk)
	}
	// A VU every 100 ms: at most 2 in the first 100 ms (4 if they all
	// started at once); all 4 from 600 ms on, the ramp's end and more,
	// until the stage ends at 1.4 s.
	mu.Lock()
	if len(early) > 2 || len(late) != 4 {
		t.Errorf("VUs heard from in the first 100 ms %v, after 600 ms %v: the ramp did not ramp", early, late)
	}
	mu.Unlock()
	// A stage that waited for its grace (5 s) would take far longer.
	if el := r.Stages[0].Elapsed(); el < 1400*time.Millisecond || el > 3*time.Second {
		t.Errorf("a 1.4 s ramp took %v", el)
	}
}

// Interrupting an open model: what the server saw equals what perflab kept.
func TestInterruptOpenModelCounts(t *testing.T) {
	// Interrupted once the server has seen 150 requests to /a, however slow
	// a loaded machine is to start the load.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int64
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a" && seen.Add(1) == 150 {
			cancel()
		}
		time.Sleep(3 * time.Millisecond)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 300, duration: 1m, vus: 5, max_vus: 50, flow: [{name: a, url: /a}, {name: b, url: /b}]}
`, nil)
	r, err := Run(ctx, p, Options{RunID: "t"})
	if err != nil || r.Status != "interrupted" {
		t.Fatalf("status %s, %v", r.Status, err)
	}
	c.mu.Lock()
	a, b := c.counts["GET /a"], c.counts["GET /b"]
	c.mu.Unlock()
	if got := op(t, r.Stages[0], "a").Count; got != int64(a) || got < 150 {
		t.Errorf("a: perflab %d, server %d", got, a)
	}
	if got := op(t, r.Stages[0], "b").Count; got != int64(b) {
		t.Errorf("b: perflab %d, server %d", got, b)
	}
}

// Each scenario's rate is over its own active time: a 1 s scenario beside a
// 2 s one, and a slow last response after the deadline, do not dilute it.
func TestRatesOverEachScenariosSpan(t *testing.T) {
	var n atomic.Int32
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" && n.Add(1) == 95 {
			time.Sleep(800 * time.Millisecond) // a slow response near the end
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: short, rate: 100, duration: 1s, vus: 5, max_vus: 10, flow: [{name: s, url: /short}]}
  - {name: long, rate: 50, duration: 2s, vus: 5, flow: [{name: l, url: /long}]}
`, nil)
	r := run(t, p)
	sum := results.Summarize(r, results.Host{})
	// A rate is the requests the server saw over the scenario's own span:
	// at most its duration (the slow response after it does not count, nor
	// does the longer scenario), at least the due time of its last
	// iteration, one period less. Over the stage's 2 s, or up to the slow
	// response, short's rate would be about half.
	spans := map[string]struct {
		path           string
		length, period time.Duration
	}{"s": {"GET /short", time.Second, 10 * time.Millisecond}, "l": {"GET /long", 2 * time.Second, 20 * time.Millisecond}}
	checked := 0
	for _, op := range sum.Stages[0].Operations {
		sp, ok := spans[op.Name]
		if !ok {
			continue
		}
		checked++
		c.mu.Lock()
		served := float64(c.counts[sp.path])
		c.mu.Unlock()
		lo, hi := served/sp.length.Seconds(), served/(sp.length-sp.period).Seconds()
		if served < 50 || op.RPS < lo*0.999 || op.RPS > hi*1.001 {
			t.Errorf("%s: %.2f/s, the server saw %.0f: want %.2f-%.2f/s", op.Name, op.RPS, served, lo, hi)
		}
	}
	if checked != 2 {
		t.Errorf("%d of the 2 steps in the summary", checked)
	}
}

// A bound function that returns because the load ended (its context) is
// not a failure: the stage's end is not an error of the system under test.
func TestBoundFunctionEndedIsNotAnError(t *testing.T) {
	p := load(t, "http://127.0.0.1:1", `target: TARGET
scenarios:
  - {name: s, vus: 5, duration: 500ms, flow: [{name: work, call: work}]}
`, nil)
	work := func(ctx context.Context, _ *VU) error {
		select {
		case <-time.After(30 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r, err := Run(context.Background(), p, Options{RunID: "test", Seed: 1, Steps: map[string]StepFunc{"work": work}})
	if err != nil {
		t.Fatal(err)
	}
	w := op(t, r.Stages[0], "work")
	if w.Count < 40 || w.ErrorCount() != 0 {
		t.Errorf("work: %d calls, %d errors; the deadline is not an error", w.Count, w.ErrorCount())
	}
	if s := op(t, r.Stages[0], "s"); s.ErrorCount() != 0 {
		t.Errorf("scenario: %d failed iterations", s.ErrorCount())
	}
}

// Iterations that started before an open model's end run to completion
// (two 100 ms steps here, the last due 3 ms before the end): every
// scheduled iteration ran or was dropped, and the server saw each step of
// each one that ran.
func TestOpenIterationsFinishAfterTheEnd(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(http.ResponseWriter, *http.Request) { time.Sleep(100 * time.Millisecond) }))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 300, duration: 1s, vus: 50, max_vus: 400, flow: [{name: a, url: /a}, {name: b, url: /b}]}
`, nil)
	r := run(t, p)
	it := op(t, r.Stages[0], "s")
	c.mu.Lock()
	a, b := c.counts["GET /a"], c.counts["GET /b"]
	c.mu.Unlock()
	t.Logf("ran %d dropped %d a %d b %d", it.Count, it.Dropped, a, b)
	if it.Count+it.Dropped != 300 || int64(a) != it.Count || int64(b) != it.Count {
		t.Errorf("iterations %d + dropped %d, server /a %d /b %d; want 300 scheduled, each run whole", it.Count, it.Dropped, a, b)
	}
}

// Interrupted with iterations queued for a VU hung on the server, a stage
// that stops waiting after its grace still counts the queue as dropped.
func TestInterruptedQueueIsCounted(t *testing.T) {
	// Interrupted 0.5 s after the first request reached the server, however
	// slow a loaded machine is to start the load.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		first.Do(func() { time.AfterFunc(500*time.Millisecond, cancel) })
		time.Sleep(1500 * time.Millisecond)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 200, duration: 5s, vus: 1, max_vus: 1, when_busy: queue, flow: [{name: a, url: /a}]}
`, nil)
	r, _ := Run(ctx, p, Options{RunID: "test", Seed: 1, Grace: 200 * time.Millisecond})
	it := op(t, r.Stages[0], "s")
	// About 100 iterations were due in 0.5 s: one hung (abandoned), the
	// rest queued behind it.
	if it.Dropped < 80 || it.Count != 0 || r.Stages[0].Abandoned != 1 {
		t.Errorf("ran %d, dropped %d, abandoned %d; want 0, about 99, 1", it.Count, it.Dropped, r.Stages[0].Abandoned)
	}
}

// A rate far beyond what any machine can start (the engine's own limit,
// past plan.MaxRate, which validation refuses) is paced by time: the stage
// ends on time with every arrival of its schedule run or dropped, and an
// interrupt stops it at once. Walking every due time, 10^12 a second, once
// ran for minutes without a request.
func TestRateBeyondTheMachine(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 100, duration: 500ms, vus: 2, max_vus: 2, flow: [{name: a, url: /a}]}
`, nil)
	p.Scenarios[0].Rate.Values = []string{"1e12"}
	// Generous bounds: a stage of 0.5 s that does not end in a minute hangs.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := Run(ctx, p, Options{RunID: "test", Seed: 1})
	if err != nil || r.Status != "completed" {
		t.Fatalf("status %s, %v: the stage did not end by itself", r.Status, err)
	}
	it := op(t, r.Stages[0], "s")
	if it.Count == 0 || it.Count != int64(c.total()) || it.Count+it.Dropped != 5e11 {
		t.Errorf("ran %d (the server saw %d) + dropped %d, want 5*10^11 in all", it.Count, c.total(), it.Dropped)
	}

	// Interrupted after 50 requests, in a stage of ten minutes: it stops,
	// and what it counted as dropped is what was due before it stopped
	// (at 10^12 a second, well under 10^15 for a minute).
	var seen atomic.Int64
	ictx, icancel := context.WithCancel(context.Background())
	defer icancel()
	srv2 := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		if seen.Add(1) == 50 {
			icancel()
		}
	}))
	defer srv2.Close()
	p = load(t, srv2.URL, `target: TARGET
scenarios:
  - {name: s, rate: 100, duration: 10m, vus: 2, max_vus: 2, flow: [{name: a, url: /a}]}
`, nil)
	p.Scenarios[0].Rate.Values = []string{"1e12"}
	done := make(chan *metrics.Run)
	go func() {
		r, _ := Run(ictx, p, Options{RunID: "test", Seed: 1})
		done <- r
	}()
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		t.Fatal("an interrupted stage of 10^12 arrivals a second did not stop within a minute")
	}
	it = op(t, r.Stages[0], "s")
	if r.Status != "interrupted" || it.Count < 50 || it.Dropped <= 0 || it.Dropped > 1e15 {
		t.Errorf("status %s, ran %d, dropped %d", r.Status, it.Count, it.Dropped)
	}
}

// ivSink keeps a stage's finished intervals.
type ivSink struct {
	mu  sync.Mutex
	ivs []metrics.Interval
}

func (s *ivSink) Interval(iv *metrics.Interval) error {
	s.mu.Lock()
	s.ivs = append(s.ivs, metrics.Interval{Index: iv.Index, Start: iv.Start, End: iv.End, Partial: iv.Partial, PeakVUs: iv.PeakVUs})
	s.mu.Unlock()
	return nil
}

// The VUs in an iteration, per interval, follow a ramp_vus model (0 to 4
// over 2 s, then 4 for 1 s): they rise to 4, never above, and agree with
// the requests the server had in progress at once. A VU is in an
// iteration whenever its request is at the server, so the server's count
// is never above the VUs' (within the interval or the one before: an
// interval closes a tick after its end); with 50 ms requests back to back
// each VU is at the server nearly all the time, so it is at most one below.
func TestPeakVUsFollowTheRamp(t *testing.T) {
	type entry struct {
		at time.Time
		n  int64
	}
	var cur atomic.Int64
	var mu sync.Mutex
	var entries []entry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		mu.Lock()
		entries = append(entries, entry{time.Now(), n})
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
interval: 500ms
scenarios:
  - name: s
    ramp_vus: [{target: 4, duration: 2s}, {target: 4, duration: 1s}]
    flow: [{name: a, url: /a}]
`, nil)
	var sink ivSink
	if _, err := Run(context.Background(), p, Options{RunID: "t", Sink: func(*metrics.Phase) metrics.Sink { return &sink }}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sink.ivs) < 6 {
		t.Fatalf("%d intervals of a 3 s stage, want 6 at least", len(sink.ivs))
	}
	var prev int64
	for i, iv := range sink.ivs {
		vus, ok := iv.PeakVUs["s"]
		if !ok {
			t.Fatalf("interval %d: no VUs of s in %v", i, iv.PeakVUs)
		}
		var server int64
		for _, e := range entries {
			if !e.at.Before(iv.Start) && e.at.Before(iv.End) {
				server = max(server, e.n)
			}
		}
		t.Logf("interval %d (%v, partial %v): %d VUs, server %d at once", i, iv.End.Sub(iv.Start), iv.Partial, vus, server)
		switch {
		case vus > 4:
			t.Errorf("interval %d: %d VUs, above the ramp's 4", i, vus)
		case !iv.Partial && vus < prev: // the last, after the load, falls
			t.Errorf("interval %d: %d VUs after %d: a rising ramp fell", i, vus, prev)
		case server > max(vus, prev):
			t.Errorf("interval %d: the server had %d requests at once, the VUs were %d", i, server, vus)
		case !iv.Partial && server < vus-1:
			t.Errorf("interval %d: %d VUs, the server had %d requests at once", i, vus, server)
		}
		if !iv.Partial {
			prev = vus
		}
	}
	if first := sink.ivs[0].PeakVUs["s"]; first > 1 {
		t.Errorf("first 500 ms of a ramp from 0 to 4 over 2 s: %d VUs, want 1 at most", first)
	}
	if prev != 4 {
		t.Errorf("the ramp's last whole interval had %d VUs, want 4", prev)
	}
}

// A closed model's VU stays counted in an iteration from one iteration
// into the next, and no longer once its last has ended: two VUs of two
// iterations each count 2 while they run and 0 in the intervals after,
// while another scenario of the stage goes on.
func TestPeakVUsEndWithTheIterations(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(150 * time.Millisecond)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
interval: 200ms
scenarios:
  - {name: s, vus: 2, iterations: 2, flow: [{name: a, url: /slow}]}
  - {name: other, vus: 1, duration: 1500ms, flow: [{name: b, url: /b, think: 100ms}]}
`, nil)
	var sink ivSink
	if _, err := Run(context.Background(), p, Options{RunID: "t", Sink: func(*metrics.Phase) metrics.Sink { return &sink }}); err != nil {
		t.Fatal(err)
	}
	if len(sink.ivs) < 7 {
		t.Fatalf("%d intervals of a 1.5 s stage, want 7 at least", len(sink.ivs))
	}
	if first := sink.ivs[0].PeakVUs["s"]; first != 2 {
		t.Errorf("first interval: %d VUs of s in an iteration, want 2", first)
	}
	// Two iterations of 150 ms end by 0.3 s, or late on a busy machine:
	// by the sixth interval (from 1 s) none is counted.
	for _, iv := range sink.ivs[5:] {
		if n := iv.PeakVUs["s"]; n != 0 {
			t.Errorf("interval %d: %d VUs of s in an iteration, want 0 after their last", iv.Index, n)
		}
	}
}
