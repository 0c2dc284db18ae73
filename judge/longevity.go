package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// LongevityOptions say what a longevity verdict tests, and how strictly.
// The zero value is the defaults.
type LongevityOptions struct {
	// Percentiles of each operation's latency tested beside its mean
	// (default 95).
	Percentiles []float64
	// Alpha is the family-wise significance level (DefaultDriftAlpha).
	Alpha float64
	// MinEffect is the smallest relative change that counts
	// (DefaultMinEffect), MinErrorRise the smallest rise of an error
	// ratio, absolute (DefaultMinErrorRise).
	MinEffect, MinErrorRise float64
	// First and Last are the stretches at the start and the end of each
	// stage whose levels are compared (default: its first and last tenth).
	First, Last time.Duration
}

// The defaults of LongevityOptions, and the limits of what is judged.
const (
	DefaultDriftAlpha   = 0.01
	DefaultMinEffect    = 0.20
	DefaultMinErrorRise = 0.01
	// MinDriftValues is the fewest intervals a series needs to be judged.
	MinDriftValues = 12
	// MinRateSpan is the shortest span of a series whose slope is given
	// as a rate per hour: a rate per hour from 20 seconds is noise.
	MinRateSpan = 10 * time.Minute
	// maxDriftPoints bounds the points of a series kept for its chart.
	maxDriftPoints = 120
	// minSegment is the fewest blocks on each side of a change of level.
	minSegment = 3
)

// Kinds of drift series.
const (
	seriesThroughput = "throughput"
	seriesErrors     = "errors"
	seriesLatency    = "latency"
	seriesCPU        = "cpu_per_tx"
	seriesMemory     = "memory"
	seriesGC         = "gc"
	seriesStatements = "statements"
	// the generator's own
	seriesDelay    = "start_delay"
	seriesGenCPU   = "generator_cpu"
	seriesHostBusy = "host_busy"
	seriesOther    = "host_other"
	seriesSteal    = "host_steal"
	seriesRunQueue = "run_queue"
	seriesLoopback = "loopback_rtt"
)

// minGeneratorRise is the smallest rise of a share of the generator's
// host's CPU that counts (in points of a hundred): a tenth of its time.
const minGeneratorRise = 0.10

// minGeneratorGrowth is the smallest relative change of the generator's
// run queue and loopback round trip that counts: they double.
const minGeneratorGrowth = 1.0

// series is one series of a stage before it is judged.
type series struct {
	out    results.DriftSeries
	t, v   []float64 // seconds into the stage, values
	lower  bool      // lower is worse (throughput)
	points bool      // the error ratio: changes are in points, not relative
	trend  analyze.Trend
	change *analyze.ChangePoint
	at     float64 // the change's time, seconds into the stage
	split  int     // the change's index in the series
	pt, pc float64 // the trend's p, and the change's corrected for the splits
	p, adj float64 // the series' test: 2 min(pt, pc), and after Holm's correction
	// gen: a series of the generator's own; least overrides the minimum
	// effect (0: the options'); floor is the smallest absolute change that
	// counts (0: none), in the series' unit.
	gen          bool
	least, floor float64
	// settled: the series changed in its stage's first quarter and stayed
	// level after (a warm-up); from is the index it is judged from.
	settled bool
	from    int
	// elapsed is the stage's start, seconds into the run.
	elapsed float64
	// fails are an error ratio's failures, value by value; message its
	// operation's most frequent failure.
	fails, counts []int64
	message       string
	// chart is the series' points before its incidents were taken out.
	chart [][2]float64
	// cpus is, for a host's run queue, the host's cores.
	cpus float64
}

// Longevity judges whether a run degraded over time (results.Drift): for
// each stage, its throughput and error ratio per interval, each step's and
// transaction's mean and percentiles of latency, and what the monitors of
// the system under test saw per interval (CPU per transaction, memory,
// time in garbage collection, PostgreSQL statements' mean time), each
// tested for a trend (analyze.MannKendall) and for a change of level
// (analyze.ChangePoints over analyze.Decorrelated blocks), all the tests
// together under Holm's correction. A series degraded when a test finds it
// worse at the family's alpha by at least the minimum effect: throughput
// lower, the others higher. Nil when no stage has MinDriftValues
// intervals: a run too short for a verdict has none.
func Longevity(rd *results.Run, o LongevityOptions) *results.Drift {
	if len(o.Percentiles) == 0 {
		o.Percentiles = []float64{95}
	}
	o.Alpha = cmp.Or(o.Alpha, DefaultDriftAlpha)
	o.MinEffect = cmp.Or(o.MinEffect, DefaultMinEffect)
	o.MinErrorRise = cmp.Or(o.MinErrorRise, DefaultMinErrorRise)
	var all, gen []*series
	floors := map[string]float64{}
	var runStart time.Time
	if len(rd.Summary.Stages) > 0 {
		runStart = rd.Summary.Stages[0].Start
	}
	var incidents []results.Incident
	for _, ph := range rd.Summary.Stages {
		sys, g, floor, opErrs := stageSeries(rd, ph, o)
		if floor > 0 {
			floors[ph.Name] = floor
		}
		incidents = append(incidents, findIncidents(ph, runStart, sys, opErrs, g, rd.Summary.Interval, o)...)
		for _, s := range append(slices.Clone(sys), g...) {
			s.elapsed = ph.Start.Sub(runStart).Seconds()
		}
		all, gen = append(all, sys...), append(gen, g...)
	}
	judged := 0
	for _, s := range all {
		if len(s.v) >= MinDriftValues {
			judged++
		}
	}
	if judged == 0 {
		return nil
	}
	for _, s := range append(slices.Clone(all), gen...) {
		if len(s.v) >= MinDriftValues {
			s.test(o)
		}
	}
	// The system's series are one family, the generator's another: a test
	// of the generator does not weaken those of the system.
	m := holm(all)
	holm(gen)
	d := &results.Drift{Alpha: o.Alpha, MinEffect: o.MinEffect, MinErrorRise: o.MinErrorRise, Tests: m,
		FirstS: o.First.Seconds(), LastS: o.Last.Seconds(), Series: []results.DriftSeries{}}
	if len(floors) > 0 {
		d.Floors = floors
	}
	for _, s := range gen {
		s.judge(o)
	}
	var degraded, unclear, suspect []*series
	steady, short := 0, 0
	for _, s := range all {
		s.judge(o)
	}
	suspects(all, gen)
	for _, s := range all {
		d.Series = append(d.Series, s.out)
		switch s.out.Verdict {
		case results.DriftDegraded:
			degraded = append(degraded, s)
		case results.DriftSuspect:
			suspect = append(suspect, s)
		case results.DriftInconclusive:
			unclear = append(unclear, s)
		case results.DriftTooShort:
			short++
		default:
			steady++
		}
	}
	d.Degraded = len(degraded) > 0
	d.Incidents = lasting(incidents, all)
	d.Verdict = verdict(degraded, unclear, suspect, steady, short, d.Incidents)
	if len(gen) > 0 {
		d.Generator = generatorHealth(gen)
	}
	d.Timeline, d.Hint = timeline(all, gen)
	stretches := "the first and last tenth of each stage"
	if o.First > 0 || o.Last > 0 {
		stretches = fmt.Sprintf("the first %s and the last %s of each stage", stretch(o.First, "tenth"), stretch(o.Last, "tenth"))
	}
	floor := ""
	if len(floors) > 0 {
		var fs []string
		for _, ph := range rd.Summary.Stages {
			if f, ok := floors[ph.Name]; ok {
				fs = append(fs, results.Human(f))
			}
		}
		floor = fmt.Sprintf(" and a latency's from %s, the generator's own timing noise (the 90th percentile of the loopback round trips it timed, median over the stage)", strings.Join(slices.Compact(fs), ", "))
	}
	d.Method = fmt.Sprintf("each series of at least %d intervals is tested for a monotonic trend (Mann-Kendall, its variance corrected for autocorrelation) "+
		"and for a change of level (binary segmentation over blocks of about independent intervals, Mann-Whitney, Bonferroni over the splits), "+
		"the smaller p-value of the two doubled: %d series under Holm's correction, family-wise alpha %g; a change counts from %.0f%% (an error ratio from %.1f points)%s, "+
		"and only if it persists to the end of its stage (a level is the median of everything after a change against everything before it, for a tenth of the stage at least); "+
		"a stretch far worse than its series' level that came back is an incident, listed apart and left out of its series' tests; a series that changed in its stage's first third and stayed level after settled (a warm-up) and is judged from there; "+
		"a change at the time the generator's host got busier is suspect, not the system's; the generator's own series are judged apart; "+
		"levels are the medians of %s; rates per hour need %s of data",
		MinDriftValues, m, o.Alpha, 100*o.MinEffect, 100*o.MinErrorRise, floor, stretches, MinRateSpan)
	return d
}

