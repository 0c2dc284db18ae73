package monitor

import (
	"iter"
	"math"
	"slices"
	"sort"
	"time"
)

// SaturationBusy is the average CPU busy fraction of the load generator's
// machine (a host monitor's cpu_busy_ratio, all cores) at or above which a
// window is flagged saturated: the generator, not only the system under
// test, may have limited the load.
const SaturationBusy = 0.9

// memoryMetrics are the metrics whose trend is tested for a leak. The
// first a monitor has is the one the tables show: pss_bytes before
// rss_bytes, as a set of processes' summed RSS counts their shared memory
// once per process.
var memoryMetrics = []string{MetricPSS, MetricRSS, MetricHeapUsed, MetricCgroupAnon, MetricCgroupMemory}

// Window is a span of a run to analyze, such as a stage, with the number of
// transactions completed in it.
type Window struct {
	Name         string
	Start, End   time.Time
	Transactions int64
}

// Analysis is the monitors' figures per window, and the slow-query tables.
type Analysis struct {
	Windows     []WindowFigures `json:"windows"`
	SlowQueries []SlowQuery     `json:"slow_queries"`
}

// WindowFigures are the figures of every monitor in one window.
type WindowFigures struct {
	Window       string           `json:"window"`
	Start        time.Time        `json:"start"`
	End          time.Time        `json:"end"`
	Transactions int64            `json:"transactions"`
	Monitors     []MonitorFigures `json:"monitors"`
}

// Saturated tells whether a host monitor found the load generator's CPU
// saturated in the window (see SaturationBusy).
func (w WindowFigures) Saturated() bool {
	for _, m := range w.Monitors {
		if m.Host != nil && m.Host.Saturated {
			return true
		}
	}
	return false
}

// MonitorFigures are one monitor's figures in a window; a section is
// absent when the monitor has no metric for it.
type MonitorFigures struct {
	Monitor string        `json:"monitor"`
	Samples int           `json:"samples"` // samples taken in the window
	CPU     *CPUFigures   `json:"cpu,omitempty"`
	Memory  []MemoryTrend `json:"memory,omitempty"`
	GC      *GCFigures    `json:"gc,omitempty"`
	// Statements are a PostgreSQL server's statements in the window.
	Statements *StatementFigures `json:"statements,omitempty"`
	Host       *HostFigures      `json:"host,omitempty"`
	Gauges     []GaugeFigures    `json:"gauges,omitempty"` // other levels: threads, connections, scraped series...
}

// CPUFigures is the CPU used in a window (user + system). Cumulative
// metrics are interpolated linearly between samples at the window's edges.
type CPUFigures struct {
	Seconds       float64 `json:"seconds"`
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	// Cores is Seconds per second of the sampled part of the window: the
	// average number of cores kept busy.
	Cores float64 `json:"cores"`
	// MSPerTx is CPU milliseconds per transaction completed in the window;
	// null when none was.
	MSPerTx *float64 `json:"ms_per_tx"`
	// ThrottledSeconds is the time a cgroup was held back by its CPU limit.
	ThrottledSeconds float64 `json:"throttled_seconds,omitempty"`
}

// MemoryTrend is a memory metric's level and trend in a window. The trend
// needs data: a window of less than MinTrendSpan or MinTrendSamples
// samples is TooShort, and has no slope and no leak verdict (a slope per
// hour from 20 seconds is noise, not a figure). TrendP is the
// Mann-Kendall p-value of the leak rule (see trend.go), null when the
// window is too short to judge; LeakSuspected follows the rule.
type MemoryTrend struct {
	Metric    string  `json:"metric"`
	AvgBytes  float64 `json:"avg_bytes"`
	PeakBytes float64 `json:"peak_bytes"`
	// SlopeBytesPerHour is the least-squares slope over the window's
	// samples; null when the window is too short.
	SlopeBytesPerHour *float64 `json:"slope_bytes_per_hour"`
	TrendP            *float64 `json:"trend_p"`
	LeakSuspected     bool     `json:"leak_suspected"`
	TooShort          bool     `json:"too_short,omitempty"`
	// Drift is the verdict of the same series over the run's intervals
	// (results.DriftSeries' verdict: degraded, steady, settled, ...),
	// where the drift judged it: then it is the series' one verdict, and
	// LeakSuspected says the same (degraded: a leak, or for the load
	// generator's own memory, a growth). Empty where it was not judged.
	Drift string `json:"drift,omitempty"`
}

