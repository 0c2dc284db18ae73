package judge

import (
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1200 * time.Millisecond:     "1.2 s",
		250 * time.Second:           "4 m 10 s",
		2*time.Hour + 5*time.Minute: "2 h 05 m",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// Windows longer than a stage, or a first and a last window that overlap,
// are named: their figures would not compare what the user meant.
func TestWindowWarnings(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rd := &results.Run{Summary: &results.Summary{Stages: []results.PhaseSummary{{Name: "all", Start: t0, End: t0.Add(20 * time.Second)}}}}
	w := func(s string) Window {
		x, err := ParseWindow(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if got := WindowWarnings(rd, []Window{w("first:5s"), w("last:5s"), w("all")}); len(got) != 0 {
		t.Errorf("apart: %q", got)
	}
	got := WindowWarnings(rd, []Window{w("first:60s"), w("last:60s")})
	if len(got) != 2 || !strings.Contains(got[0], `stage all lasted 20s: window "first 1m0s" covers all of it`) {
		t.Errorf("longer than the stage: %q", got)
	}
	got = WindowWarnings(rd, []Window{w("first:12s"), w("last:12s")})
	if len(got) != 1 || !strings.Contains(got[0], "first 12s and last 12s overlap") {
		t.Errorf("overlap: %q", got)
	}
}

// The sentences say when the samples were too few to judge, rather than
// "no significant change", and count stages in good English.
func TestSentencesTooFewSamples(t *testing.T) {
	op := func(stage, name string, v analyze.Verdict, change float64) OpComparison {
		return OpComparison{Stage: stage, Operation: name, Change: change, Test: analyze.Comparison{Verdict: v}}
	}
	rc := &RunComparison{Percentile: 75, Ops: []OpComparison{
		op("users=1", "a", analyze.TooFewToSay, -0.9), op("users=5", "a", analyze.TooFewToSay, -0.9),
		op("users=1", "b", analyze.TooFewToSay, 0.1), op("users=5", "b", analyze.NoChange, 0.01),
		op("all", "c", analyze.Worse, 0.2),
	}}
	got := strings.Join(sentences(rc), "\n")
	for _, want := range []string{
		"a: too few samples to say at p75 (too few intervals a side in 2 stages;",
		"b: no significant change at p75 (1 of 2 stages had too few samples to say).",
		"c is 20% slower at p75 (1 of 1 stage).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// total: rps is the stage's requests over its wall time, not the sum of
// operations' rates over their own scenarios' spans.
func TestTotalRPSOverTheStage(t *testing.T) {
	th, err := plan.ParseThreshold("total: rps > 150")
	if err != nil {
		t.Fatal(err)
	}
	op := func(name string, count int64, rps float64) results.Operation {
		o := results.Operation{Name: name, Kind: metrics.KindStep}
		o.Count, o.RPS = count, rps
		return o
	}
	// 200 requests in a 2 s stage; the short scenario's step ran for 0.1 s.
	rs := checkStage(th, "all", nil, []results.Operation{op("long", 100, 50), op("short", 100, 1000)}, 2)
	if len(rs) != 1 || rs[0].Actual != 100 || rs[0].Pass {
		t.Errorf("%+v: want 100/s, failing > 150", rs)
	}
}

// Dropped iterations are judged per open-model scenario, as a share of
// those due (started or dropped) or a count, and for the stage's open
// models together; a closed model, which has no due times, is left out of
// an unnamed threshold, and a threshold naming it passes and says why.
func TestDroppedThresholds(t *testing.T) {
	scen := func(name string, count, dropped int64) results.Operation {
		o := results.Operation{Name: name, Kind: metrics.KindScenario, Scenario: name}
		o.Count, o.Dropped = count, dropped
		return o
	}
	step := results.Operation{Name: "GET /", Kind: metrics.KindStep, Scenario: "buy"}
	step.Count = 700
	// buy: 300 of 1000 due dropped; sell: none of 200; browse loops.
	ops := []results.Operation{scen("buy", 700, 300), step, scen("sell", 200, 0), scen("browse", 50, 0)}
	loads := []metrics.Load{{Scenario: "buy", Open: true}, {Scenario: "sell", Open: true}, {Scenario: "browse", VUs: 2}}
	check := func(src string) []results.ThresholdResult {
		th, err := plan.ParseThreshold(src)
		if err != nil {
			t.Fatal(err)
		}
		return checkStage(th, "all", loads, ops, 1)
	}
	type want struct {
		op     string
		actual float64
		pass   bool
		note   bool
	}
	for src, ws := range map[string][]want{
		"dropped < 1%":          {{"buy", 0.3, false, false}, {"sell", 0, true, false}},
		"dropped < 31%":         {{"buy", 0.3, true, false}, {"sell", 0, true, false}},
		"total: dropped <= 25%": {{"total", 300.0 / 1200, true, false}},
		"total: dropped == 0":   {{"total", 300, false, false}},
		"sell: dropped == 0":    {{"sell", 0, true, false}},
		"buy: dropped <= 300":   {{"buy", 300, true, false}},
		"browse: dropped < 1%":  {{"browse", 0, true, true}},
		"buy: errors < 1%":      {{"buy", 0, true, false}},
		"dropped > 5":           {{"buy", 300, true, false}, {"sell", 0, false, false}},
		"total: dropped > 1200": {{"total", 300, false, false}},
	} {
		rs := check(src)
		if len(rs) != len(ws) {
			t.Errorf("%s: %+v, want %d results", src, rs, len(ws))
			continue
		}
		for i, w := range ws {
			r := rs[i]
			if r.Operation != w.op || r.Actual != w.actual || r.Pass != w.pass || (r.Note != "") != w.note {
				t.Errorf("%s: %+v, want %+v", src, r, w)
			}
		}
	}
}

// An abort threshold of dropped iterations fails as soon as a stage's
// data so far does, a scenario that has started none yet included.
func TestEarlyDropped(t *testing.T) {
	th, err := plan.ParseThreshold("dropped < 10% abort")
	if err != nil {
		t.Fatal(err)
	}
	o := results.Operation{Name: "buy", Kind: metrics.KindScenario, Scenario: "buy"}
	o.Dropped = 40
	loads := []metrics.Load{{Scenario: "buy", Open: true}}
	r := EarlyOps([]*plan.Threshold{th}, "all", loads, []results.Operation{o}, time.Second)
	if r == nil || r.Actual != 1 || r.Operation != "buy" {
		t.Fatalf("%+v: want buy failing with all 40 dropped", r)
	}
	o.Count, o.Dropped = 1000, 40
	if r := EarlyOps([]*plan.Threshold{th}, "all", loads, []results.Operation{o}, time.Second); r != nil {
		t.Errorf("%+v: 40 of 1040 is within 10%%", r)
	}
}

// A stage's sliver of a last interval counts in the whole, but is not a
// sample of the test like a full interval.
func TestShortLastIntervalIsNoSample(t *testing.T) {
	run := runtest.Fixture()
	s := results.Summarize(run, runtest.Host)
	s.Interval = 1
	op := run.Stages[0].Ops[0]
	rd := &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{}}
	var ivs []*results.IntervalData
	for i, lat := range []int64{1000, 1000, 1000, 9000} { // µs; the last interval lasts 11 ms
		h := metrics.NewHistogram()
		h.RecordValue(lat)
		enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
		start := runtest.T0.UnixMilli() + int64(i)*1000
		end := start + 1000
		if i == 3 {
			end = start + 11
		}
		ivs = append(ivs, results.NewIntervalData(start, end, 1, 0, string(enc)))
	}
	rd.Intervals[results.Tag("s1", op)] = ivs
	samples, whole, _, ok := metricSamples([]*results.Run{rd}, s.Stages[0].Name, metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}, sampleMetric{Pct: 50})
	if !ok || len(samples) != 3 || whole <= 0 {
		t.Errorf("samples %v, whole %v, ok %v: want the 3 full intervals", samples, whole, ok)
	}
}

// A step name used in two scenarios is two operations in the sentences.
func TestSentencesNameInTwoScenarios(t *testing.T) {
	op := func(stage, scen string, v analyze.Verdict, change float64) OpComparison {
		return OpComparison{Stage: stage, Scenario: scen, Operation: "GET b", Change: change, Test: analyze.Comparison{Verdict: v}}
	}
	rc := &RunComparison{Percentile: 75, Ops: []OpComparison{
		op("users=1", "main", analyze.Worse, 0.2), op("users=2", "main", analyze.Worse, 0.3),
		op("users=1", "short", analyze.NoChange, 0.01), op("users=2", "short", analyze.NoChange, 0.01),
	}}
	got := strings.Join(sentences(rc), "\n")
	if !strings.Contains(got, "main: GET b is 20% to 30% slower at p75 across users=1 to users=2 (2 of 2 stages).") || !strings.Contains(got, "short: GET b: no significant change at p75.") {
		t.Errorf("%s", got)
	}
}

// A run from before pss_bytes (RSS only) compares by RSS with a run that
// has both, not its RSS with the other's PSS.
func TestCompareResourcesSameMemoryMetric(t *testing.T) {
	run := func(mem ...monitor.MemoryTrend) *results.Run {
		return &results.Run{Summary: &results.Summary{Resources: &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "s",
			Monitors: []monitor.MonitorFigures{{Monitor: "db", Memory: mem}}}}}}}
	}
	before := run(monitor.MemoryTrend{Metric: monitor.MetricRSS, PeakBytes: 640 << 20})
	after := run(monitor.MemoryTrend{Metric: monitor.MetricPSS, PeakBytes: 120 << 20}, monitor.MemoryTrend{Metric: monitor.MetricRSS, PeakBytes: 650 << 20})
	rs := compareResources([]*results.Run{before}, []*results.Run{after})
	if len(rs) != 1 || rs[0].BasePeakMB != 640 || rs[0].CandPeakMB != 650 {
		t.Errorf("got %+v, want RSS against RSS: 640 and 650 MB", rs)
	}
	rs = compareResources([]*results.Run{after}, []*results.Run{after})
	if len(rs) != 1 || rs[0].BasePeakMB != 120 || rs[0].CandPeakMB != 120 {
		t.Errorf("got %+v, want PSS against PSS: 120 MB", rs)
	}
}