// stretch names a compared stretch: its length, or the default.
func stretch(d time.Duration, whole string) string {
	if d > 0 {
		return d.String()
	}
	return whole
}

// verdict says in one sentence what degraded, or that nothing did, what
// got worse while the generator got busier, and what changed as much
// without the tests being able to tell.
func verdict(degraded, unclear, suspect []*series, steady, short int, incidents []results.Incident) string {
	var doubt string
	if len(unclear) > 0 {
		var names []string
		for _, s := range unclear {
			names = append(names, fmt.Sprintf("%s (%s)", s.out.Name, s.changeWords(s.out.Start, s.out.End)))
		}
		doubt = fmt.Sprintf("; %d changed as much but not significantly: %s", len(unclear), strings.Join(names, ", "))
	}
	if len(suspect) > 0 {
		var names []string
		for _, s := range suspect {
			names = append(names, s.out.Name)
		}
		doubt = fmt.Sprintf("; %d got worse while the generator's host got busier (suspect, not counted): %s", len(suspect), strings.Join(names, ", ")) + doubt
	}
	if inc := incidentsVerdict(incidents); inc != "" {
		doubt = "; " + inc + doubt
	}
	if len(degraded) == 0 {
		v := fmt.Sprintf("no degradation: %d series steady", steady)
		if len(incidents) > 0 {
			v = "no lasting " + strings.TrimPrefix(v, "no ")
		}
		if short > 0 {
			v += fmt.Sprintf(", %d too short to judge", short)
		}
		return v + doubt + "."
	}
	slices.SortStableFunc(degraded, func(a, b *series) int { return cmp.Compare(b.effect(), a.effect()) })
	var parts []string
	for i, s := range degraded {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(degraded)-5))
			break
		}
		parts = append(parts, s.out.Sentence)
	}
	return "degraded: " + strings.Join(parts, "; ") + doubt + "."
}

// slot is one interval of a stage across its operations.
type slot struct {
	startMs, endMs              int64
	count, errors, tx, scenario int64
}