// MinTrendSpan and MinTrendSamples are the least data a memory trend (a
// slope per hour, a leak verdict) is given for.
const (
	MinTrendSpan    = 10 * time.Minute
	MinTrendSamples = 20
)

// GCFigures are a JVM's collections in a window, and their average pause.
type GCFigures struct {
	YoungCount int64   `json:"young_count"`
	YoungAvgMS float64 `json:"young_avg_ms"`
	FullCount  int64   `json:"full_count"`
	FullAvgMS  float64 `json:"full_avg_ms"`
	TimeRatio  float64 `json:"time_ratio"` // share of the window spent collecting
}

// StatementFigures are the statements a database ran in a window: how
// many, and their mean execution time.
type StatementFigures struct {
	Calls  int64   `json:"calls"`
	MeanMS float64 `json:"mean_ms"`
}

// HostFigures are the load generator's CPU in a window: busy fractions of
// all cores averaged over time, their highest sample, and the highest
// sample of the busiest core.
type HostFigures struct {
	BusyAvg        float64 `json:"busy_avg"`
	BusyMax        float64 `json:"busy_max"`
	MaxCoreBusyMax float64 `json:"max_core_busy_max"`
	Saturated      bool    `json:"saturated"`
	// StealAvg is the share of the host's CPU time a hypervisor gave to
	// other guests (0..1).
	StealAvg float64 `json:"steal_avg,omitempty"`
}

// GaugeFigures summarize a level metric's samples in a window.
type GaugeFigures struct {
	Metric string  `json:"metric"`
	Min    float64 `json:"min"`
	Avg    float64 `json:"avg"`
	Max    float64 `json:"max"`
}

// sample is one point of a series.
type sample struct {
	t time.Time
	v float64
}

// Analyze computes the figures of every monitor in every window, and
// gathers the slow-query tables of the finals.
func Analyze(points []Point, finals []*Final, windows []Window) Analysis {
	return analyzeSeq(slices.Values(points), finals, windows)
}

func analyzeSeq(points iter.Seq[Point], finals []*Final, windows []Window) Analysis {
	series := map[string]map[string][]sample{} // monitor → metric → samples
	for p := range points {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			continue // not a measurement: a gap
		}
		if series[p.Monitor] == nil {
			series[p.Monitor] = map[string][]sample{}
		}
		series[p.Monitor][p.Metric] = append(series[p.Monitor][p.Metric], sample{p.Time, p.Value})
	}
	monitors := make([]string, 0, len(series))
	for name, metrics := range series {
		monitors = append(monitors, name)
		for _, s := range metrics {
			sort.SliceStable(s, func(i, j int) bool { return s[i].t.Before(s[j].t) })
		}
	}
	sort.Strings(monitors)

	a := Analysis{Windows: []WindowFigures{}, SlowQueries: []SlowQuery{}}
	for _, w := range windows {
		wf := WindowFigures{Window: w.Name, Start: w.Start, End: w.End, Transactions: w.Transactions, Monitors: []MonitorFigures{}}
		for _, name := range monitors {
			if mf, ok := monitorFigures(name, series[name], w); ok {
				wf.Monitors = append(wf.Monitors, mf)
			}
		}
		a.Windows = append(a.Windows, wf)
	}
	for _, f := range finals {
		if f != nil {
			a.SlowQueries = append(a.SlowQueries, f.SlowQueries...)
		}
	}
	return a
}

