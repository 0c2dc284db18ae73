package judge

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// generatorPoints are what the monitors of a generator on a 2-core host
// sample at each of n+1 interval edges of length iv: the host's busy share
// (busy(i), perflab's own 0.3 cores of it), the loopback round trip's p90
// (rtt(i), ms), and perflab's memory (mem(i), MB), under the monitor names
// host and self.
func generatorPoints(n int, iv time.Duration, host, self string, busy, rtt, mem func(i int) float64) []monitor.Point {
	var out []monitor.Point
	cpu := 0.0
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * iv)
		add := func(mon, metric string, v float64) {
			out = append(out, monitor.Point{Time: at, Monitor: mon, Metric: metric, Value: v})
		}
		add(host, monitor.MetricBusy, busy(i))
		add(host, monitor.MetricCPUs, 2)
		add(host, monitor.MetricLoopbackRTT, rtt(i)/1000)
		add(self, monitor.MetricCPUUser, cpu)
		add(self, monitor.MetricCPUSystem, 0)
		add(self, monitor.MetricRSS, mem(i)*(1<<20))
		cpu += 0.3 * iv.Seconds()
	}
	return out
}

func flat(v float64) func(int) float64 { return func(int) float64 { return v } }

// A worker's memory that rises in its first 5 s and stays flat is its
// warm-up: the run is not degraded, the generator is judged apart, and
// its health says it settled.
func TestLongevityGeneratorWarmUp(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const n = 200 // 20 s at 100 ms
	rd := longRun(r, n, 100*time.Millisecond, func(int) float64 { return 0.06 }, lognormal, constant(100), constant(0))
	rd.Points = generatorPoints(n, 100*time.Millisecond, "generator#w0", "perflab#w0", flat(0.3), flat(0.1), func(i int) float64 {
		return 50 + 24.2*math.Min(1, float64(i)/50) + 0.2*r.NormFloat64()
	})
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded || !strings.HasPrefix(d.Verdict, "no degradation") {
		t.Fatalf("verdict: %s", d.Verdict)
	}
	for _, s := range d.Series {
		if results.IsGeneratorMonitor(s.Monitor) {
			t.Errorf("the generator's series judged as the system's: %s", s.Sentence)
		}
	}
	if d.Generator == nil || !d.Generator.Steady {
		t.Fatalf("generator: %+v", d.Generator)
	}
	mem := generatorSeries(t, d, "memory of perflab#w0 (rss)")
	if mem.Verdict != results.DriftSettled || !strings.Contains(mem.Sentence, "settled at 74.") || !strings.Contains(mem.Sentence, "after 4.") && !strings.Contains(mem.Sentence, "after 5.") {
		t.Errorf("memory: %s (%+v)", mem.Sentence, mem.Change)
	}
	t.Log(d.Generator.Verdict)
	if !strings.Contains(d.Generator.Verdict, "steady once warmed up: memory of perflab#w0 (rss) settled at 74.") {
		t.Errorf("generator: %s", d.Generator.Verdict)
	}
}

// A flat system while another process takes a core of the generator's
// host for the second half: the mean latency it measures rises 50%, which
// alone would be degraded, but the generator's host got busier at the
// same time: suspect, the generator named, the run not degraded.
func TestLongevityGeneratorBusy(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const n = 200
	half := func(a, b float64) func(int) float64 {
		return func(i int) float64 {
			if i >= n/2 {
				return b
			}
			return a
		}
	}
	rd := longRun(r, n, 100*time.Millisecond, half(0.056, 0.085), func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(100), constant(0))
	// 20% busy then 70%, give or take 2 points: perflab's own 0.3 cores
	// are 15 points of it.
	busy := half(0.20, 0.70)
	rd.Points = generatorPoints(n, 100*time.Millisecond, results.GeneratorMonitor, results.SelfMonitor, func(i int) float64 { return busy(i) + 0.02*r.NormFloat64() }, flat(0.02), flat(60))
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded {
		t.Fatalf("degraded: %s", d.Verdict)
	}
	mean := runtest.DriftSeries(t, d, "mean of GET a")
	if mean.Verdict != results.DriftSuspect || !strings.Contains(mean.Sentence, "other processes' CPU on generator's host rose from 5.") {
		t.Errorf("mean: %s", mean.Sentence)
	}
	if !strings.Contains(d.Verdict, "got worse while the generator's host got busier (suspect, not counted): mean of GET a") {
		t.Errorf("verdict: %s", d.Verdict)
	}
	if d.Generator.Steady || !strings.Contains(d.Generator.Verdict, "other processes' CPU") {
		t.Errorf("generator: %s", d.Generator.Verdict)
	}
	if o, m := strings.Index(d.Hint, "other processes' CPU on generator's host +"), strings.Index(d.Hint, "mean of GET a +"); o < 0 || m < o || strings.Contains(d.Hint, "the generator steady") {
		t.Errorf("hint: %s", d.Hint)
	}
}

