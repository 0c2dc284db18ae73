package judge

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// longRun is a one-stage run of n intervals of length iv, whose step
// "GET a" answers in latency(i) (ms, each value scaled by noise(r)) count(i)
// times in interval i, errs(i) of them failing.
func longRun(r *rand.Rand, n int, iv time.Duration, latency func(i int) float64, noise func(r *rand.Rand) float64, count, errs func(i int) int) *results.Run {
	start := runtest.T0
	op := results.Operation{Name: "GET a", Kind: metrics.KindStep, Scenario: "s"}
	ph := results.PhaseSummary{Index: 1, Name: "soak", Start: start, End: start.Add(time.Duration(n) * iv), Operations: []results.Operation{op}}
	rd := &results.Run{Summary: &results.Summary{Interval: iv.Seconds(), Stages: []results.PhaseSummary{ph}}, Intervals: map[string][]*results.IntervalData{}}
	tag := results.StageTag(1, "s", "GET a", metrics.KindStep)
	h := metrics.NewHistogram()
	for i := 0; i < n; i++ {
		h.Reset()
		c, e := count(i), errs(i)
		for k := 0; k < c-e; k++ {
			h.RecordValue(int64(1000 * latency(i) * noise(r)))
		}
		s := start.Add(time.Duration(i) * iv).UnixMilli()
		rd.Intervals[tag] = append(rd.Intervals[tag], results.NewIntervalData(s, s+iv.Milliseconds(), int64(c), int64(e), string(metrics.Encode(h))))
	}
	return rd
}

func constant(v int) func(int) int { return func(int) int { return v } }

// lognormal noise with a median of 1 and a p99 of about 2.5.
func lognormal(r *rand.Rand) float64 { return math.Exp(0.4 * r.NormFloat64()) }

// Latency that rises linearly is a steady trend, and a degradation; the
// throughput, flat, is steady.
func TestLongevityLinearRise(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rd := longRun(r, 60, time.Second, func(i int) float64 { return 10 + float64(i)/3 }, lognormal, constant(100), constant(0))
	d := Longevity(rd, LongevityOptions{})
	if d == nil || !d.Degraded {
		t.Fatalf("verdict %+v", d)
	}
	p95 := runtest.DriftSeries(t, d, "p95 of GET a")
	if p95.Verdict != results.DriftDegraded || !p95.Significant || p95.End/p95.Start < 2 {
		t.Errorf("p95: %+v", p95)
	}
	if !strings.Contains(p95.Sentence, "p95 of GET a rose") {
		t.Errorf("p95: %s", p95.Sentence)
	}
	if p95.Trend.SlopePerHour != nil {
		t.Errorf("a rate per hour from a minute: %v", *p95.Trend.SlopePerHour)
	}
	if tp := runtest.DriftSeries(t, d, "throughput"); tp.Verdict != results.DriftSteady || tp.Start != 100 {
		t.Errorf("throughput: %+v", tp)
	}
	if !strings.Contains(d.Method, "Holm") || !strings.Contains(d.Method, "alpha 0.01") || d.Tests != len(d.Series) {
		t.Errorf("method %q, %d tests of %d series", d.Method, d.Tests, len(d.Series))
	}
}

// A latency that steps up once is a change of level, found where it began.
func TestLongevityStep(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rd := longRun(r, 100, time.Second, func(i int) float64 {
		if i >= 40 {
			return 20
		}
		return 10
	}, lognormal, constant(100), constant(0))
	d := Longevity(rd, LongevityOptions{})
	p95 := runtest.DriftSeries(t, d, "p95 of GET a")
	c := p95.Change
	if p95.Verdict != results.DriftDegraded || c == nil || !p95.Significant || c.AtS < 37 || c.AtS > 43 {
		t.Fatalf("p95: %+v, change %+v: want a change at 40 s", p95, c)
	}
	if !strings.Contains(p95.Sentence, "the change began after 4") || !strings.Contains(d.Verdict, "degraded: ") {
		t.Errorf("%s\n%s", p95.Sentence, d.Verdict)
	}
}