// monitorFigures computes one monitor's figures in a window; false if it
// has no sample there.
func monitorFigures(name string, metrics map[string][]sample, w Window) (MonitorFigures, bool) {
	mf := MonitorFigures{Monitor: name}
	taken := map[int64]bool{} // the times of the samples
	for _, s := range metrics {
		for _, x := range within(s, w) {
			taken[x.t.UnixNano()] = true
		}
	}
	mf.Samples = len(taken)
	if mf.Samples == 0 {
		// A window shorter than the gaps between samples (a stage whose
		// start mark came too soon after the last sample to be taken) still
		// gets its cumulative figures, interpolated between the samples
		// around it.
		around := false
		for _, s := range metrics {
			around = around || len(s) > 0 && s[0].t.Before(w.Start) && s[len(s)-1].t.After(w.End)
		}
		if !around {
			return mf, false
		}
	}

	if user, ok := metrics[MetricCPUUser]; ok {
		c := &CPUFigures{UserSeconds: increase(user, w), SystemSeconds: increase(metrics[MetricCPUSystem], w)}
		c.Seconds = c.UserSeconds + c.SystemSeconds
		// increase interpolates between the samples around the window's
		// edges: the seconds cover the window as far as samples reach.
		if span := interpolated(user, w); span > 0 {
			c.Cores = c.Seconds / span
		}
		if w.Transactions > 0 {
			ms := c.Seconds * 1000 / float64(w.Transactions)
			c.MSPerTx = &ms
		}
		c.ThrottledSeconds = increase(metrics[MetricCgroupThrottled], w)
		mf.CPU = c
	}
	if young, ok := metrics[MetricGCYoungCount]; ok {
		g := &GCFigures{}
		yc, yt := increase(young, w), increase(metrics[MetricGCYoungTime], w)
		fc, ft := increase(metrics[MetricGCFullCount], w), increase(metrics[MetricGCFullTime], w)
		g.YoungCount, g.FullCount = int64(math.Round(yc)), int64(math.Round(fc))
		if yc > 0 {
			g.YoungAvgMS = yt * 1000 / yc
		}
		if fc > 0 {
			g.FullAvgMS = ft * 1000 / fc
		}
		if span := interpolated(young, w); span > 0 {
			g.TimeRatio = (yt + ft) / span
		}
		mf.GC = g
	}
	if calls, ok := metrics[MetricStatementCalls]; ok {
		c, ms := increase(calls, w), increase(metrics[MetricStatementTime], w)
		st := &StatementFigures{Calls: int64(math.Round(c))}
		if c > 0 {
			st.MeanMS = ms / c
		}
		mf.Statements = st
	}
	if busy, ok := metrics[MetricBusy]; ok {
		// A busy sample is the average over the time since the previous
		// one: every sample whose span overlaps the window counts, as in
		// the average.
		h := &HostFigures{BusyAvg: intervalAverage(busy, w), BusyMax: overlapMax(busy, w), MaxCoreBusyMax: overlapMax(metrics[MetricBusyMaxCore], w)}
		h.Saturated = h.BusyAvg >= SaturationBusy
		if steal, ok := metrics[MetricSteal]; ok {
			h.StealAvg = intervalAverage(steal, w)
		}
		mf.Host = h
	}

	covers := map[string]bool{MetricBusy: true, MetricBusyMaxCore: true, MetricSteal: true}
	for _, metric := range memoryMetrics {
		covers[metric] = true
		if in := levels(metrics[metric], w); len(in) > 0 {
			mf.Memory = append(mf.Memory, memoryTrend(metric, in))
		}
	}
	var gauges []string
	for metric := range metrics {
		if !cumulative[metric] && !covers[metric] {
			gauges = append(gauges, metric)
		}
	}
	sort.Strings(gauges)
	for _, metric := range gauges {
		in := levels(metrics[metric], w)
		if len(in) == 0 {
			continue
		}
		g := GaugeFigures{Metric: metric, Min: in[0].v, Max: in[0].v}
		for _, s := range in {
			g.Min, g.Max = min(g.Min, s.v), max(g.Max, s.v)
			g.Avg += s.v
		}
		g.Avg /= float64(len(in))
		mf.Gauges = append(mf.Gauges, g)
	}
	return mf, true
}

// within returns the samples of s inside the window, ends included.
func within(s []sample, w Window) []sample {
	lo := sort.Search(len(s), func(i int) bool { return !s[i].t.Before(w.Start) })
	hi := sort.Search(len(s), func(i int) bool { return s[i].t.After(w.End) })
	if lo >= hi {
		return nil
	}
	return s[lo:hi]
}