// A rise of latency smaller than the generator's own timing noise (the
// loopback round trip's p90, 0.1 ms) does not count, however significant;
// the same rise above the floor does.
func TestLongevityFloor(t *testing.T) {
	for _, c := range []struct {
		rtt      float64
		verdict  string
		sentence string
	}{{0.1, results.DriftSteady, "within the generator's own timing noise of " + results.Human(0.1)}, {0.01, results.DriftDegraded, "mean of GET a rose 4"}} {
		r := rand.New(rand.NewPCG(25, 26))
		const n = 120
		rd := longRun(r, n, time.Second, func(i int) float64 { return 0.05 + 0.025*float64(i)/n }, func(r *rand.Rand) float64 { return math.Exp(0.05 * r.NormFloat64()) }, constant(100), constant(0))
		rd.Points = generatorPoints(n, time.Second, results.GeneratorMonitor, results.SelfMonitor, flat(0.2), flat(c.rtt), flat(60))
		d := Longevity(rd, LongevityOptions{})
		mean := runtest.DriftSeries(t, d, "mean of GET a")
		if mean.Verdict != c.verdict || !strings.Contains(mean.Sentence, c.sentence) {
			t.Errorf("loopback %g ms: %s: %s", c.rtt, mean.Verdict, mean.Sentence)
		}
		if f := d.Floors["soak"]; math.Abs(f-c.rtt) > 1e-9 || !strings.Contains(d.Method, "a latency's from "+results.Human(c.rtt)) {
			t.Errorf("floor %g, method %s", f, d.Method)
		}
	}
}

// A change that does not last (the latency doubles for most of the
// stage, then comes back) is not a degradation: the level at
// the end is the start's.
func TestLongevityChangeMustPersist(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	rd := longRun(r, 600, time.Second, func(i int) float64 {
		if i >= 100 && i < 500 {
			return 20
		}
		return 10
	}, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(100), constant(0))
	d := Longevity(rd, LongevityOptions{})
	p95 := runtest.DriftSeries(t, d, "p95 of GET a")
	if d.Degraded || p95.Verdict != results.DriftSteady || !strings.Contains(p95.Sentence, "a change that did not last") {
		t.Errorf("%s\n%s", d.Verdict, p95.Sentence)
	}
}

// A system whose garbage collection takes ever more time from 60 s, and
// whose latency rises from 62 s: the hint lines them up, GC first, the
// generator steady.
func TestLongevityHint(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	const n = 120
	rd := longRun(r, n, time.Second, func(i int) float64 {
		if i >= 62 {
			return 20
		}
		return 10
	}, lognormal, constant(100), constant(0))
	rd.Points = generatorPoints(n, time.Second, results.GeneratorMonitor, results.SelfMonitor, flat(0.2), flat(0.05), flat(60))
	gc := 0.0
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * time.Second)
		rd.Points = append(rd.Points,
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricGCYoungCount, Value: float64(i)},
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricGCYoungTime, Value: gc},
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricGCFullCount, Value: 0},
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricGCFullTime, Value: 0})
		if i < 60 {
			gc += 0.010 * (1 + 0.1*r.NormFloat64())
		} else {
			gc += 0.040 * (1 + 0.1*r.NormFloat64())
		}
	}
	d := Longevity(rd, LongevityOptions{})
	if !d.Degraded {
		t.Fatalf("verdict: %s", d.Verdict)
	}
	gcAt := strings.Index(d.Hint, "at 1 m 00 s time in garbage collection of api +")
	p95At := strings.Index(d.Hint, "then p95 of GET a +")
	t.Log(d.Hint)
	if gcAt < 0 || p95At < gcAt || !strings.HasSuffix(d.Hint, "; the generator steady") {
		t.Errorf("hint: %s\ntimeline: %+v", d.Hint, d.Timeline)
	}
}

