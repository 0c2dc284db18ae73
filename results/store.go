package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/store"
)

// FromStore reads a stored run as comparisons and drift analyses read run
// directories.
func FromStore(st *store.Store, id string) (*Run, error) {
	b, err := st.Summary(id)
	unfinished := errors.Is(err, store.ErrNoSummary)
	if err != nil && !unfinished {
		return nil, err
	}
	hs, err := st.Histograms(id)
	if err != nil {
		return nil, err
	}
	if unfinished && len(hs) == 0 {
		// A distributed run still going: its workers' parts so far.
		if hs, err = liveHistograms(st, id); err != nil {
			return nil, err
		}
	}
	var s Summary
	if unfinished {
		p, err := unfinishedSummary(st, id, hs)
		if err != nil {
			return nil, err
		}
		s = *p
	} else if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	// The history's labels are the run's, also those given at import.
	if runs, err := st.Runs(store.Filter{ID: id}); err == nil && len(runs) == 1 && len(runs[0].Labels) > 0 {
		s.Labels = runs[0].Labels
	}
	samples, err := st.Samples(id)
	if err != nil {
		return nil, err
	}
	tb, err := st.Totals(id)
	if err != nil {
		return nil, err
	}
	totals, err := totalsOf(tb)
	if err != nil {
		return nil, fmt.Errorf("run %s: totals: %w", id, err)
	}
	rd := &Run{Source: id, Summary: &s, Intervals: map[string][]*IntervalData{}, Totals: totals, Points: pointsOf(samples)}
	for _, h := range hs {
		if h.Interval < 0 {
			continue
		}
		tag := StageTag(h.Phase, h.Scenario, h.Operation, metrics.Kind(h.Kind))
		d := NewIntervalQuantiles(h.Start.UnixMilli(), h.End.UnixMilli(), h.Count, h.Errors, h.Encoded, h.Quantiles)
		d.PeakVUs, d.Bytes, d.Failures = h.PeakVUs, h.Bytes, h.Failures
		rd.Intervals[tag] = append(rd.Intervals[tag], d)
		for _, d := range storedDurations(h) {
			rd.Intervals[tag+d.suffix] = append(rd.Intervals[tag+d.suffix], NewIntervalData(h.Start.UnixMilli(), h.End.UnixMilli(), -1, -1, d.enc))
		}
	}
	return rd, nil
}

// liveHistograms are the intervals a distributed run's workers have
// stored so far, each interval's histograms merged across the workers (by
// its place in the stage): what the run is while it goes.
func liveHistograms(st *store.Store, id string) ([]store.Histogram, error) {
	parts, err := st.Runs(store.Filter{Parent: id})
	if err != nil || len(parts) == 0 {
		return nil, err
	}
	type key struct {
		phase, ivl           int
		scenario, name, kind string
	}
	type acc struct {
		h                       store.Histogram
		lat, svc, delay, failed *hdr.Histogram
	}
	var order []key
	accs := map[key]*acc{}
	add := func(dst **hdr.Histogram, enc string) error {
		if enc == "" {
			return nil
		}
		if *dst == nil {
			*dst = metrics.NewHistogram()
		}
		return metrics.DecodeInto(*dst, []byte(enc))
	}
	for _, p := range parts {
		hs, err := st.Histograms(p.ID)
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			if h.Interval < 0 {
				continue
			}
			k := key{h.Phase, h.Interval, h.Scenario, h.Operation, h.Kind}
			a := accs[k]
			if a == nil {
				a = &acc{h: h}
				a.h.Count, a.h.Errors, a.h.Dropped, a.h.PeakVUs, a.h.Bytes, a.h.Failures = 0, 0, 0, -1, -1, nil
				accs[k] = a
				order = append(order, k)
			}
			if h.Start.Before(a.h.Start) {
				a.h.Start = h.Start
			}
			if h.End.After(a.h.End) {
				a.h.End = h.End
			}
			a.h.Count += h.Count
			a.h.Errors += h.Errors
			a.h.Dropped += h.Dropped
			if h.PeakVUs >= 0 { // the workers' VUs together, as a merged run's
				a.h.PeakVUs = max(a.h.PeakVUs, 0) + h.PeakVUs
			}
			if h.Bytes >= 0 {
				a.h.Bytes = max(a.h.Bytes, 0) + h.Bytes
			}
			a.h.Failures = metrics.MergeFailures(a.h.Failures, h.Failures)
			for _, e := range []error{add(&a.lat, h.Encoded), add(&a.svc, h.ServiceTime), add(&a.delay, h.StartDelay), add(&a.failed, h.Failed)} {
				if e != nil {
					return nil, fmt.Errorf("run %s: %w", p.ID, e)
				}
			}
		}
	}
	out := make([]store.Histogram, 0, len(order))
	for _, k := range order {
		a := accs[k]
		enc := func(h *hdr.Histogram) string {
			if h == nil {
				return ""
			}
			return string(metrics.Encode(h))
		}
		if a.lat == nil {
			a.lat = metrics.NewHistogram()
		}
		q := metrics.QuantilesOf(a.lat)
		a.h.Encoded, a.h.ServiceTime, a.h.StartDelay, a.h.Failed, a.h.Quantiles = enc(a.lat), enc(a.svc), enc(a.delay), enc(a.failed), &q
		out = append(out, a.h)
	}
	return out, nil
}