// stageSeries gathers a stage's series from the run's intervals and the
// monitors' points: the system's, the generator's, and the smallest
// change of latency that counts (ms; 0 when the generator's timing noise
// was not measured).
func stageSeries(rd *results.Run, ph results.PhaseSummary, o LongevityOptions) (sys, gen []*series, floor float64, opErrs []*series) {
	nominal := int64(math.Round(rd.Summary.Interval * 1000))
	start := ph.Start.UnixMilli()
	slots := map[int64]*slot{}
	full := func(iv *results.IntervalData) bool {
		return iv.EndMs > iv.StartMs && (nominal <= 0 || 2*(iv.EndMs-iv.StartMs) >= nominal)
	}
	at := func(iv *results.IntervalData) *slot {
		k := int64(0)
		if nominal > 0 {
			k = int64(math.Round(float64(iv.StartMs-start) / float64(nominal)))
		} else {
			k = iv.StartMs
		}
		s := slots[k]
		if s == nil {
			s = &slot{startMs: iv.StartMs, endMs: iv.EndMs}
			slots[k] = s
		}
		s.startMs, s.endMs = min(s.startMs, iv.StartMs), max(s.endMs, iv.EndMs)
		return s
	}
	offset := func(ms int64) float64 { return float64(ms-start) / 1000 }
	var out []*series
	for _, op := range results.UniqueOps(ph.Operations) {
		if op.Kind == metrics.KindScenario {
			// An open model's start delay: the generator's keeping to
			// its schedule.
			delay := newSeries(ph.Name, seriesDelay, "start delay p99 of "+op.Scenario, "ms", false)
			delay.gen = true
			for _, iv := range rd.Intervals[results.StageTag(ph.Index, op.Scenario, op.Name, op.Kind)+results.StartDelayTag] {
				if h, err := iv.Histogram(); err == nil && h.TotalCount() > 0 && full(iv) {
					delay.add(offset(iv.StartMs), float64(h.ValueAtPercentile(99))/1e3)
				}
			}
			if len(delay.v) > 0 {
				gen = append(gen, delay)
			}
		}
		var lat []*series
		if op.Kind != metrics.KindScenario {
			lat = append(lat, newSeries(ph.Name, seriesLatency, "mean of "+op.Name, "ms", false))
			for _, p := range o.Percentiles {
				lat = append(lat, newSeries(ph.Name, seriesLatency, fmt.Sprintf("p%g of %s", p, op.Name), "ms", false))
			}
			for _, s := range lat {
				s.out.Operation = op.Name
			}
		}
		var opErr *series
		if op.Kind == metrics.KindStep {
			opErr = newSeries(ph.Name, seriesErrors, "error ratio of "+op.Name, "%", false)
			opErr.points, opErr.out.Operation, opErr.message = true, op.Name, topMessage(op)
			opErrs = append(opErrs, opErr)
		}
		for _, iv := range rd.IntervalsOf(ph.Index, op) {
			h, err := iv.Histogram()
			if err != nil {
				continue
			}
			n := iv.OpCount(h)
			s := at(iv)
			switch op.Kind {
			case metrics.KindStep:
				s.count += n
				s.errors += max(iv.Errors, 0)
				if n > 0 && full(iv) {
					opErr.add(offset(iv.StartMs), 100*float64(max(iv.Errors, 0))/float64(n))
					opErr.fails, opErr.counts = append(opErr.fails, max(iv.Errors, 0)), append(opErr.counts, n)
				}
			case metrics.KindTransaction:
				s.tx += n
			case metrics.KindScenario:
				s.scenario += n
			}
			if len(lat) == 0 || h.TotalCount() == 0 || !full(iv) {
				continue
			}
			t := offset(iv.StartMs)
			lat[0].add(t, h.Mean()/1e3)
			for i, p := range o.Percentiles {
				lat[i+1].add(t, float64(h.ValueAtPercentile(p))/1e3)
			}
		}
		out = append(out, lat...)
	}
	// An interval in which nothing completed has no histogram in the log:
	// it is still an interval of the stage, of throughput zero (every VU
	// waiting on a request that did not answer).
	if nominal > 0 {
		for k := int64(0); (k+1)*nominal <= ph.End.UnixMilli()-start; k++ {
			if slots[k] == nil {
				slots[k] = &slot{startMs: start + k*nominal, endMs: start + (k+1)*nominal}
			}
		}
	}
	ks := slices.Sorted(func(yield func(int64) bool) {
		for k := range slots {
			if !yield(k) {
				return
			}
		}
	})
	tput := newSeries(ph.Name, seriesThroughput, "throughput", "/s", true)
	errs := newSeries(ph.Name, seriesErrors, "error ratio", "%", false)
	errs.points = true
	anyTx := false
	for _, s := range slots {
		anyTx = anyTx || s.tx > 0
	}
	var windows []monitor.Window
	for _, k := range ks {
		s := slots[k]
		iv := &results.IntervalData{StartMs: s.startMs, EndMs: s.endMs}
		if !full(iv) {
			continue
		}
		t := offset(s.startMs)
		secs := float64(s.endMs-s.startMs) / 1000
		// Operations that succeeded: failures that fail fast (refused,
		// reset) are no throughput.
		tput.add(t, float64(s.count-s.errors)/secs)
		if s.count > 0 {
			errs.add(t, 100*float64(s.errors)/float64(s.count))
			errs.fails, errs.counts = append(errs.fails, s.errors), append(errs.counts, s.count)
		}
		tx := s.scenario
		if anyTx {
			tx = s.tx
		}
		windows = append(windows, monitor.Window{Name: fmt.Sprint(k), Start: time.UnixMilli(s.startMs), End: time.UnixMilli(s.endMs), Transactions: tx})
	}
	out = append([]*series{tput, errs}, out...)
	res, g, floor := resourceSeries(rd, ph, windows, offset)
	for _, s := range out {
		if s.out.Kind == seriesLatency {
			s.floor = floor
		}
	}
	return append(out, res...), append(gen, g...), floor, opErrs
}

