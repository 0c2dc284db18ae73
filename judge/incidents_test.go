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

// between is 1 for i in [a, b), else 0.
func between(i, a, b int) bool { return i >= a && i < b }

// A burst of 503s on a third of the requests from 40% to 60% of a run is
// an incident, listed at the top with its start and end: not a change of
// level, and not "steady" without a word.
func TestIncidentErrorBurst(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	const n = 600 // 60 s at 100 ms
	rd := longRun(r, n, 100*time.Millisecond, func(int) float64 { return 2 }, lognormal, constant(30), func(i int) int {
		if between(i, 240, 360) {
			return 10
		}
		return 0
	})
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded || len(d.Incidents) != 1 {
		t.Fatalf("verdict %s; incidents %+v", d.Verdict, d.Incidents)
	}
	inc := d.Incidents[0]
	if math.Abs(inc.StartS-24) > 0.15 || math.Abs(inc.EndS-36) > 0.15 || inc.Ongoing {
		t.Errorf("from %v s to %v s, ongoing %v", inc.StartS, inc.EndS, inc.Ongoing)
	}
	if len(inc.Effects) == 0 || inc.Effects[0].Series != "error ratio of GET a" || inc.Effects[0].Failures != 1200 || math.Abs(inc.Effects[0].Level-100.0/3) > 0.01 || inc.Effects[0].Baseline != 0 {
		t.Errorf("effects %+v", inc.Effects)
	}
	for _, want := range []string{"no lasting degradation", "1 incident: from 24.0 s to 36.0 s (10:00:24 to 10:00:36, 12.0 s): error ratio of GET a 33.33%", "1200 failures", "then back to 0.00%"} {
		if !strings.Contains(d.Verdict, want) {
			t.Errorf("verdict lacks %q: %s", want, d.Verdict)
		}
	}
	if e := runtest.DriftSeries(t, d, "error ratio"); e.Verdict != results.DriftSteady {
		t.Errorf("error ratio: %s", e.Sentence)
	}
}

// A 2 s blip of latency (x10) near the end of a 10-minute flat run is an
// incident, not a change of level: the p95 stays steady, its change (if
// one is found) is no level.
func TestIncidentBlipIsNoLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const n = 6000 // 600 s at 100 ms
	rd := longRun(r, n, 100*time.Millisecond, func(i int) float64 {
		if between(i, 5808, 5825) {
			return 28
		}
		return 2.8
	}, func(r *rand.Rand) float64 { return math.Exp(0.15 * r.NormFloat64()) }, constant(40), constant(0))
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded {
		t.Fatalf("degraded: %s", d.Verdict)
	}
	if len(d.Incidents) != 1 {
		t.Fatalf("incidents %+v", d.Incidents)
	}
	inc := d.Incidents[0]
	if math.Abs(inc.StartS-580.8) > 0.15 || math.Abs(inc.EndS-582.5) > 0.15 {
		t.Errorf("from %v s to %v s", inc.StartS, inc.EndS)
	}
	for _, name := range []string{"p95 of GET a", "mean of GET a"} {
		if s := runtest.DriftSeries(t, d, name); s.Verdict != results.DriftSteady {
			t.Errorf("%s: %s", name, s.Sentence)
		}
	}
	if !strings.Contains(d.Verdict, "from 9 m 41 s to 9 m 43 s") {
		t.Errorf("verdict: %s", d.Verdict)
	}
}