// storedDuration is an open model's service time or start delay histogram,
// or the failed operations' latency, as stored, with its tag suffix.
type storedDuration struct {
	suffix, enc string
}

// storedDurations is a stored row's service time, start delay and failed
// operations' latency, those it has.
func storedDurations(h store.Histogram) []storedDuration {
	var out []storedDuration
	if h.ServiceTime != "" {
		out = append(out, storedDuration{ServiceTimeTag, h.ServiceTime})
	}
	if h.StartDelay != "" {
		out = append(out, storedDuration{StartDelayTag, h.StartDelay})
	}
	if h.Failed != "" {
		out = append(out, storedDuration{FailedTag, h.Failed})
	}
	return out
}

// unfinishedSummary rebuilds the summary of a stored run that never wrote
// one (killed, or still running) from the intervals stored so far.
func unfinishedSummary(st *store.Store, id string, hs []store.Histogram) (*Summary, error) {
	runs, err := st.Runs(store.Filter{ID: id})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%w: %s", store.ErrNotFound, id)
	}
	run := runs[0]
	src, _ := st.PlanSource(id)
	includes, _ := st.PlanIncludes(id)
	return rebuildSummary(run, src, includes, hs)
}

// UnfinishedNote is the error of a summary rebuilt from the intervals of a
// run that has not finished, by its status.
func UnfinishedNote(status string) string {
	if status == store.Killed {
		return "the run was killed (its process ended before it finished): figures are rebuilt from the intervals written before, the interval in progress is lost"
	}
	return "the run has not finished: figures are rebuilt from the intervals written so far"
}

