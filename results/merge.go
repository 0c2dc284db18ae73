package results

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
)

// Merge merges the partial runs of one plan, made at the same time by
// several load generators, into one run, exactly:
//
//   - each phase's operations by their totals: counts, errors by kind and
//     the exact moments add up, the HDR histograms merge bucket by bucket
//     (metrics.Stats.Merge), so the merged histogram of samples recorded by
//     N processes is, bit for bit, the histogram one process would have
//     recorded; the summary is computed from the merged totals as a single
//     run's is (Summarize): percentiles, means, minima and maxima are those
//     of all the samples;
//   - each scenario's rates over its active span across the parts (from
//     the earliest start of its stage to the latest end of the scenario);
//   - the intervals of each operation by their place in the stage (the
//     k-th interval of every part is the merged run's k-th), counts summed
//     and histograms merged, so that drift, charts and comparisons see the
//     whole load;
//   - the stages' loads (VUs, rates, shared iterations) summed, so that a
//     sweep's scaling is over the total VUs.
//
// Phases are matched by their place: the parts must have the same stages
// (a setup or teardown that only some parts ran is taken from those). Each
// part must have its totals: a run that did not finish has none, and is an
// error. The merged run's id, labels, variables and plan are the first
// part's; its status is the worst of the parts'; its warnings are the
// parts' warnings, each saying whose. Thresholds and whether the
// generators kept up are not judged (package judge): the merged run has
// none until its caller judges it; the limits of each part's host that its
// load could pass (metrics.HostLimit) stay in that part's warnings. What
// the monitors saw stays each part's:
// its figures per stage (CPU per transaction of that part's transactions)
// and its points, each monitor named after its part (#1, #2, ...) when
// there is more than one part.
func Merge(parts []*Run) (*Run, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no runs")
	}
	for i, p := range parts {
		if p.Summary == nil || p.Totals == nil {
			return nil, fmt.Errorf("merge: %s: no exact totals (%s): only finished runs merge", partName(p, i), TotalsFile)
		}
	}
	first := parts[0]
	fs := first.Summary
	for i, p := range parts[1:] {
		if err := sameShape(first, p); err != nil {
			return nil, fmt.Errorf("merge: %s and %s: %w", partName(first, 0), partName(p, i+1), err)
		}
	}
	run := &metrics.Run{ID: fs.RunID, PlanName: fs.Plan.Name, PlanFile: fs.Plan.File, PlanSource: []byte(fs.Plan.Source), PlanIncludes: fs.Plan.Includes,
		Interval: time.Duration(fs.Interval * float64(time.Second)), Start: fs.Start, End: fs.End}
	var errs []string
	status := metrics.StatusCompleted
	for _, p := range parts {
		s := p.Summary
		if s.Start.Before(run.Start) {
			run.Start = s.Start
		}
		if s.End.After(run.End) {
			run.End = s.End
		}
		if statusRank[s.Status] > statusRank[status] {
			status = s.Status
		}
		if s.Error != "" && !slices.Contains(errs, s.Error) {
			errs = append(errs, s.Error)
		}
		run.Simulators = mergeSimulators(run.Simulators, s.Simulators)
	}
	run.Status, run.Error = status, strings.Join(errs, "; ")
	pick := func(f func(*Totals) []*metrics.Phase) []*metrics.Phase {
		var out []*metrics.Phase
		for i := 0; ; i++ {
			var phs []*metrics.Phase
			for _, p := range parts {
				if list := f(p.Totals); i < len(list) {
					phs = append(phs, list[i])
				}
			}
			if len(phs) == 0 {
				return out
			}
			out = append(out, mergePhase(phs))
		}
	}
	run.Setup = pick(func(t *Totals) []*metrics.Phase { return t.Setup })
	run.Stages = pick(func(t *Totals) []*metrics.Phase { return t.Stages })
	run.Teardown = pick(func(t *Totals) []*metrics.Phase { return t.Teardown })

	s := Summarize(run, mergeHosts(parts))
	s.Variables, s.Overrides, s.Labels = fs.Variables, fs.Overrides, fs.Labels
	for i, p := range parts {
		for _, w := range p.Summary.Warnings {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: %s", partName(p, i), w))
		}
	}
	ivs, err := mergeIntervals(parts)
	if err != nil {
		return nil, err
	}
	var sources []string
	var points []monitor.Point
	for i, p := range parts {
		sources = append(sources, p.Source)
		for _, pt := range p.Points {
			pt.Monitor = monitorOf(pt.Monitor, p, i, len(parts))
			points = append(points, pt)
		}
	}
	s.Resources = mergeResources(parts)
	for _, phs := range [][]*metrics.Phase{run.Setup, run.Stages, run.Teardown} {
		for _, ph := range phs {
			for _, st := range ph.Totals {
				st.Pack()
			}
		}
	}
	out := &Run{Source: strings.Join(sources, " + "), Summary: s, Intervals: ivs, Points: points,
		Totals: &Totals{Setup: run.Setup, Stages: run.Stages, Teardown: run.Teardown}}
	out.setMessageTimes()
	return out, nil
}