// An abort threshold is judged once the stage's first interval has closed
// and a second has passed: every request of the first 200 ms failing
// stops nothing yet, and stops the run at a second.
func TestEarlyWaitsASecond(t *testing.T) {
	th, err := plan.ParseThreshold("errors < 5% abort")
	if err != nil {
		t.Fatal(err)
	}
	ops := []metrics.Op{{Name: "buy", Kind: metrics.KindStep, Scenario: "s"}}
	failed := metrics.NewStats()
	for range 8 {
		failed.Add(time.Millisecond, time.Millisecond, metrics.HTTP5xx, 0)
	}
	for _, c := range []struct {
		elapsed   time.Duration
		intervals int
		fails     bool
	}{{100 * time.Millisecond, 0, false}, {200 * time.Millisecond, 1, false}, {900 * time.Millisecond, 4, false}, {time.Second, 5, true}} {
		tk := &metrics.Tick{Elapsed: c.elapsed, Ops: ops, Cur: []*metrics.Stats{metrics.NewStats()}, Total: []*metrics.Stats{failed}, Intervals: c.intervals}
		if r := Early([]*plan.Threshold{th}, &metrics.Phase{Name: "all"}, tk); (r != nil) != c.fails {
			t.Errorf("after %v (%d intervals): %+v", c.elapsed, c.intervals, r)
		}
	}
}