// resourceSeries are the series of what the monitors saw in each
// interval: the system's (CPU per transaction, memory, garbage
// collection, statements), and the generator's own, judged apart (its
// host's CPU busy share, the share other processes took, steal, run queue
// and loopback round trip; perflab's CPU and memory). floor is the median
// over the stage of the loopback round trip's 90th percentile, in ms: the
// generator's own timing noise.
func resourceSeries(rd *results.Run, ph results.PhaseSummary, windows []monitor.Window, offset func(int64) float64) (sys, gen []*series, floor float64) {
	if len(rd.Points) == 0 || len(windows) == 0 {
		return nil, nil, 0
	}
	from, to := windows[0].Start, windows[len(windows)-1].End
	var points []monitor.Point
	for _, p := range rd.Points {
		if !p.Time.Before(from.Add(-time.Minute)) && !p.Time.After(to.Add(time.Minute)) {
			points = append(points, p)
		}
	}
	a := monitor.Analyze(points, nil, windows)
	byName := map[string]*series{}
	var order []string
	get := func(monitorName, kind, name, unit string) *series {
		key := monitorName + "\x00" + kind
		s := byName[key]
		if s == nil {
			s = newSeries(ph.Name, kind, name, unit, false)
			s.out.Monitor = monitorName
			s.gen = results.IsGeneratorMonitor(monitorName)
			byName[key] = s
			order = append(order, key)
		}
		return s
	}
	var rtts []float64
	for _, w := range a.Windows {
		t := offset(w.Start.UnixMilli())
		cores, cpus, busy := 0.0, 0.0, -1.0
		var runq *series
		host := ""
		for _, m := range w.Monitors {
			gen := results.IsGeneratorMonitor(m.Monitor)
			if m.CPU != nil {
				cores += m.CPU.Cores
				if gen {
					get(m.Monitor, seriesGenCPU, "CPU of "+m.Monitor, "cores").add(t, m.CPU.Cores)
				}
			}
			if m.CPU != nil && m.CPU.MSPerTx != nil && !gen {
				get(m.Monitor, seriesCPU, "CPU per transaction of "+m.Monitor, "ms/tx").add(t, *m.CPU.MSPerTx)
			}
			if len(m.Memory) > 0 {
				mem := m.Memory[0]
				get(m.Monitor, seriesMemory, fmt.Sprintf("memory of %s (%s)", m.Monitor, strings.TrimSuffix(mem.Metric, "_bytes")), "MB").add(t, mem.AvgBytes/(1<<20))
			}
			if m.GC != nil {
				get(m.Monitor, seriesGC, "time in garbage collection of "+m.Monitor, "%").add(t, 100*m.GC.TimeRatio)
			}
			if st := m.Statements; st != nil && st.Calls > 0 {
				get(m.Monitor, seriesStatements, "statements' mean time of "+m.Monitor, "ms").add(t, st.MeanMS)
			}
			if h := m.Host; h != nil && gen {
				host, busy = m.Monitor, h.BusyAvg
				b := get(m.Monitor, seriesHostBusy, "CPU busy share of "+m.Monitor+"'s host", "%")
				b.add(t, 100*h.BusyAvg)
				b.points, b.least = true, minGeneratorRise
				if h.StealAvg > 0 || byName[m.Monitor+"\x00"+seriesSteal] != nil {
					st := get(m.Monitor, seriesSteal, "CPU steal of "+m.Monitor+"'s host", "%")
					st.add(t, 100*h.StealAvg)
					st.points, st.least = true, minGeneratorRise
				}
			}
			for _, g := range m.Gauges {
				if !gen {
					continue
				}
				switch g.Metric {
				case monitor.MetricCPUs:
					cpus = g.Avg
				case monitor.MetricRunQueue:
					q := get(m.Monitor, seriesRunQueue, "run queue of "+m.Monitor+"'s host", "tasks")
					q.add(t, g.Avg)
					q.least = minGeneratorGrowth
					runq = q
				case monitor.MetricLoopbackRTT:
					l := get(m.Monitor, seriesLoopback, "loopback round trip p90 of "+m.Monitor+"'s host", "ms")
					l.add(t, 1000*g.Avg)
					l.least = minGeneratorGrowth
					if !math.IsNaN(g.Avg) && !math.IsInf(g.Avg, 0) {
						rtts = append(rtts, 1000*g.Avg)
					}
				}
			}
		}
		if runq != nil && cpus > 0 {
			runq.cpus = cpus
		}
		if host != "" && cpus > 0 && busy >= 0 {
			// What the host's CPU did beside perflab and the system's
			// monitored processes: other work on the generator's host.
			other := get(host, seriesOther, "other processes' CPU on "+host+"'s host", "%")
			other.add(t, 100*max(0, busy-cores/cpus))
			other.points, other.least = true, minGeneratorRise
		}
	}
	for _, k := range order {
		if s := byName[k]; s.gen {
			gen = append(gen, s)
		} else {
			sys = append(sys, s)
		}
	}
	if len(rtts) > 0 {
		floor = analyze.Median(rtts)
	}
	return sys, gen, floor
}

func newSeries(stage, kind, name, unit string, lower bool) *series {
	return &series{out: results.DriftSeries{Stage: stage, Kind: kind, Name: name, Unit: unit}, lower: lower, pt: 1, pc: 1, p: 1, adj: 1}
}

// add appends a value at t; a value that is not a number (a monitor's NaN,
// an infinite rate) is no measurement: the interval is a gap of the series.
func (s *series) add(t, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	s.t = append(s.t, t)
	s.v = append(s.v, v)
}

// test runs the series' two tests.
func (s *series) test(o LongevityOptions) {
	s.trend = analyze.MannKendall(s.v)
	s.pt = s.trend.P
	blocks, width := analyze.Decorrelated(s.v, s.trend.Slope)
	cps := analyze.ChangePoints(blocks, o.Alpha, minSegment)
	// The largest change of level that lasted is the series' change: a
	// level is what holds from the change to the end of the stage (the
	// median of all the values after it, against all those before), for
	// a tenth of the stage at least. A blip that came back changed no
	// level (it is an incident), however far the search's segments say it
	// went.
	n := len(s.v)
	best := -1.0
	for i := range cps {
		cp := cps[i]
		k := min(cp.Index*width, n-1)
		if k < 1 || n-k < max(minSegment*width, (n+9)/10) {
			continue
		}
		cp.Before, cp.After = analyze.Median(s.v[:k]), analyze.Median(s.v[k:])
		if e := s.diff(cp.Before, cp.After); math.Abs(e) > best || s.change == nil {
			best, s.change = math.Abs(e), &cp
		}
	}
	if s.change != nil {
		s.pc = min(1, s.change.P*float64(s.change.Splits))
		s.split = min(s.change.Index*width, len(s.t)-1)
		s.at = s.t[s.split]
	}
}

// stepFits tells whether the series is better told as a change of level at
// its split than as a straight trend: the spread of what each leaves (the
// median absolute residual) is smaller for the step. A level that rose at
// once is "the change began after 1 m"; one that rose all along is a trend.
func (s *series) stepFits() bool {
	if s.change == nil {
		return false
	}
	n := len(s.v)
	a, b := analyze.Median(s.v[:s.split]), analyze.Median(s.v[s.split:])
	step, line := make([]float64, n), make([]float64, n)
	off := make([]float64, n)
	for i, x := range s.v {
		off[i] = x - s.trend.Slope*float64(i)
	}
	c := analyze.Median(off)
	for i, x := range s.v {
		lv := a
		if i >= s.split {
			lv = b
		}
		step[i], line[i] = math.Abs(x-lv), math.Abs(off[i]-c)
	}
	return analyze.Median(step) <= analyze.Median(line)
}

// diff is a change from a to b as the series measures changes: relative,
// or in points for the error ratio (in fractions: 0.01 is a point).
func (s *series) diff(a, b float64) float64 {
	switch {
	case s.points:
		return (b - a) / 100
	case a == 0 && b == 0:
		return 0
	case a == 0:
		return math.Inf(1)
	}
	return (b - a) / math.Abs(a)
}

// worse is how much worse a change from a to b is (negative: better).
func (s *series) worse(a, b float64) float64 {
	if s.lower {
		return -s.diff(a, b)
	}
	return s.diff(a, b)
}