// statusRank orders statuses from best to worst: a merged run is as bad as
// its worst part.
var statusRank = map[string]int{metrics.StatusCompleted: 0, metrics.StatusInterrupted: 1, metrics.StatusDegraded: 2, metrics.StatusFailed: 3}

// partName names a part of a merge in messages.
func partName(p *Run, i int) string {
	name := fmt.Sprintf("part %d", i+1)
	if p.Source != "" {
		name += " (" + p.Source + ")"
	}
	return name
}

// sameShape says how two parts are not shares of one run, if they are not:
// another plan, or other stages.
func sameShape(a, b *Run) error {
	if a.Summary.Plan.Name != b.Summary.Plan.Name {
		return fmt.Errorf("plans %q and %q differ", a.Summary.Plan.Name, b.Summary.Plan.Name)
	}
	as, bs := a.Totals.Stages, b.Totals.Stages
	if len(as) != len(bs) {
		return fmt.Errorf("%d stages and %d", len(as), len(bs))
	}
	for i := range as {
		if as[i].Index != bs[i].Index || as[i].Name != bs[i].Name {
			return fmt.Errorf("stage %d is %q in one and %q in the other", i+1, as[i].Name, bs[i].Name)
		}
	}
	return nil
}

// mergePhase merges one phase of each part: its operations in the order
// they first appear, each one's statistics merged exactly.
func mergePhase(phs []*metrics.Phase) *metrics.Phase {
	f := phs[0]
	out := &metrics.Phase{Index: f.Index, Name: f.Name, Values: slices.Clone(f.Values), Start: f.Start, End: f.End, Spans: map[string]time.Duration{}}
	var errs []string
	at := map[metrics.Op]int{}
	for _, ph := range phs {
		if ph.Start.Before(out.Start) {
			out.Start = ph.Start
		}
		if ph.End.After(out.End) {
			out.End = ph.End
		}
		out.Abandoned += ph.Abandoned
		if p := ph.Processing; p != nil {
			if out.Processing == nil {
				out.Processing = &metrics.Processing{}
			}
			out.Processing.Add(*p)
		}
		if ph.Error != "" && !slices.Contains(errs, ph.Error) {
			errs = append(errs, ph.Error)
		}
		out.Load = mergeLoads(out.Load, ph.Load)
		for i, op := range ph.Ops {
			if i >= len(ph.Totals) {
				break
			}
			j, ok := at[op]
			if !ok {
				j = len(out.Ops)
				at[op] = j
				out.Ops = append(out.Ops, op)
				out.Totals = append(out.Totals, metrics.NewStats())
			}
			out.Totals[j].Merge(ph.Totals[i])
		}
	}
	out.Error = strings.Join(errs, "; ")
	// A scenario's span, from the merged phase's start to its latest end
	// in any part: its parts ran side by side.
	for _, ph := range phs {
		for name, d := range ph.Spans {
			out.Spans[name] = max(out.Spans[name], ph.Start.Add(d).Sub(out.Start))
		}
	}
	return out
}

