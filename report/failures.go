package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// stepInterval is an interval of a stage, its steps together: what they
// received and how they failed.
type stepInterval struct {
	startMs, endMs int64
	count, errors  int64
	bytes          int64 // -1: not known
	kinds          map[string]int64
	failures       bool // its failures by kind are known
}

// stepIntervals are a stage's intervals, each its steps' counts added (a
// transaction's or a scenario's failures are their steps'), in time
// order.
func stepIntervals(rd *results.Run, ph results.PhaseSummary) []*stepInterval {
	at := map[int64]*stepInterval{}
	for _, op := range results.UniqueOps(ph.Operations) {
		if op.Kind != metrics.KindStep {
			continue
		}
		for _, d := range rd.IntervalsOf(ph.Index, op) {
			s := at[d.StartMs]
			if s == nil {
				s = &stepInterval{startMs: d.StartMs, endMs: d.EndMs, bytes: -1, kinds: map[string]int64{}, failures: true}
				at[d.StartMs] = s
			}
			s.endMs = max(s.endMs, d.EndMs)
			s.count += max(d.Count, 0)
			s.errors += max(d.Errors, 0)
			if d.Bytes >= 0 {
				s.bytes = max(s.bytes, 0) + d.Bytes
			}
			if d.Errors > 0 && d.Failures == nil {
				s.failures = false
			}
			for k, n := range metrics.FailuresByKind(d.Failures) {
				s.kinds[k] += n
			}
		}
	}
	out := make([]*stepInterval, 0, len(at))
	for _, k := range slices.Sorted(maps.Keys(at)) {
		out = append(out, at[k])
	}
	return out
}

// intervalRates are series over a stage of rates per interval: value(iv)
// per second for each name, a partial interval a point apart, a sliver
// left out (sliver).
type intervalRates struct {
	ph      results.PhaseSummary
	nominal time.Duration
	names   []string
	pts     map[string]*Series
}

func newIntervalRates(ph results.PhaseSummary, nominal time.Duration) *intervalRates {
	return &intervalRates{ph: ph, nominal: nominal, pts: map[string]*Series{}}
}

// add adds the value v of the interval d to the series name.
func (r *intervalRates) add(name string, d *results.IntervalData, v int64) {
	if sliver(d, r.nominal) || d.Seconds() <= 0 {
		return
	}
	s := r.pts[name]
	if s == nil {
		s = &Series{Name: name}
		r.pts[name] = s
		r.names = append(r.names, name)
	}
	p := XY{float64(d.StartMs-r.ph.Start.UnixMilli()) / 1000, float64(v) / d.Seconds()}
	if d.Partial(r.nominal) {
		s.Partial = append(s.Partial, p)
	} else {
		s.Points = append(s.Points, p)
	}
}

// series are the series in the order given (order nil: as added).
func (r *intervalRates) series(order func(a, b string) int) []Series {
	names := slices.Clone(r.names)
	if order != nil {
		slices.SortStableFunc(names, order)
	}
	out := make([]Series, 0, len(names))
	for _, n := range names {
		out = append(out, *r.pts[n])
	}
	return out
}

// httpKind reports whether an error kind is an HTTP status the step did
// not accept (http_4xx).
func httpKind(kind string) bool { return strings.HasPrefix(kind, "http_") }

// otherFailures names, in the responses chart, the failures that are not
// a status: no response (a timeout, a reset, a refusal), a check or an
// extract that failed, a request not sent.
const otherFailures = "other failures"