// effect is how much worse the series got, by what its test found.
func (s *series) effect() float64 {
	if c := s.out.Change; c != nil && s.stepFits() {
		return s.worse(c.Before, c.After)
	}
	return s.worse(s.out.Start, s.out.End)
}

// holm gives each series judged its test of the family, twice the smaller
// p-value of its two tests (Bonferroni over the two: a trend and a change
// of level are two ways of asking one question), adjusted by Holm's
// step-down correction over the series; it returns their number.
func holm(all []*series) int {
	var judged []*series
	for _, s := range all {
		if len(s.v) >= MinDriftValues {
			s.p = min(1, 2*min(s.pt, s.pc))
			judged = append(judged, s)
		}
	}
	slices.SortStableFunc(judged, func(a, b *series) int { return cmp.Compare(a.p, b.p) })
	m := len(judged)
	running := 0.0
	for i, s := range judged {
		running = max(running, min(1, float64(m-i)*s.p))
		s.adj = running
	}
	return m
}

// judge gives the series its levels, its tests' results, its verdict and
// its sentence.
//
// A change counts when it is significant (the family's alpha, after
// Holm's correction), at least the minimum effect, at least the floor (a
// latency's: the generator's own timing noise), and persists: the level at
// the end of the stage is worse than at its start by as much. A series
// whose change came in the first third of its stage and that stayed
// level after settled: a warm-up, judged from where it settled.
func (s *series) judge(o LongevityOptions) {
	out := &s.out
	out.Values = len(s.v)
	out.Points = downsample(s.t, s.v)
	if s.chart != nil { // the series as measured, its incidents too
		out.Points = s.chart
	}
	if len(s.v) == 0 {
		out.Verdict = results.DriftTooShort
		out.Sentence = s.out.Name + ": too short to judge (no whole interval)"
		return
	}
	step := 0.0
	if len(s.t) > 1 {
		step = (s.t[len(s.t)-1] - s.t[0]) / float64(len(s.t)-1)
	}
	out.SpanS = s.t[len(s.t)-1] - s.t[0] + step
	out.Start, out.End = s.levels(o)
	if len(s.v) < MinDriftValues {
		out.Verdict = results.DriftTooShort
		out.Sentence = fmt.Sprintf("%s: too short to judge (%d intervals; %d needed)", out.Name, len(s.v), MinDriftValues)
		return
	}
	least := o.MinEffect
	if s.points {
		least = o.MinErrorRise
	}
	if s.least > 0 {
		least = s.least
	}
	tr := &results.DriftTrend{P: s.trend.P, Correction: s.trend.Correction}
	if span := time.Duration(out.SpanS * float64(time.Second)); span >= MinRateSpan && step > 0 {
		perHour := s.trend.Slope * 3600 / step
		tr.SlopePerHour = &perHour
	}
	if k, ok := analyze.Onset(s.v); ok {
		at := s.t[k] - s.t[0]
		tr.OnsetS = &at
	}
	out.Trend = tr
	if c := s.change; c != nil {
		out.Change = &results.DriftChange{AtS: s.at, Before: c.Before, After: c.After, P: s.pc}
	}
	out.P, out.PAdjusted, out.Significant = s.p, s.adj, s.adj < o.Alpha
	if out.Significant && s.settles(o, least) {
		c, start := out.Change, out.Start
		s.settled = true
		out.Start = analyze.Median(s.v[s.from:min(len(s.v), s.from+max(3, (len(s.v)-s.from+9)/10))])
		out.Verdict = results.DriftSettled
		out.Sentence = fmt.Sprintf("%s settled at %s after %s (from %s), then stayed level", out.Name, s.value(c.After), elapsed(time.Duration(c.AtS*float64(time.Second))), s.value(start))
		return
	}
	// What the tests found: a change of level when the series is better
	// told so, else a trend from the start to the end.
	byChange := s.stepFits()
	worse := s.worse(out.Start, out.End)
	if byChange {
		worse = s.worse(out.Change.Before, out.Change.After)
	}
	found := s.trendSentence
	if byChange {
		found = s.changeSentence
	}
	// A change must persist (the end's level as worse, or as better, as
	// the change) and pass the floor.
	persists := math.Signbit(worse) == math.Signbit(s.worse(out.Start, out.End)) && math.Abs(s.worse(out.Start, out.End)) >= least
	below := s.floor > 0 && math.Abs(out.End-out.Start) < s.floor
	switch {
	case out.Significant && math.Abs(worse) >= least && below:
		out.Verdict = results.DriftSteady
		out.Sentence = fmt.Sprintf("%s steady: %s at the start, %s at the end (a change of %s, within the generator's own timing noise of %s)",
			out.Name, s.value(out.Start), s.value(out.End), results.Human(math.Abs(out.End-out.Start)), results.Human(s.floor))
	case out.Significant && math.Abs(worse) >= least && !persists:
		out.Verdict = results.DriftSteady
		out.Sentence = fmt.Sprintf("%s steady by the end: %s, and back to %s at the end (a change that did not last)", out.Name, found(), s.value(out.End))
	case out.Significant && worse >= least:
		out.Verdict, out.Sentence = results.DriftDegraded, found()
	case out.Significant && -worse >= least:
		out.Verdict, out.Sentence = results.DriftImproved, found()
	case !out.Significant && math.Abs(s.worse(out.Start, out.End)) >= least && !below:
		out.Verdict = results.DriftInconclusive
		out.Sentence = fmt.Sprintf("%s %s, but not significantly (p %.3g after Holm's correction; alpha %g): more intervals would tell",
			out.Name, s.moved(out.Start, out.End), s.adj, o.Alpha)
	case out.Significant && byChange:
		// The figures judged are the change's: said as such.
		out.Verdict = results.DriftSteady
		out.Sentence = fmt.Sprintf("%s steady: %s before a change after %s, %s after it (%s, p %.3g after Holm's correction, smaller than the %s that counts)",
			out.Name, s.value(out.Change.Before), elapsed(seconds(out.Change.AtS)), s.value(out.Change.After), s.changeWords(out.Change.Before, out.Change.After), s.adj, s.minWords(least))
	case out.Significant:
		out.Verdict = results.DriftSteady
		out.Sentence = fmt.Sprintf("%s steady: %s at the start, %s at the end (%s, p %.3g after Holm's correction, smaller than the %s that counts)",
			out.Name, s.value(out.Start), s.value(out.End), s.changeWords(out.Start, out.End), s.adj, s.minWords(least))
	default:
		out.Verdict = results.DriftSteady
		out.Sentence = fmt.Sprintf("%s steady: %s at the start, %s at the end (p %.3g after Holm's correction)",
			out.Name, s.value(out.Start), s.value(out.End), s.adj)
	}
}