// levels are the samples of a level (memory, a gauge) that tell the
// window's: those inside it; for a window between two samples with none
// inside (a stage shorter than the sampling interval, its edges' samples
// taken just outside it), the two around it, the levels it went between.
// A window with no sample before or after it has none.
func levels(s []sample, w Window) []sample {
	if in := within(s, w); len(in) > 0 {
		return in
	}
	after := sort.Search(len(s), func(i int) bool { return s[i].t.After(w.End) })
	if after == 0 || after == len(s) {
		return nil
	}
	return s[after-1 : after+1]
}

// increase is how much a cumulative series grew in the window: each step
// between consecutive samples counts for the part of its interval inside
// the window (linear interpolation), and a step down is a restart of the
// source, which counted again from zero.
func increase(s []sample, w Window) float64 {
	total := 0.0
	lo, hi := spans(s, w)
	for i := lo; i < hi; i++ {
		a, b := s[i-1], s[i]
		span := b.t.Sub(a.t).Seconds()
		inside := overlap(a.t, b.t, w)
		if span <= 0 || inside <= 0 {
			continue
		}
		step := b.v - a.v
		if step < 0 {
			step = b.v
		}
		total += step * inside / span
	}
	return total
}

// intervalAverage is the time-weighted average of a series whose samples
// each describe the interval since the previous sample, such as the host's
// busy fractions.
func intervalAverage(s []sample, w Window) float64 {
	var sum, weight float64
	lo, hi := spans(s, w)
	for i := lo; i < hi; i++ {
		inside := overlap(s[i-1].t, s[i].t, w)
		if inside > 0 {
			sum += s[i].v * inside
			weight += inside
		}
	}
	if weight == 0 {
		return 0
	}
	return sum / weight
}

// spans is the range [lo, hi) of the i whose span from sample i-1 to
// sample i can overlap the window (it ends after the window starts and
// starts before it ends): the others add nothing, and a sweep of
// thousands of stages would otherwise go through every sample of the run
// for every stage.
func spans(s []sample, w Window) (lo, hi int) {
	lo = max(1, sort.Search(len(s), func(i int) bool { return s[i].t.After(w.Start) }))
	hi = min(len(s), 1+sort.Search(len(s), func(i int) bool { return !s[i].t.Before(w.End) }))
	return lo, hi
}

// overlap is how many seconds of the interval [a, b] lie in the window.
func overlap(a, b time.Time, w Window) float64 {
	if a.Before(w.Start) {
		a = w.Start
	}
	if b.After(w.End) {
		b = w.End
	}
	return max(0, b.Sub(a).Seconds())
}

// memoryTrend computes a memory metric's figures from its samples in a
// window.
func memoryTrend(metric string, in []sample) MemoryTrend {
	t, v := make([]float64, len(in)), make([]float64, len(in))
	m := MemoryTrend{Metric: metric}
	for i, s := range in {
		t[i] = s.t.Sub(in[0].t).Hours()
		v[i] = s.v
		m.PeakBytes = max(m.PeakBytes, s.v)
	}
	m.AvgBytes = mean(v)
	if len(in) < MinTrendSamples || in[len(in)-1].t.Sub(in[0].t) < MinTrendSpan {
		m.TooShort = true
		return m
	}
	slope := olsSlope(t, v)
	m.SlopeBytesPerHour = &slope
	if p, leak, ok := leakTest(t, v); ok {
		m.TrendP, m.LeakSuspected = &p, leak
	}
	return m
}

// interpolated is the part of the window, in seconds, that a cumulative
// series' samples span (increase interpolates within it).
func interpolated(s []sample, w Window) float64 {
	if len(s) == 0 {
		return 0
	}
	a, b := w.Start, w.End
	if s[0].t.After(a) {
		a = s[0].t
	}
	if s[len(s)-1].t.Before(b) {
		b = s[len(s)-1].t
	}
	return max(b.Sub(a).Seconds(), 0)
}

// overlapMax is the largest value of the samples whose span (from the
// previous sample) overlaps the window.
func overlapMax(s []sample, w Window) float64 {
	m := 0.0
	lo, hi := spans(s, w)
	for i := lo; i < hi; i++ {
		if overlap(s[i-1].t, s[i].t, w) > 0 {
			m = max(m, s[i].v)
		}
	}
	return m
}