// failureCharts are a stage's charts of its failures and traffic over
// time, its steps together: failures per second by kind, responses per
// second by status class (the accepted ones, each unaccepted class, the
// failures without a status), and each step's bytes received per second.
// The first two need the intervals' failures by kind (a run before
// perflab kept them has none), the last their bytes.
func failureCharts(rd *results.Run, ph results.PhaseSummary) []Chart {
	nominal := rd.Summary.IntervalLength()
	ivs := stepIntervals(rd, ph)
	failed, known := false, len(ivs) > 0
	for _, s := range ivs {
		failed = failed || s.errors > 0 || len(s.kinds) > 0
		known = known && s.failures
	}
	var out []Chart
	if failed && known {
		byKind, byStatus := newIntervalRates(ph, nominal), newIntervalRates(ph, nominal)
		kinds, hasOther := map[string]bool{}, false
		for _, s := range ivs {
			for k := range s.kinds {
				kinds[k] = true
				hasOther = hasOther || !httpKind(k)
			}
		}
		for _, s := range ivs {
			d := &results.IntervalData{StartMs: s.startMs, EndMs: s.endMs}
			var failures, other int64
			for k := range kinds {
				byKind.add(k, d, s.kinds[k])
				failures += s.kinds[k]
				if !httpKind(k) {
					other += s.kinds[k]
				}
			}
			byStatus.add("accepted (OK)", d, max(s.count-failures, 0))
			for k := range kinds {
				if httpKind(k) {
					byStatus.add(k, d, s.kinds[k])
				}
			}
			if hasOther {
				byStatus.add(otherFailures, d, other)
			}
		}
		statusOrder := func(a, b string) int {
			rank := func(n string) int {
				switch {
				case n == otherFailures:
					return 2
				case httpKind(n):
					return 1
				}
				return 0
			}
			return cmp.Or(cmp.Compare(rank(a), rank(b)), metrics.CompareKinds(a, b))
		}
		if len(byKind.names) > 0 { // not every interval a sliver
			out = append(out,
				Chart{Slug: "failures-by-kind-over-time", Title: "Failures per second by kind over time (the steps together)", YLabel: "per second", YUnit: "/s",
					Series: kindColors(byKind.series(metrics.CompareKinds))}.overStage(ph),
				Chart{Slug: "responses-by-status-over-time", Title: "Responses per second by status over time (accepted, each status class not accepted, other failures; the steps together)",
					YLabel: "per second", YUnit: "/s", Series: kindColors(byStatus.series(statusOrder))}.overStage(ph))
		}
	}
	bytes := newIntervalRates(ph, nominal)
	anyBytes := false
	for _, op := range results.UniqueOps(ph.Operations) {
		if op.Kind != metrics.KindStep {
			continue
		}
		for _, d := range rd.IntervalsOf(ph.Index, op) {
			if d.Bytes >= 0 {
				bytes.add(op.Name, d, d.Bytes)
				anyBytes = anyBytes || d.Bytes > 0
			}
		}
	}
	if anyBytes && len(bytes.names) > 0 {
		out = append(out, Chart{Slug: "bytes-received-over-time", Title: "Bytes received per second over time (response bodies, per step)", YLabel: "bytes per second", YUnit: "B/s",
			Series: bytes.series(nil)}.overStage(ph))
	}
	return out
}

// kindColors are the colours of the failures' series: the accepted
// responses green, 5xx red, 4xx orange, the others the palette's.
func kindColors(ss []Series) []Series {
	fixed := map[string]string{"accepted (OK)": "#2ca02c", "http_5xx": "#d62728", "http_4xx": "#ff7f0e", otherFailures: "#7f7f7f"}
	for i := range ss {
		if c, ok := fixed[ss[i].Name]; ok {
			ss[i].Color = c
		}
	}
	return ss
}

// RunErrorRowsOf are RunErrorRows with, for each message of a stage, when
// it was first and last seen (from the intervals' failures) and the first
// failure's response where the run kept one (failures.jsonl).
func RunErrorRowsOf(rd *results.Run) []ErrorRow {
	s := rd.Summary
	rows := RunErrorRows(s)
	spans := map[string]map[results.MessageKey]results.MessageSpan{}
	for _, ph := range s.Stages {
		spans[ph.Name] = rd.MessageSpans(ph)
	}
	for i := range rows {
		r := &rows[i]
		msg := r.Message
		if r.Other {
			msg = ""
		}
		if sp, ok := spans[r.Stage][results.MessageKey{Op: metrics.Key{Scenario: r.Scenario, Name: r.Operation, Kind: r.OpKind}, ErrKind: r.Kind, Message: msg, Other: r.Other}]; ok {
			r.First, r.Last = sp.From, sp.To
		}
		if smp, ok := rd.Samples[results.SampleKey{Stage: r.Stage, Scenario: r.Scenario, Step: r.Operation, Kind: r.Kind, Message: r.Message}]; ok && !r.Other {
			r.Sample = &smp
		}
	}
	return rows
}

// When is a time of a message as the Errors tables give it: its clock
// time (UTC; the date too when the run spans days) and its time into the
// run; "" when not known.
func (r ErrorRow) When(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	layout := "15:04:05.999"
	if r.RunStart.UTC().YearDay() != t.UTC().YearDay() || r.RunStart.UTC().Year() != t.UTC().Year() {
		layout = "2006-01-02 15:04:05.999"
	}
	return fmt.Sprintf("%s UTC (+%s)", t.UTC().Format(layout), intoRun(t.Sub(r.RunStart)))
}

// intoRun is a time into the run, to the millisecond where it is not
// whole seconds: 1:02:03, 2:03.5 (minutes and seconds).
func intoRun(d time.Duration) string {
	d = max(d, 0).Round(time.Millisecond)
	h, m := int(d/time.Hour), int(d/time.Minute)%60
	sec := strconv.FormatFloat((d % time.Minute).Seconds(), 'f', -1, 64)
	if d%time.Minute < 10*time.Second {
		sec = "0" + sec
	}
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%s", h, m, sec)
	}
	return fmt.Sprintf("%d:%s", m, sec)
}

// FirstText and LastText are When of the message's first and last
// times.
func (r ErrorRow) FirstText() string { return r.When(r.First) }
func (r ErrorRow) LastText() string  { return r.When(r.Last) }