// generatorSeries is the generator's series of that name.
func generatorSeries(t *testing.T, d *results.Drift, name string) results.DriftSeries {
	t.Helper()
	if d.Generator != nil {
		for _, s := range d.Generator.Series {
			if s.Name == name {
				return s
			}
		}
	}
	t.Fatalf("no generator series %q in %+v", name, d.Generator)
	return results.DriftSeries{}
}

var _ = fmt.Sprint

// Calibration, on short runs as on long ones: 50 seeded flat runs of 30,
// 60 and 120 intervals each (heavy-tailed latencies with pauses like a
// garbage collector's, a varying throughput, a few errors) count the
// false alarms; the same runs with the latency 30% and 50% higher from
// their middle on count the shifts found. docs/history.md states the rates.
func TestLongevityCalibration(t *testing.T) {
	for _, n := range []int{30, 60, 120} {
		alarms, incidents := 0, 0
		found := map[float64]int{}
		for seed := uint64(0); seed < 50; seed++ {
			for _, shift := range []float64{1, 1.3, 1.5} {
				r := rand.New(rand.NewPCG(seed, uint64(n)))
				pause := false
				noise := func(r *rand.Rand) float64 {
					v := math.Exp(0.6 * r.NormFloat64())
					if pause && r.IntN(10) == 0 {
						v *= 20
					}
					return v
				}
				rd := longRun(r, n, time.Second, func(i int) float64 {
					pause = r.IntN(25) == 0
					if i >= n/2 {
						return 10 * shift
					}
					return 10
				}, noise, func(int) int { return 80 + r.IntN(40) }, func(int) int { return r.IntN(2) })
				d := Longevity(rd, LongevityOptions{})
				if shift == 1 && len(d.Incidents) > 0 {
					incidents++
					t.Logf("%d intervals, seed %d: a false incident: %s", n, seed, d.Incidents[0].Sentence)
				}
				switch {
				case shift == 1 && d.Degraded:
					alarms++
					t.Logf("%d intervals, seed %d: a false alarm: %s", n, seed, d.Verdict)
				case shift > 1 && d.Degraded && strings.Contains(d.Verdict, "of GET a rose"):
					found[shift]++
				}
			}
		}
		t.Logf("%d intervals: %d false alarms and %d false incidents in 50 flat runs; of 50 shifts, %d of +30%% found, %d of +50%%", n, alarms, incidents, found[1.3], found[1.5])
		if alarms > 1 || incidents > 2 {
			t.Errorf("%d intervals: %d of 50 flat runs called degraded, %d with an incident", n, alarms, incidents)
		}
		if found[1.5] < 45 {
			t.Errorf("%d intervals: %d of 50 shifts of +50%% found, want 45 or more", n, found[1.5])
		}
	}
}

// The generator's host got busier at the time a latency doubled from 10 to
// 20 ms: far more than the generator could make of it (four times its
// timing noise, 0.02 ms, or its loopback round trip's rise): the system
// degraded, and its throughput that fell with it is the system's too.
func TestLongevityBusyHostBigChange(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const n = 200
	half := func(a, b float64) func(int) float64 {
		return func(i int) float64 {
			if i >= n/2 {
				return b
			}
			return a
		}
	}
	lat := half(10, 20)
	rd := longRun(r, n, 100*time.Millisecond, lat, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, func(i int) int { return int(1000 / lat(i)) }, constant(0))
	busy := half(0.20, 0.70)
	rd.Points = generatorPoints(n, 100*time.Millisecond, results.GeneratorMonitor, results.SelfMonitor, func(i int) float64 { return busy(i) + 0.02*r.NormFloat64() }, flat(0.02), flat(60))
	d := Longevity(rd, LongevityOptions{})
	if !d.Degraded {
		t.Fatalf("not degraded: %s", d.Verdict)
	}
	for _, name := range []string{"mean of GET a", "p95 of GET a", "throughput"} {
		if s := runtest.DriftSeries(t, d, name); s.Verdict != results.DriftDegraded {
			t.Errorf("%s: %s", name, s.Sentence)
		}
	}
}