// settles reports whether the series changed level in the first third
// of its stage, by at least least, for the better (or a memory's or a
// collector's, or the generator's, either way), and stayed level after: no change of
// level and no trend after its change (tested at alpha, as the family's
// tests are), nor a change of least between the level just after it and
// the end's. It sets s.from, the index the series settled at.
func (s *series) settles(o LongevityOptions, least float64) bool {
	// The change is from the level at the start of the stage: a ramp up
	// to the change is part of it.
	c := s.out.Change
	if c == nil || s.change == nil || s.at > s.t[0]+s.out.SpanS/3 || math.Abs(s.diff(s.out.Start, c.After)) < least {
		return false
	}
	// A warm-up makes things better (latency down, throughput up), or
	// fills what a process holds (memory, its collector's work); the
	// generator's own series warm up either way. Errors never do.
	if !s.gen && s.worse(s.out.Start, c.After) > 0 && s.out.Kind != seriesMemory && s.out.Kind != seriesGC {
		return false
	}
	if s.floor > 0 && math.Abs(c.After-s.out.Start) < s.floor {
		return false
	}
	rest := s.v[s.split:]
	if len(rest) < MinDriftValues {
		return false
	}
	tr := analyze.MannKendall(rest)
	blocks, _ := analyze.Decorrelated(rest, tr.Slope)
	if tr.P < o.Alpha || len(analyze.ChangePoints(blocks, o.Alpha, minSegment)) > 0 {
		return false
	}
	head := analyze.Median(rest[:min(len(rest), max(3, (len(rest)+9)/10))])
	if math.Abs(s.diff(head, s.out.End)) >= least {
		return false
	}
	s.from = s.split
	return true
}

// minWords says the minimum effect in the series' terms.
func (s *series) minWords(least float64) string {
	if s.points {
		return fmt.Sprintf("%.1f points", 100*least)
	}
	return fmt.Sprintf("%.0f%%", 100*least)
}

// levels are the medians of the stretches compared at the start and the
// end of the stage.
func (s *series) levels(o LongevityOptions) (start, end float64) {
	n := len(s.v)
	tenth := max(3, (n+9)/10)
	first, last := s.v[:min(tenth, n)], s.v[max(0, n-tenth):]
	if o.First > 0 {
		lim := s.t[0] + o.First.Seconds()
		i := 0
		for i < n && s.t[i] < lim {
			i++
		}
		first = s.v[:max(i, 1)]
	}
	if o.Last > 0 {
		lim := s.t[n-1] - o.Last.Seconds()
		i := n - 1
		for i > 0 && s.t[i-1] >= lim {
			i--
		}
		last = s.v[i:]
	}
	return analyze.Median(first), analyze.Median(last)
}

// changeSentence says a change of level: "throughput fell 81% from 164/s
// to 31/s; the change began after 2 s".
func (s *series) changeSentence() string {
	c := s.out.Change
	return fmt.Sprintf("%s %s; the change began after %s", s.out.Name, s.moved(c.Before, c.After), elapsed(time.Duration(c.AtS*float64(time.Second))))
}

// trendSentence says a steady drift over the stage, and where it began
// when that was after the stage's start.
func (s *series) trendSentence() string {
	out := &s.out
	text := fmt.Sprintf("%s %s over %s, a steady trend", out.Name, s.moved(out.Start, out.End), elapsed(time.Duration(out.SpanS*float64(time.Second))))
	if o := out.Trend.OnsetS; o != nil {
		text += fmt.Sprintf(" that began after %s", elapsed(seconds(*o)))
	}
	if r := out.Trend.SlopePerHour; r != nil {
		text += fmt.Sprintf(" (%+.3g %s per hour)", *r, s.unitWord())
	}
	return text
}

// moved says how the level went from a to b: "fell 81% from 164/s to
// 31/s", "rose from 0.10% to 4.50% (+4.4 points)".
func (s *series) moved(a, b float64) string {
	verb := "rose"
	if b < a {
		verb = "fell"
	}
	if s.points {
		return fmt.Sprintf("%s from %s to %s (%+.1f points)", verb, s.value(a), s.value(b), b-a)
	}
	if a == 0 {
		return fmt.Sprintf("%s from %s to %s", verb, s.value(a), s.value(b))
	}
	return fmt.Sprintf("%s %.0f%% from %s to %s", verb, 100*math.Abs(b-a)/math.Abs(a), s.value(a), s.value(b))
}

// value writes a value of the series in its unit.
func (s *series) value(v float64) string { return s.out.Value(v) }

// unitWord is the unit of a rate per hour.
func (s *series) unitWord() string {
	if s.out.Unit == "%" {
		return "points"
	}
	return s.out.Unit
}

// downsample keeps a series for a chart: at most maxDriftPoints medians of
// consecutive values, each at its first value's time.
func downsample(t, v []float64) [][2]float64 {
	width := (len(v) + maxDriftPoints - 1) / maxDriftPoints
	out := [][2]float64{}
	for i := 0; i < len(v); i += max(width, 1) {
		j := min(i+max(width, 1), len(v))
		out = append(out, [2]float64{t[i], analyze.Median(v[i:j])})
	}
	return out
}

// schedulerSlice is what a busy host can add to a latency a CPU-bound
// generator measures: a time slice of the scheduler (Linux's CFS gives
// 0.75 ms to 3 ms), while other work takes the cores it needs.
const schedulerSlice = 1.0 // ms

