package monitor

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// synthetic builds points every 10 s for 100 s: an "api" JVM using 0.5 CPU
// seconds per second (0.4 user, 0.1 system), 2 young collections of 10 ms
// per interval and one full collection of 200 ms at 50 s, RSS rising 1 MB
// per interval, 4 threads; and a "host" 95% busy until 50 s, then 40%.
func synthetic() []Point {
	var pts []Point
	add := func(mon, metric string, s, v float64) {
		pts = append(pts, Point{Time: at(s), Monitor: mon, Metric: metric, Value: v})
	}
	for i := 0; i <= 10; i++ {
		s := float64(i * 10)
		add("api", MetricCPUUser, s, 0.4*s)
		add("api", MetricCPUSystem, s, 0.1*s)
		add("api", MetricGCYoungCount, s, float64(2*i))
		add("api", MetricGCYoungTime, s, 0.020*float64(i))
		full := 0.0
		if s >= 50 {
			full = 1
		}
		add("api", MetricGCFullCount, s, full)
		add("api", MetricGCFullTime, s, 0.2*full)
		add("api", MetricRSS, s, float64(100<<20+i<<20))
		add("api", MetricThreads, s, 4)
		busy := 0.95
		if s > 50 {
			busy = 0.4
		}
		add("host", MetricBusy, s, busy)
		add("host", MetricBusyMaxCore, s, 1)
	}
	return pts
}

func TestAnalyzeWindows(t *testing.T) {
	finals := []*Final{nil, {Monitor: "db", SlowQueries: []SlowQuery{{Monitor: "db", Query: "SELECT pg_sleep($1)", Calls: 3, MeanMS: 150}}}}
	a := Analyze(synthetic(), finals, []Window{
		{Name: "first", Start: at(0), End: at(50), Transactions: 500},
		{Name: "shifted", Start: at(5), End: at(55), Transactions: 0},
		{Name: "second", Start: at(50), End: at(100), Transactions: 250},
	})
	if len(a.Windows) != 3 || len(a.SlowQueries) != 1 {
		t.Fatalf("%d windows, %d slow queries", len(a.Windows), len(a.SlowQueries))
	}
	first, shifted, second := a.Windows[0], a.Windows[1], a.Windows[2]
	api := first.Monitors[0]
	if api.Monitor != "api" || api.Samples != 6 || first.Monitors[1].Monitor != "host" {
		t.Fatalf("monitors %+v", first.Monitors)
	}

	// CPU: 25 s in 50 s, for 500 transactions.
	c := api.CPU
	if !near(c.Seconds, 25) || !near(c.UserSeconds, 20) || !near(c.Cores, 0.5) || c.MSPerTx == nil || !near(*c.MSPerTx, 50) {
		t.Errorf("cpu %+v", *c)
	}
	// Edges between samples are interpolated: still 25 s.
	if sc := shifted.Monitors[0].CPU; !near(sc.Seconds, 25) || sc.MSPerTx != nil {
		t.Errorf("shifted window cpu %+v, want 25 s and no ms per transaction", *sc)
	}
	if s := second.Monitors[0].CPU; !near(*s.MSPerTx, 100) {
		t.Errorf("second window: %v ms per transaction, want 100", *s.MSPerTx)
	}

	// GC: 10 young collections of 10 ms per window; the full one at 50 s
	// falls in the interval 40-50 s, in the first window.
	g := api.GC
	if g.YoungCount != 10 || !near(g.YoungAvgMS, 10) || g.FullCount != 1 || !near(g.FullAvgMS, 200) || !near(g.TimeRatio, 0.3/50) {
		t.Errorf("gc %+v", *g)
	}
	if g2 := second.Monitors[0].GC; g2.FullCount != 0 || g2.FullAvgMS != 0 {
		t.Errorf("second window gc %+v", *g2)
	}

	// Memory: its level; 50 s of samples are too few for a slope per hour
	// or a leak verdict.
	if len(api.Memory) != 1 {
		t.Fatalf("memory %+v", api.Memory)
	}
	mem := api.Memory[0]
	if mem.Metric != MetricRSS || mem.PeakBytes != 105<<20 || !near(mem.AvgBytes, 102.5*(1<<20)) {
		t.Errorf("memory %+v", mem)
	}
	if !mem.TooShort || mem.SlopeBytesPerHour != nil || mem.TrendP != nil || mem.LeakSuspected {
		t.Errorf("6 samples in 50 s judged for a trend: %+v", mem)
	}
	// 1 MB every 30 s for 15 minutes: 120 MB an hour, a leak.
	var long []Point
	for i := 0; i <= 30; i++ {
		long = append(long, Point{Time: at(30 * float64(i)), Monitor: "api", Metric: MetricRSS, Value: float64(100<<20 + i<<20)})
	}
	whole := Analyze(long, nil, []Window{{Start: at(0), End: at(900)}}).Windows[0].Monitors[0].Memory[0]
	if whole.TooShort || whole.SlopeBytesPerHour == nil || !near(*whole.SlopeBytesPerHour, 120<<20) || !whole.LeakSuspected {
		t.Errorf("31 steadily rising samples over 15 minutes: %+v", whole)
	}
	if len(api.Gauges) != 1 || api.Gauges[0] != (GaugeFigures{Metric: MetricThreads, Min: 4, Avg: 4, Max: 4}) {
		t.Errorf("gauges %+v", api.Gauges)
	}

	// Host: 95% busy in the first window (saturated), 40% in the second.
	if h := first.Monitors[1].Host; !near(h.BusyAvg, 0.95) || !h.Saturated || h.MaxCoreBusyMax != 1 || !first.Saturated() {
		t.Errorf("first window host %+v", *h)
	}
	// The sample at 50 s (95%) covers 40-50 s, before the second window: its
	// maximum is 40% too.
	if h := second.Monitors[1].Host; !near(h.BusyAvg, 0.4) || h.Saturated || second.Saturated() || h.BusyMax != 0.4 {
		t.Errorf("second window host %+v", *h)
	}
}