// rebuildSummary rebuilds the summary of a run that never wrote one from
// its intervals: each stage and operation from its merged interval
// histograms. Figures are those of the histograms (min, mean and max within
// their precision) and errors are not split by kind; the summary's error
// says so.
func rebuildSummary(run store.Run, src []byte, includes []metrics.PlanFile, hs []store.Histogram) (*Summary, error) {
	id := run.ID
	s := &Summary{Format: Format, RunID: id, Status: run.Status, Start: run.Start, End: run.Start, Host: Host{},
		Error:     UnfinishedNote(run.Status),
		Plan:      PlanInfo{Name: run.Plan, Source: string(src), Includes: includes},
		Labels:    run.Labels,
		Variables: map[string]any{}, Overrides: map[string]string{},
		Setup: []PhaseSummary{}, Stages: []PhaseSummary{}, Teardown: []PhaseSummary{}}
	type opKey struct {
		phase                int
		scenario, name, kind string
	}
	type acc struct {
		op          Operation
		h           *hdr.Histogram
		durs        map[string]*hdr.Histogram // service time, start delay, failed latency, by tag suffix
		count, errs int64
		dropped     int64
	}
	var order []opKey
	ops := map[opKey]*acc{}
	// Each scenario's active span, from its intervals: rates are over it, as
	// in a finished run's summary (a scenario may end before its stage).
	type scenKey struct {
		phase    int
		scenario string
	}
	spans := map[scenKey][2]time.Time{}
	stages := map[int]*PhaseSummary{}
	var stageOrder []int
	var starts []IntervalStart
	for _, h := range hs {
		if h.Phase <= 0 || h.Interval < 0 {
			continue // setup and teardown, and stages' totals (written only at the end)
		}
		starts = append(starts, IntervalStart{h.Phase, h.Interval, h.Start.UnixMilli()})
		ph := stages[h.Phase]
		if ph == nil {
			ph = &PhaseSummary{Index: h.Phase, Name: h.PhaseName, Values: map[string]string{}, Start: h.Start, End: h.End, Operations: []Operation{}}
			stages[h.Phase] = ph
			stageOrder = append(stageOrder, h.Phase)
		}
		if h.Start.Before(ph.Start) {
			ph.Start = h.Start
		}
		if h.End.After(ph.End) {
			ph.End = h.End
		}
		sk := scenKey{h.Phase, h.Scenario}
		if sp, ok := spans[sk]; !ok {
			spans[sk] = [2]time.Time{h.Start, h.End}
		} else {
			if h.Start.Before(sp[0]) {
				sp[0] = h.Start
			}
			if h.End.After(sp[1]) {
				sp[1] = h.End
			}
			spans[sk] = sp
		}
		k := opKey{h.Phase, h.Scenario, h.Operation, h.Kind}
		a := ops[k]
		if a == nil {
			a = &acc{op: Operation{Name: h.Operation, Kind: metrics.Kind(h.Kind), Scenario: h.Scenario}, h: metrics.NewHistogram(), durs: map[string]*hdr.Histogram{}}
			ops[k] = a
			order = append(order, k)
		}
		p, err := hdr.DecodePacked([]byte(h.Encoded))
		if err != nil {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
		p.MergeInto(a.h)
		for _, d := range storedDurations(h) {
			p, err := hdr.DecodePacked([]byte(d.enc))
			if err != nil {
				return nil, fmt.Errorf("run %s: %w", id, err)
			}
			if a.durs[d.suffix] == nil {
				a.durs[d.suffix] = metrics.NewHistogram()
			}
			p.MergeInto(a.durs[d.suffix])
		}
		a.count += h.Count
		a.errs += h.Errors
		a.dropped += h.Dropped
	}
	sort.Ints(stageOrder)
	var total Total
	all := metrics.NewHistogram() // the stored requests' latencies, for the summary line
	for _, i := range stageOrder {
		ph := stages[i]
		ph.Duration = ph.End.Sub(ph.Start).Seconds()
		for _, k := range order {
			if k.phase != i {
				continue
			}
			a := ops[k]
			span := ph.End.Sub(ph.Start)
			if sp, ok := spans[scenKey{k.phase, k.scenario}]; ok && sp[1].After(sp[0]) {
				span = sp[1].Sub(sp[0])
			}
			a.op.Summary = metrics.SummarizeHistogram(a.h, a.durs[FailedTag], a.count, a.errs, span)
			a.op.Dropped = a.dropped
			if h := a.durs[ServiceTimeTag]; h != nil {
				a.op.ServiceTime = metrics.HistogramLatency(h)
			}
			if h := a.durs[StartDelayTag]; h != nil {
				a.op.StartDelay = metrics.HistogramLatency(h)
			}
			ph.Operations = append(ph.Operations, a.op)
			if a.op.Kind == metrics.KindStep {
				total.Requests += a.count
				total.Errors += a.errs
				all.Merge(a.h)
			}
		}
		s.Stages = append(s.Stages, *ph)
		s.End = ph.End
		total.Duration += ph.Duration
	}
	s.Duration = s.End.Sub(s.Start).Seconds()
	s.Interval = InferInterval(starts).Seconds()
	if total.Duration > 0 {
		total.RPS = float64(total.Requests) / total.Duration
	}
	if all.TotalCount() > 0 { // as the histograms hold them, in µs
		total.Mean, total.Min, total.Max = all.Mean()/1e3, float64(all.Min())/1e3, float64(all.Max())/1e3
	}
	total.finish(s.Stages)
	s.Total = total
	return s, nil
}

// StoreSamples converts monitor points for the run history.
func StoreSamples(points []monitor.Point) []store.Sample {
	out := make([]store.Sample, len(points))
	for i, p := range points {
		out[i] = store.Sample{Time: p.Time, Monitor: p.Monitor, Metric: p.Metric, Value: p.Value}
	}
	return out
}

// pointsOf converts stored samples to monitor points.
func pointsOf(samples []store.Sample) []monitor.Point {
	out := make([]monitor.Point, len(samples))
	for i, x := range samples {
		out[i] = monitor.Point{Time: x.Time, Monitor: x.Monitor, Metric: x.Metric, Value: x.Value}
	}
	return out
}

// LabelledRuns reads the finished stored runs that carry a label
// (selector "name=value"), of one plan if planName is set, leaving out the
// run exclude.
func LabelledRuns(st *store.Store, selector, planName, exclude string) ([]*Run, error) {
	k, v, _ := strings.Cut(selector, "=")
	runs, err := st.Runs(store.Filter{Labels: map[string]string{k: v}, Plan: planName})
	if err != nil {
		return nil, err
	}
	var out []*Run
	for _, r := range runs {
		if r.Status == metrics.StatusRunning || r.Status == metrics.StatusKilled || r.ID == exclude { // not whole
			continue
		}
		rd, err := FromStore(st, r.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, rd)
	}
	return out, nil
}

// Completed is the summaries of the completed stored runs that f selects,
// oldest first: what a plan's history follows.
func Completed(st *store.Store, f store.Filter) ([]*Summary, error) {
	runs, err := st.Runs(f)
	if err != nil {
		return nil, err
	}
	var out []*Summary
	for i := len(runs) - 1; i >= 0; i-- { // Runs lists the newest first
		if runs[i].Status != metrics.StatusCompleted {
			continue
		}
		b, err := st.Summary(runs[i].ID)
		if err != nil {
			continue
		}
		var s Summary
		if json.Unmarshal(b, &s) == nil {
			out = append(out, &s)
		}
	}
	return out, nil
}

// LiveStatus says how far a running run has gone: for a distributed run,
// "running: 3/3 workers at stage 1, 12345 requests" (its workers alive,
// the furthest stage, the requests its parts have stored); "running" for a
// run of one generator.
func LiveStatus(st *store.Store, id string) string {
	d, ws, n, err := st.Live(id)
	if err != nil {
		return metrics.StatusRunning
	}
	host, _ := os.Hostname()
	now := time.Now()
	alive, stage := 0, 0
	for _, w := range ws {
		if !w.Dead(host, now) {
			alive++
		}
		stage = max(stage, w.Stage)
	}
	if len(ws) < d.Workers {
		return fmt.Sprintf("running: %d/%d workers joined", len(ws), d.Workers)
	}
	return fmt.Sprintf("running: %d/%d workers at stage %d, %d requests", alive, d.Workers, stage, n)
}