// A flat series with heavy tails and pauses like a garbage collector's
// (one interval in 25 has a tenth of its requests 20 times slower) is not
// called degraded: count the false alarms over 50 seeded runs.
func TestLongevityNoFalseAlarms(t *testing.T) {
	alarms := 0
	for seed := uint64(0); seed < 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		pause := false
		noise := func(r *rand.Rand) float64 {
			v := math.Exp(0.6 * r.NormFloat64()) // heavy-tailed: p99 four times the median
			if pause && r.IntN(10) == 0 {
				v *= 20
			}
			return v
		}
		rd := longRun(r, 120, time.Second, func(i int) float64 {
			pause = r.IntN(25) == 0
			return 10
		}, noise, func(int) int { return 80 + r.IntN(40) }, func(int) int { return r.IntN(2) })
		if d := Longevity(rd, LongevityOptions{}); d.Degraded {
			alarms++
			t.Logf("seed %d: %s", seed, d.Verdict)
		}
	}
	t.Logf("%d false alarms in 50 runs", alarms)
	if alarms > 1 {
		t.Errorf("%d of 50 flat runs called degraded", alarms)
	}
}

// Throughput that falls while the latency of each request stays flat (the
// VUs wait on requests that time out) is a degradation of the throughput
// alone.
func TestLongevityThroughputFalls(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	count := func(i int) int {
		if i >= 30 {
			return 40
		}
		return 200
	}
	rd := longRun(r, 80, 2*time.Second, func(int) float64 { return 10 }, lognormal, count, constant(0))
	d := Longevity(rd, LongevityOptions{})
	tp := runtest.DriftSeries(t, d, "throughput")
	if tp.Verdict != results.DriftDegraded || !strings.Contains(tp.Sentence, "throughput fell 80% from 100/s to 20/s; the change began after 1 m 0") {
		t.Errorf("throughput: %s (%+v)", tp.Sentence, tp.Change)
	}
	for _, name := range []string{"mean of GET a", "p95 of GET a", "error ratio"} {
		if s := runtest.DriftSeries(t, d, name); s.Verdict != results.DriftSteady {
			t.Errorf("%s: %s", name, s.Sentence)
		}
	}
}

// A monitored process whose memory grows at a known rate: the memory
// series rises; a rate per hour needs ten minutes of data.
func TestLongevityMemory(t *testing.T) {
	for _, c := range []struct {
		iv       time.Duration
		rate     bool
		perHourM float64
	}{{time.Second, false, 0}, {10 * time.Second, true, 720}} {
		r := rand.New(rand.NewPCG(7, 8))
		rd := longRun(r, 90, c.iv, func(int) float64 { return 10 }, lognormal, constant(100), constant(0))
		for i := 0; i <= 90; i++ {
			// 2 MB an interval on 100 MB, sampled at each interval's start.
			rd.Points = append(rd.Points, monitor.Point{Time: runtest.T0.Add(time.Duration(i) * c.iv), Monitor: "db", Metric: monitor.MetricRSS, Value: float64(100<<20 + 2*i<<20)},
				monitor.Point{Time: runtest.T0.Add(time.Duration(i) * c.iv), Monitor: results.SelfMonitor, Metric: monitor.MetricRSS, Value: float64(300 << 20)})
		}
		d := Longevity(rd, LongevityOptions{})
		mem := runtest.DriftSeries(t, d, "memory of db (rss)")
		if mem.Verdict != results.DriftDegraded || mem.Unit != "MB" || mem.End/mem.Start < 2 {
			t.Errorf("memory at %v intervals: %+v", c.iv, mem)
		}
		if got := mem.Trend.SlopePerHour != nil; got != c.rate {
			t.Errorf("%v intervals: rate per hour given %v, want %v", c.iv, got, c.rate)
		} else if got && math.Abs(*mem.Trend.SlopePerHour-c.perHourM) > 0.05*c.perHourM {
			t.Errorf("%v intervals: %.1f MB per hour, want %.0f", c.iv, *mem.Trend.SlopePerHour, c.perHourM)
		}
		for _, s := range d.Series {
			if s.Monitor == results.SelfMonitor {
				t.Errorf("the generator's own memory judged: %+v", s)
			}
		}
	}
}