// A service not ready for the first 1.5 s of a run (every request refused
// at once, then all answered) is an incident at the start, not a
// degradation, and its refused requests are no throughput.
func TestIncidentNotReady(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	const n = 200 // 20 s at 100 ms
	rd := longRun(r, n, 100*time.Millisecond, func(int) float64 { return 2 }, lognormal, func(i int) int {
		if i < 15 {
			return 400 // refused at once: many more attempts than answers
		}
		return 40
	}, func(i int) int {
		if i < 15 {
			return 400
		}
		return 0
	})
	rd.Summary.Stages[0].Operations[0].Errors.Messages = []metrics.ErrorMessage{{Kind: "connect", Message: "connect: connection refused", Count: 6000}}
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded {
		t.Fatalf("degraded: %s", d.Verdict)
	}
	if len(d.Incidents) != 1 || d.Incidents[0].StartS != 0 || math.Abs(d.Incidents[0].EndS-1.5) > 0.15 {
		t.Fatalf("incidents %+v", d.Incidents)
	}
	if s := d.Incidents[0].Sentence; !strings.HasPrefix(s, "for the first 1.5 s of stage soak: ") ||
		!strings.Contains(s, "error ratio of GET a 100.00%, 6000 failures (most often: connect: connection refused), then back to 0.00%") {
		t.Errorf("incident: %s", d.Incidents[0].Sentence)
	}
	if tp := runtest.DriftSeries(t, d, "throughput"); tp.Verdict == results.DriftDegraded || tp.Start != 400 {
		t.Errorf("throughput: %s (from %v)", tp.Sentence, tp.Start)
	}
}

// starvedPoints are the generator's host and perflab's samples of a
// starved generator from sample k on: other processes take the host
// (busy 45% then 100%), its run queue goes from 8 to 24 tasks, perflab's
// own CPU falls from 0.6 to 0.08 cores; the loopback round trip stays.
func starvedPoints(n, k int, iv time.Duration) []monitor.Point {
	return starvedQueue(n, k, iv, 8, 24)
}

// starvedQueue is starvedPoints with the run queue from q0 to q1 tasks.
func starvedQueue(n, k int, iv time.Duration, q0, q1 float64) []monitor.Point {
	var out []monitor.Point
	cpu := 0.0
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * iv)
		busy, runq, self := 0.45, q0, 0.6
		if i >= k {
			busy, runq, self = 1.0, q1, 0.08
		}
		add := func(mon, metric string, v float64) {
			out = append(out, monitor.Point{Time: at, Monitor: mon, Metric: metric, Value: v})
		}
		add(results.GeneratorMonitor, monitor.MetricBusy, busy)
		add(results.GeneratorMonitor, monitor.MetricCPUs, 2)
		add(results.GeneratorMonitor, monitor.MetricRunQueue, runq)
		add(results.GeneratorMonitor, monitor.MetricLoopbackRTT, 0.00005)
		add(results.SelfMonitor, monitor.MetricCPUUser, cpu)
		add(results.SelfMonitor, monitor.MetricCPUSystem, 0)
		add(results.SelfMonitor, monitor.MetricRSS, 40<<20)
		cpu += self * iv.Seconds()
	}
	return out
}

// A flat service measured by a generator starved from 17 s on (its run
// queue tripled, other processes took its host, perflab got an eighth of
// its CPU): the p95 it measures rose 17-fold, far more than a scheduler's
// slice, and still the generator explains it: suspect, the sentence says
// what the generator's host did, the run is not degraded.
func TestStarvedGeneratorIsSuspect(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	const n, k = 300, 170 // 30 s at 100 ms, starved from 17 s
	rd := longRun(r, n, 100*time.Millisecond, func(i int) float64 {
		if i >= k {
			return 7.4
		}
		return 0.43
	}, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(200), constant(0))
	rd.Points = starvedPoints(n, k, 100*time.Millisecond)
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded {
		t.Fatalf("degraded: %s", d.Verdict)
	}
	p95 := runtest.DriftSeries(t, d, "p95 of GET a")
	t.Log(p95.Sentence)
	if p95.Verdict != results.DriftSuspect || !strings.Contains(p95.Sentence, "run queue of generator's host rose 200% from 8 tasks to 24 tasks") {
		t.Errorf("p95: %s", p95.Sentence)
	}
}