func TestIncreaseRestart(t *testing.T) {
	// A counter at 10, 20, then its source restarted: 5, 15.
	s := []sample{{at(0), 10}, {at(10), 20}, {at(20), 5}, {at(30), 15}}
	if got := increase(s, Window{Start: at(0), End: at(30)}); got != 25 {
		t.Errorf("increase = %v, want 10 + 5 + 10", got)
	}
	if got := increase(s, Window{Start: at(100), End: at(200)}); got != 0 {
		t.Errorf("increase outside the samples = %v", got)
	}
}

func TestAnalysisJSON(t *testing.T) {
	a := Analyze(synthetic(), nil, []Window{{Name: "all", Start: at(0), End: at(100), Transactions: 10}})
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"windows"`, `"slow_queries":[]`, `"ms_per_tx"`, `"young_avg_ms"`, `"slope_bytes_per_hour"`,
		`"leak_suspected"`, `"trend_p"`, `"busy_avg"`, `"saturated"`, `"gauges"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("no %s in %s", key, b)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A window narrower than the sampling interval but inside the samples'
// span: CPU seconds are interpolated and cores are per second of the
// window, not of the one sample inside it.
func TestCoresInterpolatedAtTheEdges(t *testing.T) {
	w := Window{Name: "stage", Start: at(12), End: at(28), Transactions: 8}
	a := Analyze(synthetic(), nil, []Window{w})
	for _, m := range a.Windows[0].Monitors {
		if m.Monitor != "api" {
			continue
		}
		if c := m.CPU; c == nil || math.Abs(c.Seconds-8) > 1e-9 || math.Abs(c.Cores-0.5) > 1e-9 || math.Abs(*c.MSPerTx-1000) > 1e-6 {
			t.Errorf("cpu %+v, want 8 s, 0.5 cores, 1000 ms per transaction", c)
		}
	}
}

// A window between two samples (a stage shorter than the gap between them)
// gets its CPU interpolated from the samples around it.
func TestWindowBetweenSamples(t *testing.T) {
	a := Analyze(synthetic(), nil, []Window{{Name: "short", Start: at(12), End: at(16), Transactions: 4}})
	var api *MonitorFigures
	for i, m := range a.Windows[0].Monitors {
		if m.Monitor == "api" {
			api = &a.Windows[0].Monitors[i]
		}
	}
	// 0.5 CPU s per second for 4 s.
	if api == nil || api.Samples != 0 || api.CPU == nil || math.Abs(api.CPU.Seconds-2) > 1e-9 || api.CPU.MSPerTx == nil || math.Abs(*api.CPU.MSPerTx-500) > 1e-6 {
		t.Fatalf("%+v", api)
	}
	// Its memory and threads: the levels of the samples around it, at 10 s
	// (101 MB) and 20 s (102 MB).
	if len(api.Memory) != 1 || api.Memory[0].PeakBytes != 102<<20 || api.Memory[0].AvgBytes != 101.5*(1<<20) || !api.Memory[0].TooShort {
		t.Errorf("memory %+v, want a peak of 102 MB and an average of 101.5 MB", api.Memory)
	}
	if len(api.Gauges) != 1 || api.Gauges[0].Metric != MetricThreads || api.Gauges[0].Max != 4 {
		t.Errorf("gauges %+v", api.Gauges)
	}
}

// The window's figures go through only the samples whose spans can
// overlap it (spans): the same figures as going through all of them.
func TestSpansLeaveOutNothing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var s []sample
	for i, t := 0, 0.0; i < 200; i++ {
		t += float64(r.IntN(3)) // equal times too
		s = append(s, sample{at(t), r.Float64() * 100})
	}
	all := func(w Window) (inc, avg, mx float64) {
		var sum, weight float64
		for i := 1; i < len(s); i++ {
			a, b := s[i-1], s[i]
			inside := overlap(a.t, b.t, w)
			if span := b.t.Sub(a.t).Seconds(); span > 0 && inside > 0 {
				step := b.v - a.v
				if step < 0 {
					step = b.v
				}
				inc += step * inside / span
			}
			if inside > 0 {
				sum += b.v * inside
				weight += inside
				mx = max(mx, b.v)
			}
		}
		if weight > 0 {
			avg = sum / weight
		}
		return inc, avg, mx
	}
	for range 2000 {
		a, b := r.Float64()*450-25, r.Float64()*450-25
		w := Window{Start: at(min(a, b)), End: at(max(a, b))}
		if r.IntN(10) == 0 { // a window on a sample's time
			w.Start = s[r.IntN(len(s))].t
		}
		inc, avg, mx := all(w)
		if got := increase(s, w); got != inc {
			t.Fatalf("%v-%v: increase %v, want %v", w.Start, w.End, got, inc)
		}
		if got := intervalAverage(s, w); got != avg {
			t.Fatalf("%v-%v: average %v, want %v", w.Start, w.End, got, avg)
		}
		if got := overlapMax(s, w); got != mx {
			t.Fatalf("%v-%v: max %v, want %v", w.Start, w.End, got, mx)
		}
	}
}