// A run too short for any series to be judged has no verdict; a stage too
// short beside a long one is said to be.
func TestLongevityTooShort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	if d := Longevity(longRun(r, MinDriftValues-1, time.Second, func(int) float64 { return 10 }, lognormal, constant(100), constant(0)), LongevityOptions{}); d != nil {
		t.Errorf("a verdict from %d intervals: %+v", MinDriftValues-1, d)
	}
	rd := longRun(r, 40, time.Second, func(int) float64 { return 10 }, lognormal, constant(100), constant(0))
	short := rd.Summary.Stages[0]
	short.Index, short.Name, short.End = 2, "short", short.Start.Add(5*time.Second)
	rd.Summary.Stages = append(rd.Summary.Stages, short)
	d := Longevity(rd, LongevityOptions{})
	n := 0
	for _, s := range d.Series {
		if s.Stage == "short" {
			n++
			if s.Verdict != results.DriftTooShort || !strings.Contains(s.Sentence, "too short to judge") {
				t.Errorf("%+v", s)
			}
		}
	}
	if n == 0 || !strings.Contains(d.Verdict, "too short to judge") {
		t.Errorf("%d series of the short stage; verdict %q", n, d.Verdict)
	}
}

// The monitors' series: CPU per transaction that rises, garbage
// collection that takes a growing share of the time, a database whose
// statements slow down; each is judged degraded, and named.
func TestLongevityResources(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const n = 60
	rd := longRun(r, n, time.Second, func(int) float64 { return 10 }, lognormal, constant(100), constant(0))
	// The scenario's iterations: 100 a second, the transactions CPU per
	// transaction is over.
	scen := results.Operation{Name: "s", Kind: metrics.KindScenario, Scenario: "s"}
	rd.Summary.Stages[0].Operations = append(rd.Summary.Stages[0].Operations, scen)
	tag := results.StageTag(1, "s", "s", metrics.KindScenario)
	empty := string(metrics.Encode(metrics.NewHistogram()))
	var cpu, gc, calls, ms float64
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * time.Second)
		if i < n {
			rd.Intervals[tag] = append(rd.Intervals[tag], results.NewIntervalData(at.UnixMilli(), at.Add(time.Second).UnixMilli(), 100, 0, empty))
		}
		add := func(mon, metric string, v float64) {
			rd.Points = append(rd.Points, monitor.Point{Time: at, Monitor: mon, Metric: metric, Value: v})
		}
		add("api", monitor.MetricCPUUser, cpu)
		add("api", monitor.MetricCPUSystem, 0)
		add("api", monitor.MetricGCYoungCount, float64(i))
		add("api", monitor.MetricGCYoungTime, gc)
		add("api", monitor.MetricGCFullCount, 0)
		add("api", monitor.MetricGCFullTime, 0)
		add("db", monitor.MetricStatementCalls, calls)
		add("db", monitor.MetricStatementTime, ms)
		// Each second: 0.2 s of CPU rising to 0.5 s (2 to 5 ms a
		// transaction), 10 ms of GC rising to 100 ms, 1,000 statements of
		// 1 ms rising to 3 ms.
		f := float64(i) / n
		cpu += 0.2 + 0.3*f
		gc += 0.010 + 0.090*f
		calls += 1000
		ms += 1000 * (1 + 2*f)
	}
	d := Longevity(rd, LongevityOptions{})
	for name, kind := range map[string]string{
		"CPU per transaction of api":        seriesCPU,
		"time in garbage collection of api": seriesGC,
		"statements' mean time of db":       seriesStatements,
	} {
		s := runtest.DriftSeries(t, d, name)
		if s.Kind != kind || s.Verdict != results.DriftDegraded || s.End < 2*s.Start {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if s := runtest.DriftSeries(t, d, "CPU per transaction of api"); math.Abs(s.Start-2.15) > 0.3 || math.Abs(s.End-4.85) > 0.3 {
		t.Errorf("CPU per transaction from %.2f to %.2f ms, want about 2.15 to 4.85", s.Start, s.End)
	}
}