// mergeLoads adds a part's loads of a phase to the others': VUs, shared
// iterations, arrival rates and most VUs summed, per scenario; iterations
// per VU and durations are the plan's, the same in every part.
func mergeLoads(into, loads []metrics.Load) []metrics.Load {
	for _, l := range loads {
		i := slices.IndexFunc(into, func(m metrics.Load) bool { return m.Scenario == l.Scenario })
		if i < 0 {
			into = append(into, l)
			continue
		}
		m := &into[i]
		m.VUs += l.VUs
		m.TotalIterations += l.TotalIterations
		m.Rate += l.Rate
		m.MaxVUs += l.MaxVUs
		m.Duration, m.DurationS, m.RampUpS = max(m.Duration, l.Duration), max(m.DurationS, l.DurationS), max(m.RampUpS, l.RampUpS)
		if l.Engine != m.Engine && !slices.Contains(strings.Split(m.Engine, "+"), l.Engine) {
			m.Engine += "+" + l.Engine
		}
		if m.EngineWhy == "" {
			m.EngineWhy = l.EngineWhy
		}
	}
	return into
}

// mergeSimulators adds what one part's simulators saw to the others'.
func mergeSimulators(into, sims []metrics.SimulatorStats) []metrics.SimulatorStats {
	for _, s := range sims {
		i := slices.IndexFunc(into, func(m metrics.SimulatorStats) bool { return m.Name == s.Name && m.Kind == s.Kind })
		if i < 0 {
			s.Routes = slices.Clone(s.Routes)
			into = append(into, s)
			continue
		}
		m := &into[i]
		m.Unmatched += s.Unmatched
		m.Received += s.Received
		m.Matched += s.Matched
		m.Replied += s.Replied
		m.Errors += s.Errors
		m.Canceled += s.Canceled
		if s.LastError != "" {
			m.LastError = s.LastError
		}
		for _, r := range s.Routes {
			j := slices.IndexFunc(m.Routes, func(x metrics.SimulatorRoute) bool { return x.Name == r.Name })
			if j < 0 {
				m.Routes = append(m.Routes, r)
				continue
			}
			m.Routes[j].Requests += r.Requests
			m.Routes[j].InjectedErrors += r.InjectedErrors
			m.Routes[j].Canceled += r.Canceled
		}
	}
	return into
}

// mergeHosts describes the parts' load generators together: the first's
// machine, with every host's name and the CPUs and memory of all.
func mergeHosts(parts []*Run) Host {
	h := parts[0].Summary.Host
	names := []string{h.Hostname}
	for _, p := range parts[1:] {
		o := p.Summary.Host
		h.CPUs += o.CPUs
		h.GoMaxProcs += o.GoMaxProcs
		h.MemoryMB += o.MemoryMB
		if !slices.Contains(names, o.Hostname) {
			names = append(names, o.Hostname)
		}
	}
	h.Hostname = strings.Join(names, ", ")
	return h
}

// mergeIntervals merges the parts' intervals of each log tag by their
// place in the stage: the k-th interval of a stage starts k intervals
// after the stage's start in every part. Counts add up (unknown if any
// part's is), histograms merge.
func mergeIntervals(parts []*Run) (map[string][]*IntervalData, error) {
	tags := map[string]bool{}
	for _, p := range parts {
		for tag := range p.Intervals {
			tags[tag] = true
		}
	}
	// Each tag on its own, a core each: decoding and encoding the
	// histograms is the whole cost.
	list := slices.Sorted(maps.Keys(tags))
	merged := make([][]*IntervalData, len(list))
	errs := make([]error, len(list))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(list)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			acc := metrics.NewHistogram()
			for i := int(next.Add(1) - 1); i < len(list); i = int(next.Add(1) - 1) {
				merged[i], errs[i] = mergeTag(parts, list[i], acc)
			}
		}()
	}
	wg.Wait()
	out := make(map[string][]*IntervalData, len(list))
	for i, tag := range list {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[tag] = merged[i]
	}
	return out, nil
}