// suspects makes suspect what the generator times (a latency, a
// throughput) that got worse when its host got busier (busier), by no more
// than the generator could make of it: a latency by at most a scheduler's
// time slice, or four times the larger of the generator's timing noise (the
// floor) and the rise of its loopback round trip if that is more; a
// throughput when no latency of its stage got worse by more than that and
// its errors did not rise. A
// change larger than the generator could have made is the system's,
// whatever the host did meanwhile.
func suspects(all, gen []*series) {
	rtt := map[string]float64{} // the loopback round trip's rise, by stage
	for _, g := range gen {
		if g.out.Kind == seriesLoopback && g.out.Verdict != results.DriftTooShort {
			rtt[g.out.Stage] = max(0, g.out.End-g.out.Start)
		}
	}
	systems := map[string]bool{} // stages with a latency or errors that are the system's
	for _, s := range all {
		if s.out.Kind == seriesErrors && s.out.Verdict == results.DriftDegraded {
			systems[s.out.Stage] = true // the generator's host makes no errors
		}
		if s.out.Kind != seriesLatency || s.out.Verdict != results.DriftDegraded {
			continue
		}
		explained := max(4*max(s.floor, rtt[s.out.Stage]), schedulerSlice)
		// A generator starved at the time explains what its waits for a
		// core make: a larger change is the system's.
		if why := starved(s, gen); why != "" {
			w, words := coreWait(s.out.Stage, gen)
			if math.Abs(s.out.End-s.out.Start) <= max(explained, w) {
				if words != "" {
					why += ", " + words
				}
				s.suspect(why)
				continue
			}
			systems[s.out.Stage] = true
			continue
		}
		g, why := busier(s, gen)
		if g != nil && hostSaturated(s.out.Stage, gen) {
			// A saturated host: the generator waits for a core behind
			// the tasks runnable on each, a scheduler's slice each.
			if w, words := coreWait(s.out.Stage, gen); w > explained {
				explained, why = w, why+", "+words
			}
		}
		if g == nil || math.Abs(s.out.End-s.out.Start) > explained {
			systems[s.out.Stage] = true
			continue
		}
		s.suspect(why)
	}
	for _, s := range all {
		if s.out.Kind == seriesThroughput && s.out.Verdict == results.DriftDegraded && !systems[s.out.Stage] {
			if g, why := busier(s, gen); g != nil {
				s.suspect(why)
			}
		}
	}
}

// schedulerWait is what each task runnable on a core can make a task that
// wakes wait for it: Linux's CFS's least slice, 0.75 ms times 1 + log2 of
// the cores, 1.5 ms on 2 (a woken task is run ahead of the others' full
// slices). On the calibration runs' busy 2-core host, 7 tasks runnable
// added 1.7 to 5.6 ms to a p95; this allows 5.25 ms.
const schedulerWait = 1.5 // ms

// coreWait is how long the generator can wait for a core on its busy host,
// in ms: schedulerWait for each task runnable on each core at the end of
// the stage (its run queue's level over its cores), and says it.
func coreWait(stage string, gen []*series) (float64, string) {
	for _, g := range gen {
		if g.out.Stage == stage && g.out.Kind == seriesRunQueue && g.cpus > 0 && g.out.Verdict != results.DriftTooShort {
			w := g.out.End / g.cpus * schedulerWait
			return w, fmt.Sprintf("%.3g tasks runnable on %g cores: a wait of up to %s for a core", g.out.End, g.cpus, results.Human(w))
		}
	}
	return 0, ""
}

// starved says how the generator was starved when the system's series s
// got worse, if it was: around s's change (the generator's series' levels
// before and after it; their start and end for a trend), its host's run
// queue rose by half or more to more tasks than cores, or its loopback
// round trip doubled and rose by a tenth of s's change or more (the same
// order), or other processes took a tenth more of the host while more
// tasks than cores were runnable. A generator waiting for a core times
// the wait into every latency it measures, however large. perflab's own
// CPU is no sign: a slower service gives it less work, and over short
// intervals the kernel's 10 ms ticks read it as 0. "" when it was not
// starved.
func starved(s *series, gen []*series) string {
	around := func(g *series) (before, after float64) {
		if !s.stepFits() || len(g.v) < 2 {
			return g.out.Start, g.out.End
		}
		var b, a []float64
		for i, t := range g.t {
			if t < s.at {
				b = append(b, g.v[i])
			} else {
				a = append(a, g.v[i])
			}
		}
		if len(b) == 0 || len(a) == 0 {
			return g.out.Start, g.out.End
		}
		return analyze.Median(b), analyze.Median(a)
	}
	change := math.Abs(s.out.End - s.out.Start)
	var why []string
	crowded := false // more tasks runnable than cores after the change
	var other string
	for _, g := range gen {
		if g.out.Stage != s.out.Stage || g.out.Verdict == results.DriftTooShort {
			continue
		}
		before, after := around(g)
		switch g.out.Kind {
		case seriesRunQueue:
			cores := g.cpus
			if cores <= 0 {
				cores = before // unknown: it must double
			}
			crowded = after > cores
			if after >= 1.5*before && crowded {
				why = append(why, g.out.Name+" "+g.moved(before, after))
			}
		case seriesLoopback:
			if g.diff(before, after) >= minGeneratorGrowth && after-before >= change/10 {
				why = append(why, g.out.Name+" "+g.moved(before, after))
			}
		case seriesOther:
			if after-before >= 100*minGeneratorRise {
				other = g.out.Name + " " + g.moved(before, after)
			}
		}
	}
	if other != "" && crowded && len(why) == 0 {
		why = append(why, other)
	}
	if len(why) == 0 {
		return ""
	}
	return "the generator was starved (" + strings.Join(why, "; ") + ")"
}

// hostSaturated tells whether the generator's host was saturated at the
// end of the stage (90% busy or more).
func hostSaturated(stage string, gen []*series) bool {
	for _, g := range gen {
		if g.out.Stage == stage && g.out.Kind == seriesHostBusy && g.out.Verdict != results.DriftTooShort && g.out.End >= 100*monitor.SaturationBusy {
			return true
		}
	}
	return false
}

// suspect marks the series suspect, saying what the generator's host did.
func (s *series) suspect(why string) {
	s.out.Verdict = results.DriftSuspect
	s.out.Sentence = fmt.Sprintf("%s, while %s: suspect, the generator's as likely as the system's", s.out.Sentence, why)
}