// One series, one verdict: the resources' leak verdict of a monitor's
// memory over a stage is the drift's where it judged that series, the
// leak rule's elsewhere.
func TestOneVerdictPerSeries(t *testing.T) {
	slope := 57.8 * (1 << 20)
	sum := &results.Summary{
		Resources: &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "soak", Monitors: []monitor.MonitorFigures{
			{Monitor: "api", Memory: []monitor.MemoryTrend{{Metric: "rss_bytes", SlopeBytesPerHour: &slope}}},
			{Monitor: "perflab", Memory: []monitor.MemoryTrend{{Metric: "rss_bytes", SlopeBytesPerHour: &slope, LeakSuspected: true}}},
			{Monitor: "db", Memory: []monitor.MemoryTrend{{Metric: "rss_bytes", LeakSuspected: true}}},
		}}}},
		Drift: &results.Drift{
			Series:    []results.DriftSeries{{Stage: "soak", Kind: seriesMemory, Monitor: "api", Verdict: results.DriftDegraded}},
			Generator: &results.GeneratorHealth{Series: []results.DriftSeries{{Stage: "soak", Kind: seriesMemory, Monitor: "perflab", Verdict: results.DriftSteady}}},
		},
	}
	OneVerdict(sum)
	mons := sum.Resources.Windows[0].Monitors
	if m := mons[0].Memory[0]; !m.LeakSuspected || m.Drift != results.DriftDegraded {
		t.Errorf("api: %+v", m)
	}
	if m := mons[1].Memory[0]; m.LeakSuspected || m.Drift != results.DriftSteady {
		t.Errorf("perflab: %+v", m)
	}
	if m := mons[2].Memory[0]; !m.LeakSuspected || m.Drift != "" {
		t.Errorf("db, not judged by the drift: %+v", m)
	}
}

// A leak that starts a third into a run is located where it started,
// within 5% of the run's length, in its sentence and on the timeline.
func TestLeakOnsetLocated(t *testing.T) {
	r := rand.New(rand.NewPCG(49, 50))
	const n = 600 // 60 s at 100 ms; the leak from 20 s
	rd := longRun(r, n, 100*time.Millisecond, func(int) float64 { return 2 }, lognormal, constant(50), constant(0))
	var pts []monitor.Point
	for i := 0; i <= n; i++ {
		mb := 80 + 0.4*float64(max(0, i-200)) + r.NormFloat64()
		pts = append(pts, monitor.Point{Time: runtest.T0.Add(time.Duration(i) * 100 * time.Millisecond), Monitor: "api", Metric: monitor.MetricRSS, Value: mb * (1 << 20)})
	}
	rd.Points = pts
	d := Longevity(rd, LongevityOptions{})
	mem := runtest.DriftSeries(t, d, "memory of api (rss)")
	if mem.Verdict != results.DriftDegraded || mem.Trend == nil || mem.Trend.OnsetS == nil || math.Abs(*mem.Trend.OnsetS-20) > 3 {
		t.Fatalf("memory: %s (%+v)", mem.Sentence, mem.Trend)
	}
	if !strings.Contains(mem.Sentence, "a steady trend that began after") {
		t.Errorf("memory: %s", mem.Sentence)
	}
	found := false
	for _, e := range d.Timeline {
		found = found || e.Series == mem.Name && math.Abs(e.AtS-*mem.Trend.OnsetS) < 1e-9
	}
	if !found {
		t.Errorf("the timeline does not place it at its onset: %+v", d.Timeline)
	}
}

// A latency excursion while the generator's host was saturated is a
// suspect incident; the verdict names what the generator cannot explain
// (a burst of failures), and counts the suspect ones.
func TestIncidentsVerdictOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	const n = 400
	iv := 100 * time.Millisecond
	rd := longRun(r, n, iv, func(i int) float64 {
		if between(i, 50, 80) {
			return 30
		}
		return 3
	}, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(30), func(i int) int {
		if between(i, 200, 260) {
			return 10
		}
		return 0
	})
	rd.Points = generatorPoints(n, iv, results.GeneratorMonitor, results.SelfMonitor, func(i int) float64 {
		if between(i, 50, 80) {
			return 0.97
		}
		return 0.3
	}, flat(0.05), flat(40))
	d := Longevity(rd, LongevityOptions{})
	if d.Degraded || len(d.Incidents) != 2 || d.Incidents[0].Suspect == "" || d.Incidents[1].Suspect != "" {
		t.Fatalf("verdict %s\nincidents %+v", d.Verdict, d.Incidents)
	}
	if !strings.Contains(d.Incidents[0].Suspect, "CPU busy share of generator's host at 97.00%") {
		t.Errorf("suspect: %s", d.Incidents[0].Suspect)
	}
	// The suspect one is counted, not named, beside one that is not.
	if !strings.Contains(d.Verdict, "2 incidents (1 of them while the generator's host was busier or saturated: suspect): from 20.0 s") ||
		!strings.Contains(d.Verdict, "error ratio of GET a 33.33%") || !strings.HasSuffix(d.Verdict, "; and 1 more.") || strings.Contains(d.Verdict, "p95 of GET a") {
		t.Errorf("verdict: %s", d.Verdict)
	}
}