// mergeTag merges the parts' intervals of one log tag, in acc.
func mergeTag(parts []*Run, tag string, acc *hdr.Histogram) ([]*IntervalData, error) {
	slots := map[int64][]*IntervalData{}
	for _, p := range parts {
		start, length := stageClock(p, tag)
		for pos, d := range p.Intervals[tag] {
			k := int64(pos)
			if length > 0 {
				k = int64(math.Round(float64(d.StartMs-start) / float64(length)))
			}
			slots[k] = append(slots[k], d)
		}
	}
	var out []*IntervalData
	for _, k := range slices.Sorted(maps.Keys(slots)) {
		in := slots[k]
		m := &IntervalData{StartMs: in[0].StartMs, EndMs: in[0].EndMs, PeakVUs: -1, Bytes: -1}
		acc.Reset()
		for _, d := range in {
			m.StartMs, m.EndMs = min(m.StartMs, d.StartMs), max(m.EndMs, d.EndMs)
			if m.Count >= 0 && d.Count >= 0 {
				m.Count += d.Count
			} else {
				m.Count = -1
			}
			m.Errors += max(d.Errors, 0)
			if d.PeakVUs >= 0 {
				m.PeakVUs = max(m.PeakVUs, 0) + d.PeakVUs
			}
			if d.Bytes >= 0 {
				m.Bytes = max(m.Bytes, 0) + d.Bytes
			}
			m.Failures = metrics.MergeFailures(m.Failures, d.Failures)
			if err := metrics.DecodeInto(acc, []byte(d.enc)); err != nil {
				return nil, fmt.Errorf("merge: %s: interval at %d ms: %w", tag, d.StartMs, err)
			}
		}
		m.enc = string(metrics.Encode(acc))
		out = append(out, m)
	}
	return out, nil
}

// stageClock is, for a log tag of a part, its stage's start (ms since the
// epoch) and the run's interval (ms): where the tag's intervals are in the
// stage. No interval when it is unknown: intervals then go by their order.
func stageClock(p *Run, tag string) (startMs, intervalMs int64) {
	idx, ok := tagStage(tag)
	if !ok || p.Summary.Interval <= 0 {
		return 0, 0
	}
	for _, ph := range p.Summary.Stages {
		if ph.Index == idx {
			return ph.Start.UnixMilli(), int64(math.Round(p.Summary.Interval * 1000))
		}
	}
	return 0, 0
}

// tagStage is the stage index of a stage's log tag ("s3/scenario/op").
func tagStage(tag string) (int, bool) {
	head, _, ok := strings.Cut(tag, "/")
	if !ok || !strings.HasPrefix(head, "s") {
		return 0, false
	}
	i, err := strconv.Atoi(head[1:])
	return i, err == nil
}

// monitorOf names the monitor of part p, i of n: its own name and the
// part's name (Run.Part) or number, when there are several.
func monitorOf(name string, p *Run, i, n int) string {
	switch {
	case n == 1:
		return name
	case p.Part != "":
		return name + "#" + p.Part
	}
	return name + "#" + strconv.Itoa(i+1)
}

// mergeResources puts the parts' monitor figures side by side, window by
// window (the stages, and the whole run), each monitor named after its
// part: none when no part has any.
func mergeResources(parts []*Run) *monitor.Analysis {
	var out *monitor.Analysis
	for i, p := range parts {
		a := p.Summary.Resources
		if a == nil {
			continue
		}
		if out == nil {
			out = &monitor.Analysis{}
		}
		for _, w := range a.Windows {
			j := slices.IndexFunc(out.Windows, func(x monitor.WindowFigures) bool { return x.Window == w.Window })
			if j < 0 {
				out.Windows = append(out.Windows, monitor.WindowFigures{Window: w.Window, Start: w.Start, End: w.End})
				j = len(out.Windows) - 1
			}
			m := &out.Windows[j]
			if w.Start.Before(m.Start) {
				m.Start = w.Start
			}
			if w.End.After(m.End) {
				m.End = w.End
			}
			m.Transactions += w.Transactions
			for _, f := range w.Monitors {
				f.Monitor = monitorOf(f.Monitor, p, i, len(parts))
				m.Monitors = append(m.Monitors, f)
			}
		}
		for _, q := range a.SlowQueries {
			q.Monitor = monitorOf(q.Monitor, p, i, len(parts))
			out.SlowQueries = append(out.SlowQueries, q)
		}
	}
	return out
}