// busier is the generator's series that got busier when the system's
// series s got worse, if one did, and a sentence saying so: its host
// saturated at the end of the stage (busy 90% or more), or other processes' share of the
// generator's host's CPU, its steal, or its loopback round trip, rising by
// as much as counts (significantly or not) at the time s changed (both changes of level within three
// intervals or a tenth of the stage of each other), or either a trend
// over the stage.
func busier(s *series, gen []*series) (*series, string) {
	for _, g := range gen {
		if g.out.Stage != s.out.Stage {
			continue
		}
		switch g.out.Kind {
		case seriesOther, seriesSteal, seriesLoopback:
		case seriesHostBusy:
			// A host saturated at the end of the stage: the generator
			// shares cores that are all taken, whatever took them.
			if g.out.Verdict != results.DriftTooShort && g.out.End >= 100*monitor.SaturationBusy {
				return g, fmt.Sprintf("the generator's host was saturated (%s busy at the end)", g.value(g.out.End))
			}
			continue
		default:
			continue
		}
		// A rise of other processes' share or of steal as large as
		// counts, even one the generator's fewer samples cannot call
		// significant: a suspicion needs no proof. The loopback round
		// trip, a noisy figure of tenths of a millisecond, must be
		// significant.
		maybe := g.out.Verdict == results.DriftInconclusive && g.worse(g.out.Start, g.out.End) > 0 && g.out.Kind != seriesLoopback
		if g.out.Verdict != results.DriftDegraded && !maybe {
			continue
		}
		if !s.stepFits() || !g.stepFits() {
			return g, g.out.Sentence
		}
		step := s.out.SpanS / float64(max(1, len(s.v)))
		if math.Abs(s.at-g.at) <= max(3*step, s.out.SpanS/10) {
			return g, g.out.Sentence
		}
	}
	return nil, ""
}

// generatorHealth says how the generator's own series went.
func generatorHealth(gen []*series) *results.GeneratorHealth {
	h := &results.GeneratorHealth{Steady: true, Series: []results.DriftSeries{}}
	var changed, settled, maybe []string
	judged := 0
	for _, s := range gen {
		h.Series = append(h.Series, s.out)
		switch s.out.Verdict {
		case results.DriftInconclusive:
			maybe = append(maybe, fmt.Sprintf("%s (%s)", s.out.Name, s.changeWords(s.out.Start, s.out.End)))
		case results.DriftDegraded, results.DriftImproved:
			changed = append(changed, s.out.Sentence)
			if s.out.Verdict == results.DriftDegraded {
				h.Steady = false
			}
		case results.DriftSettled:
			settled = append(settled, s.out.Sentence)
		}
		if s.out.Verdict != results.DriftTooShort {
			judged++
		}
	}
	switch {
	case judged == 0:
		h.Verdict = "too short to judge"
	case len(changed) == 0 && len(settled) == 0:
		h.Verdict = fmt.Sprintf("steady: %d series", judged)
	case len(changed) == 0:
		h.Verdict = "steady once warmed up: " + strings.Join(settled, "; ")
	default:
		h.Verdict = "changed: " + strings.Join(append(changed, settled...), "; ")
	}
	if len(maybe) > 0 {
		h.Verdict += fmt.Sprintf("; %d changed as much but not significantly: %s", len(maybe), strings.Join(maybe, ", "))
	}
	return h
}

// timeline lines up the changes of every series, the system's and the
// generator's, first to last (trends, which have no moment, first in
// their stage), and says it in a sentence when the system's series got
// worse: which changed together, and in which order.
func timeline(all, gen []*series) ([]results.DriftEvent, string) {
	var events []results.DriftEvent
	worse := false
	for _, s := range append(slices.Clone(all), gen...) {
		switch s.out.Verdict {
		case results.DriftDegraded, results.DriftSuspect:
			worse = worse || !s.gen
		case results.DriftImproved, results.DriftSettled:
		default:
			continue
		}
		e := results.DriftEvent{Stage: s.out.Stage, Series: s.out.Name, Kind: s.out.Kind, Generator: s.gen, Unit: s.out.Unit, Verdict: s.out.Verdict,
			Before: s.out.Start, After: s.out.End, Trend: true}
		if c := s.out.Change; c != nil && (s.settled || s.stepFits()) {
			e.Trend, e.AtS, e.Before, e.After = false, c.AtS, c.Before, c.After
		} else if o := s.out.Trend; o != nil && o.OnsetS != nil {
			e.AtS = *o.OnsetS // a trend that began after the stage's start
		}
		e.Elapsed = s.elapsed + e.AtS
		e.Change, e.Points = definedChange(s.diff(e.Before, e.After)), s.points
		events = append(events, e)
	}
	slices.SortStableFunc(events, func(a, b results.DriftEvent) int {
		return cmp.Or(cmp.Compare(a.Elapsed, b.Elapsed), cmp.Compare(boolInt(!a.Trend), boolInt(!b.Trend)))
	})
	if !worse {
		return events, ""
	}
	var parts []string
	genMoved := false
	for i, e := range events {
		if e.Verdict == results.DriftSettled {
			continue // a warm-up is not a cause
		}
		genMoved = genMoved || e.Generator
		what := e.Series + " " + changeWords(e)
		switch {
		case e.Trend && e.AtS > 0:
			parts = append(parts, what+" rising from "+elapsed(seconds(e.Elapsed)))
		case e.Trend:
			parts = append(parts, what+" all along")
		case len(parts) == 0 || i == 0:
			parts = append(parts, "at "+elapsed(time.Duration(e.Elapsed*float64(time.Second)))+" "+what)
		default:
			parts = append(parts, "then "+what+" at "+elapsed(time.Duration(e.Elapsed*float64(time.Second))))
		}
	}
	hint := strings.Join(parts, ", ")
	if !genMoved {
		hint += "; the generator steady"
	}
	return events, hint
}

// definedChange is a change as the model holds it: nil where it is not a
// number (a relative change from 0).
func definedChange(c float64) *float64 {
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return nil
	}
	return &c
}

// changeWords writes an event's change: "+40%", "+4.5 points", "from 0 to
// 31/s".
func changeWords(e results.DriftEvent) string {
	switch {
	case e.Change == nil:
		return "from " + results.DriftSeries{Unit: e.Unit}.Value(e.Before) + " to " + results.DriftSeries{Unit: e.Unit}.Value(e.After)
	case e.Points:
		return fmt.Sprintf("%+.1f points", 100**e.Change)
	}
	return fmt.Sprintf("%+.0f%%", 100**e.Change)
}

// changeWords writes the series' change from a to b (changeWords).
func (s *series) changeWords(a, b float64) string {
	return changeWords(results.DriftEvent{Change: definedChange(s.diff(a, b)), Points: s.points, Unit: s.out.Unit, Before: a, After: b})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