// saturatedPoints are a generator's host saturated all along (97% busy,
// 10 tasks runnable on its 2 cores), perflab's own CPU flat.
func saturatedPoints(n int, iv time.Duration) []monitor.Point {
	var out []monitor.Point
	for i := 0; i <= n; i++ {
		at := runtest.T0.Add(time.Duration(i) * iv)
		add := func(mon, metric string, v float64) {
			out = append(out, monitor.Point{Time: at, Monitor: mon, Metric: metric, Value: v})
		}
		add(results.GeneratorMonitor, monitor.MetricBusy, 0.97)
		add(results.GeneratorMonitor, monitor.MetricCPUs, 2)
		add(results.GeneratorMonitor, monitor.MetricRunQueue, 10)
		add(results.GeneratorMonitor, monitor.MetricLoopbackRTT, 0.00008)
		add(results.SelfMonitor, monitor.MetricCPUUser, 0.3*float64(i)*iv.Seconds())
		add(results.SelfMonitor, monitor.MetricCPUSystem, 0)
		add(results.SelfMonitor, monitor.MetricRSS, 40<<20)
	}
	return out
}

// On a host saturated all along (10 tasks runnable on 2 cores), a p95 that
// rose from 4.6 to 7.4 ms is within what a wait for a core makes (up to
// 7.5 ms: 1.5 ms for each task on each core): suspect, the wait named. A
// rise from 20 to 60 ms is more than that: the system's.
func TestSaturatedHostExplainsItsWait(t *testing.T) {
	for _, c := range []struct {
		from, to float64
		verdict  string
	}{{4.6, 7.4, results.DriftSuspect}, {20, 60, results.DriftDegraded}} {
		r := rand.New(rand.NewPCG(53, 54))
		const n = 300
		rd := longRun(r, n, 100*time.Millisecond, func(i int) float64 {
			if i >= 150 {
				return c.to
			}
			return c.from
		}, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(100), constant(0))
		rd.Points = saturatedPoints(n, 100*time.Millisecond)
		d := Longevity(rd, LongevityOptions{})
		p95 := runtest.DriftSeries(t, d, "p95 of GET a")
		if p95.Verdict != c.verdict {
			t.Errorf("%v to %v ms: %s", c.from, c.to, p95.Sentence)
		}
		if c.verdict == results.DriftSuspect && (d.Degraded || !strings.Contains(p95.Sentence, "10 tasks runnable on 2 cores: a wait of up to 7.500 ms for a core")) {
			t.Errorf("%s\n%s", p95.Sentence, d.Verdict)
		}
	}
}

// A real step from 3 to 13 ms while the host's run queue went from 4 to 9
// tasks on 2 cores is more than the generator's waits for a core make (up
// to 6.75 ms): the system's, degraded, however starved the generator.
func TestStarvedGeneratorExplainsOnlyItsWaits(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	const n, k = 300, 150
	rd := longRun(r, n, 100*time.Millisecond, func(i int) float64 {
		if i >= k {
			return 13
		}
		return 3
	}, func(r *rand.Rand) float64 { return math.Exp(0.1 * r.NormFloat64()) }, constant(200), constant(0))
	rd.Points = starvedQueue(n, k, 100*time.Millisecond, 4, 9)
	d := Longevity(rd, LongevityOptions{})
	if p95 := runtest.DriftSeries(t, d, "p95 of GET a"); p95.Verdict != results.DriftDegraded || !d.Degraded {
		t.Errorf("p95: %s\n%s", p95.Sentence, d.Verdict)
	}
}
