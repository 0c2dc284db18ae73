package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// WriteHTML writes a self-contained HTML report of a run: tables, and
// interactive charts drawn by charts.js with uPlot, both inline with the
// charts' data (no CDN, no fetch: it opens offline; user data is escaped,
// in the data too). It needs the run's interval histograms for the charts
// over time.
//
// The page gives the headline first: the run's status and labels, its
// thresholds and warnings, then each stage's operations and charts (and the
// charts across stages, the scaling); the details after: the monitors'
// resources table and the slow queries.
func WriteHTML(w io.Writer, rd *results.Run) error {
	return WriteHTMLPage(w, rd, PageParts{})
}

// PageParts are what a web page around the report adds to it: the
// report's content then sits in <main id="report"> between Before and
// After, with the style sheets and scripts (same-origin URLs, loaded
// deferred) in its head. Untrusted text must be escaped by the caller.
type PageParts struct {
	Styles, Scripts []string
	Before, After   template.HTML
}

// WriteHTMLPage writes the HTML report of WriteHTML as a page of a web
// application (perflab serve): the same content, with parts around it.
func WriteHTMLPage(w io.Writer, rd *results.Run, parts PageParts) error {
	s := rd.Summary
	page := htmlPage{S: s, Generated: time.Now().UTC().Format(time.RFC3339), ResourceHeader: ResourceHeader, Parts: parts, Errors: RunErrorRowsOf(rd), FailureLog: rd.FailureLog,
		Incidents: Incidents(s.Drift), Timeline: Timeline(s.Drift, DriftStart(s)), Web: parts.Before != "" || parts.After != "" || len(parts.Scripts) > 0 || len(parts.Styles) > 0}
	page.ErrorTimes = ErrorTimes(page.Errors)
	if s.Resources != nil {
		page.Resources = ResourceRows(s.Resources)
	}
	charts, err := RunCharts(rd)
	if err != nil {
		return err
	}
	var plots Plots
	place := plots.Place
	for i, ph := range s.Stages {
		hs := htmlStage{P: ph, Open: OpenOperations(ph)}
		for _, c := range charts.Stages[i] {
			hs.Charts = append(hs.Charts, stageChart{Div: place(c), ID: plots.ID(len(plots) - 1), Name: shortName(c.Slug)})
		}
		page.Stages = append(page.Stages, hs)
	}
	for _, c := range charts.Across {
		page.Across = append(page.Across, place(c))
	}
	for _, c := range charts.Scaling {
		page.Scaling = append(page.Scaling, place(c))
	}
	for _, c := range charts.Drift {
		page.Drift = append(page.Drift, place(c))
	}
	if page.Plots, err = plots.Data(); err != nil {
		return err
	}
	return htmlTmpl.Execute(w, page)
}

// Charts are a run's charts: per stage (latency, throughput and errors over
// time, the HDR percentile plot), p95 across stages, and for a sweep of VUs
// throughput and speedup against VUs.
type Charts struct {
	Stages  [][]Chart
	Across  []Chart
	Scaling []Chart
	// Drift are a long run's series over time, with the stretches compared
	// and the changes of level marked.
	Drift []Chart
}

// RunCharts draws a run's charts from its interval histograms.
func RunCharts(rd *results.Run) (*Charts, error) {
	s := rd.Summary
	out := &Charts{}
	for _, ph := range s.Stages {
		cs, err := stageCharts(rd, ph)
		if err != nil {
			return nil, err
		}
		cs = append(cs, resourceCharts(rd.Points, ph)...)
		withIncidents(cs, s.Drift, ph.Name)
		out.Stages = append(out.Stages, cs)
	}
	if len(s.Stages) > 1 {
		out.Across = acrossCharts(s)
	}
	if sc := s.Scaling; sc != nil {
		out.Scaling = scalingCharts(sc)
	}
	out.Drift = driftCharts(s)
	return out, nil
}

// stageCharts draws one stage's charts: over time (throughput, errors,
// latency percentiles of the successful operations and, once the run
// records them, of the failed ones, start delay), and of the whole stage
// (the percentile curve and the distribution of latencies).
func stageCharts(rd *results.Run, ph results.PhaseSummary) ([]Chart, error) {
	// Each operation's intervals on their own goroutine: a long run has
	// thousands per operation. Their percentiles are read as stored
	// beside them; the curve is the stage's exact totals where the run
	// has them, else its intervals merged (a run still going).
	type opSeries struct {
		name        string
		ok, ko      opLines
		total, koHi *hdr.Histogram
		err         error
	}
	nominal := rd.Summary.IntervalLength()
	var jobs []*opSeries
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	totals := stageTotals(rd, ph.Index)
	start := ph.Start.UnixMilli()
	for _, op := range results.UniqueOps(ph.Operations) {
		if op.Kind == metrics.KindScenario {
			continue
		}
		ivs := rd.IntervalsOf(ph.Index, op)
		if len(ivs) == 0 {
			continue
		}
		j := &opSeries{name: op.Name, total: totals[metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}]}
		jobs = append(jobs, j)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var merged *hdr.Histogram
			if j.total == nil {
				merged = metrics.NewHistogram()
			}
			if j.ok, j.err = linesOf(ivs, start, nominal, merged); j.err != nil {
				return
			}
			if merged != nil {
				j.total = merged
			}
			j.ko, j.koHi, j.err = koSeries(rd, ph, op)
		}()
	}
	wg.Wait()
	var rate, errs, curve, dist []Series
	var pct [3][]Series // p50, p95, p99
	ko := false
	for i, j := range jobs {
		if j.err != nil {
			return nil, j.err
		}
		color := palette[i%len(palette)]
		for k := range pct {
			pct[k] = append(pct[k], Series{Name: j.name, Points: j.ok.lines[k], Partial: j.ok.partial[k], Color: color})
			if len(j.ko.lines[k])+len(j.ko.partial[k]) > 0 {
				pct[k] = append(pct[k], Series{Name: j.name + " KO", Points: j.ko.lines[k], Partial: j.ko.partial[k], Color: color, Dashed: true})
				ko = true
			}
		}
		rate = append(rate, Series{Name: j.name, Points: j.ok.lines[3], Partial: j.ok.partial[3], Color: color})
		if j.ok.anyErr {
			errs = append(errs, Series{Name: j.name, Points: j.ok.lines[4], Partial: j.ok.partial[4], Color: color})
		}
		curve = append(curve, Series{Name: j.name, Points: percentileCurve(j.total), Color: color})
		dist = append(dist, Series{Name: j.name, Points: distribution(j.total), Color: color})
		if c := percentileCurve(j.koHi); len(c) > 0 {
			curve = append(curve, Series{Name: j.name + " KO", Points: c, Color: color, Dashed: true})
			dist = append(dist, Series{Name: j.name + " KO", Points: distribution(j.koHi), Color: color, Dashed: true})
		}
	}
	delay, err := startDelaySeries(rd, ph)
	if err != nil {
		return nil, err
	}
	overTime := func(c Chart) Chart { return c.overStage(ph) }
	of := "of the successful operations"
	if ko {
		of = "OK: successful operations; KO, dashed: failed ones"
	}
	var charts []Chart
	for k, name := range []string{"p50", "p95", "p99"} {
		charts = append(charts, overTime(Chart{Slug: name + "-over-time", Title: name + " latency over time (" + of + ")", YLabel: "ms", YUnit: "ms", Series: pct[k], Median: true, RobustY: true}))
	}
	charts = append(charts,
		overTime(Chart{Slug: "throughput-over-time", Title: "Successful operations per second over time", YLabel: "per second", YUnit: "/s", Series: rate}),
		overTime(errorsChart(errs)))
	charts = append(charts, failureCharts(rd, ph)...)
	charts = append(charts,
		Chart{Slug: "latency-percentiles", Title: "Latency by percentile (HDR, the whole stage)", XLabel: "percentile", YLabel: "ms", YUnit: "ms", Series: curve,
			LogX: true, XKind: XNines, XTicks: []XY{{X: 1}, {X: 10}, {X: 100}, {X: 1000}, {X: 10000}},
			XTickLabel: func(x float64) string { return fmt.Sprintf("%g%%", 100*(1-1/x)) }},
		Chart{Slug: "latency-distribution", Title: "Distribution of latencies (HDR, the whole stage; 20 bins a decade)", XLabel: "latency, ms (log scale)", XUnit: "ms",
			YLabel: "% of operations", YUnit: "%", Series: dist, LogX: true, XKind: XLog, Step: true})
	if len(delay) > 0 {
		charts = append(charts, overTime(Chart{Slug: "start-delay-over-time", Title: "Start delay p99 over time (open models: from each iteration's due time to its start)",
			YLabel: "ms", YUnit: "ms", Series: delay, Median: true, RobustY: true}))
	}
	if vus := vusSeries(rd, ph); len(vus) > 0 {
		charts = append(charts, overTime(Chart{Slug: "vus-over-time", Title: "Active VUs over time (the most VUs in an iteration at once in each interval)",
			YLabel: "VUs", Series: vus}))
	}
	return charts, nil
}

// vusSeries is each scenario's active VUs per interval (the intervals'
// PeakVUs, from intervals.csv): none for a run that did not keep them.
func vusSeries(rd *results.Run, ph results.PhaseSummary) []Series {
	nominal := rd.Summary.IntervalLength()
	var out []Series
	for _, op := range ph.Operations {
		if op.Kind != metrics.KindScenario {
			continue
		}
		var pts, partial []XY
		for _, iv := range rd.IntervalsOf(ph.Index, op) {
			if iv.PeakVUs < 0 || sliver(iv, nominal) {
				continue
			}
			p := XY{float64(iv.StartMs-ph.Start.UnixMilli()) / 1000, float64(iv.PeakVUs)}
			if iv.Partial(nominal) {
				partial = append(partial, p)
			} else {
				pts = append(pts, p)
			}
		}
		if len(pts)+len(partial) > 0 {
			out = append(out, Series{Name: op.Scenario, Points: pts, Partial: partial})
		}
	}
	return out
}

// overStage makes c a chart over a stage's time: seconds into it (the
// interactive chart labels them as clock times from the stage's start,
// and says the time into the stage at the cursor), its cursor moving with
// the stage's others.
func (c Chart) overStage(ph results.PhaseSummary) Chart {
	c.XLabel, c.XKind, c.Sync, c.Start = "seconds into the stage", XSeconds, fmt.Sprintf("stage%d", ph.Index), ph.Start
	return c
}

// opLines are an operation's series over a stage: p50, p95, p99 (ms),
// operations and errors per second, each interval a point; a partial
// interval (cut short by the stage's end) is kept apart from the lines,
// as a point of its own (Series.Partial).
type opLines struct {
	lines, partial [5][]XY
	anyErr         bool
}

// linesOf reads an operation's intervals into its lines, x in seconds
// from start (Unix ms); merged, if not nil, gains their histograms.
func linesOf(ivs []*results.IntervalData, start int64, nominal time.Duration, merged *hdr.Histogram) (opLines, error) {
	var o opLines
	for _, iv := range ivs {
		q, err := iv.Quantiles()
		if err == nil && merged != nil {
			err = metrics.DecodeInto(merged, []byte(iv.Encoded()))
		}
		if err != nil {
			return o, err
		}
		if sliver(iv, nominal) {
			continue // in the totals and the distribution, not over time
		}
		x := float64(iv.StartMs-start) / 1000
		lines := &o.lines
		if iv.Partial(nominal) {
			lines = &o.partial
		}
		if secs := iv.Seconds(); secs > 0 {
			lines[3] = append(lines[3], XY{x, float64(q.N) / secs})
			lines[4] = append(lines[4], XY{x, float64(max(iv.Errors, 0)) / secs})
			o.anyErr = o.anyErr || iv.Errors > 0
		}
		if q.N > 0 {
			lines[0] = append(lines[0], XY{x, float64(q.P50) / 1e3})
			lines[1] = append(lines[1], XY{x, float64(q.P95) / 1e3})
			lines[2] = append(lines[2], XY{x, float64(q.P99) / 1e3})
		}
	}
	return o, nil
}

// sliver reports whether an interval is cut to less than a tenth of the
// run's: its few requests over a few milliseconds make a rate and
// percentiles of chance (4 requests in 42 ms are 95/s beside a steady
// 40/s), so the charts over time leave it out; its requests count in the
// totals, the distribution and the percentile curve. A longer partial
// interval is drawn as a point apart.
func sliver(iv *results.IntervalData, nominal time.Duration) bool {
	return iv.Partial(nominal) && 10*iv.Seconds() < nominal.Seconds()
}

// koSeries is an operation's failed operations (KO) over a stage, timed
// as the successful ones are: their latency percentiles per interval (the
// lines' p50, p95 and p99; the rates are the OK series') and their
// histogram over the whole stage, from the intervals that had failures
// (results.Run.FailedOf). The charts draw them beside the OK ones, dashed.
func koSeries(rd *results.Run, ph results.PhaseSummary, op results.Operation) (opLines, *hdr.Histogram, error) {
	ivs := rd.FailedOf(ph.Index, op)
	if len(ivs) == 0 {
		return opLines{}, nil, nil
	}
	total := metrics.NewHistogram()
	o, err := linesOf(ivs, ph.Start.UnixMilli(), rd.Summary.IntervalLength(), total)
	if total.TotalCount() == 0 {
		total = nil
	}
	return o, total, err
}

// startDelaySeries is each open-model scenario's start delay p99 per
// interval: where the generator fell behind its schedule, and when.
func startDelaySeries(rd *results.Run, ph results.PhaseSummary) ([]Series, error) {
	var out []Series
	for _, op := range ph.Operations {
		if op.Kind != metrics.KindScenario || op.StartDelay == nil {
			continue
		}
		var pts, partial []XY
		for _, iv := range rd.Intervals[results.StageTag(ph.Index, op.Scenario, op.Name, op.Kind)+results.StartDelayTag] {
			q, err := iv.Quantiles()
			if err != nil {
				return nil, err
			}
			if q.N == 0 || sliver(iv, rd.Summary.IntervalLength()) {
				continue
			}
			p := XY{float64(iv.StartMs-ph.Start.UnixMilli()) / 1000, float64(q.P99) / 1e3}
			if iv.Partial(rd.Summary.IntervalLength()) {
				partial = append(partial, p)
			} else {
				pts = append(pts, p)
			}
		}
		if len(pts)+len(partial) > 0 {
			out = append(out, Series{Name: op.Scenario, Points: pts, Partial: partial})
		}
	}
	return out, nil
}

type htmlPage struct {
	S *results.Summary
	// Resources are the rows of the monitors' table (ResourceRows).
	Resources      [][]string
	ResourceHeader []string
	Generated      string
	Stages         []htmlStage
	Across         []template.HTML
	Scaling        []template.HTML
	Drift          []template.HTML
	// Plots are the charts' data (JSON), for charts.js.
	Plots template.JS
	// Errors are the failures by message (RunErrorRowsOf), FailureLog
	// whether the run kept failed requests (failures.jsonl) to sample.
	Errors     []ErrorRow
	FailureLog bool
	// ErrorTimes says whether the errors table has First and Last
	// columns (ErrorTimes).
	ErrorTimes bool
	// Incidents are the drift's incidents, Timeline its changes and
	// incidents in order.
	Incidents []IncidentView
	Timeline  []TimelineEntry
	// Parts, when Web, make the report a page of perflab serve.
	Parts PageParts
	Web   bool
}

type htmlStage struct {
	P      results.PhaseSummary
	Open   []OpenOp // open-model operations
	Charts []stageChart
}

// stageChart is a stage's chart on the page: its placeholder, and the
// placeholder's id and a short name for the table of contents.
type stageChart struct {
	Div      template.HTML
	ID, Name string
}

// shortName is a chart's name in the table of contents: its slug, less
// "-over-time", in words ("p95", "throughput", "latency percentiles").
func shortName(slug string) string {
	return strings.ReplaceAll(strings.TrimSuffix(slug, "-over-time"), "-", " ")
}

// errorsChart draws failed operations per second over time; a stage with
// none says so in the title, over an empty frame.
func errorsChart(errs []Series) Chart {
	title := "Failed operations per second over time"
	if len(errs) == 0 {
		title += ": none failed"
	}
	return Chart{Slug: "errors-over-time", Title: title, XLabel: "seconds into the stage", YLabel: "per second", Series: errs}
}

// percentileCurve is the HDR percentile plot: latency against 1/(1-p).
// stageTotals are each operation's latency histogram over a whole stage,
// from the run's exact totals; none when the run has none (one still
// going).
func stageTotals(rd *results.Run, stage int) map[metrics.Key]*hdr.Histogram {
	out := map[metrics.Key]*hdr.Histogram{}
	if rd.Totals == nil {
		return out
	}
	for _, ph := range rd.Totals.Stages {
		if ph.Index == stage {
			keys, merged := metrics.MergeByKey(ph.Ops, ph.Totals)
			for i, op := range keys {
				out[metrics.KeyOf(op)] = merged[i].Hist
			}
		}
	}
	return out
}

func percentileCurve(h *hdr.Histogram) []XY {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	// 1/(1-p) from 1 (p0) by 20 steps a decade up to the count (beyond it
	// a percentile is the greatest value), and the max.
	n := float64(h.TotalCount())
	var ps []float64
	for k := 0; math.Pow(10, float64(k)/20) < n; k++ {
		ps = append(ps, 100*(1-math.Pow(10, -float64(k)/20)))
	}
	vs := h.ValueAtPercentilesSlice(ps)
	out := make([]XY, 0, len(ps)+1)
	for i, p := range ps {
		out = append(out, XY{1 / (1 - p/100), float64(vs[i]) / 1e3})
	}
	return append(out, XY{max(n, 2), float64(h.Max()) / 1e3})
}

// distribution is a histogram's latencies in bins of 20 a decade (from
// 10^(k/20) µs): the share of the operations in each, in %, at the bin's
// lower edge (ms), every bin from the least to the greatest value's, then
// the last bin's upper edge at 0 (a step chart's end).
func distribution(h *hdr.Histogram) []XY {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	bin := func(v float64) int { return int(math.Floor(20 * math.Log10(math.Max(v, 1)))) }
	lo, hi := bin(float64(h.Min())), bin(float64(h.Max()))
	counts := make([]int64, hi-lo+1)
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			counts[min(hi, max(lo, bin(float64(b.From+b.To)/2)))-lo] += b.Count
		}
	}
	edge := func(k int) float64 { return math.Pow(10, float64(k)/20) / 1e3 }
	out := make([]XY, 0, len(counts)+1)
	for i, c := range counts {
		out = append(out, XY{edge(lo + i), 100 * float64(c) / float64(h.TotalCount())})
	}
	return append(out, XY{edge(hi + 1), 0})
}

// acrossCharts draws, for a run of several stages (a sweep of VUs, rate or
// data size), each operation's p95 and throughput per stage as bars.
func acrossCharts(s *results.Summary) []Chart {
	var p95, rps []Series
	idx := map[string]int{}
	for i, ph := range s.Stages {
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario || op.Count == 0 {
				continue
			}
			j, ok := idx[op.Name]
			if !ok {
				j = len(p95)
				idx[op.Name] = j
				p95 = append(p95, Series{Name: op.Name})
				rps = append(rps, Series{Name: op.Name})
			}
			p95[j].Points = append(p95[j].Points, XY{float64(i + 1), op.Latency.P95})
			rps[j].Points = append(rps[j].Points, XY{float64(i + 1), op.RPS})
		}
	}
	var ticks []XY
	for i := range s.Stages {
		ticks = append(ticks, XY{X: float64(i + 1)})
	}
	label := func(x float64) string {
		i := int(math.Round(x)) - 1
		if i >= 0 && i < len(s.Stages) {
			return trim(s.Stages[i].Name, 14)
		}
		return ""
	}
	var names []string
	for _, ph := range s.Stages {
		names = append(names, ph.Name)
	}
	return []Chart{
		{Slug: "p95-per-stage", Title: "p95 latency per stage", XLabel: "stage", YLabel: "ms", YUnit: "ms", Series: p95, XTicks: ticks, XTickLabel: label, Bars: true, XKind: XStages, XNames: names},
		{Slug: "throughput-per-stage", Title: "Operations per second per stage", XLabel: "stage", YLabel: "per second", YUnit: "/s", Series: rps, XTicks: ticks, XTickLabel: label, Bars: true, XKind: XStages, XNames: names},
	}
}

// scalingCharts draws throughput against VUs with the USL fit, and speedup
// against the ideal line.
func scalingCharts(sc *results.Scaling) []Chart {
	var thr, speed, ideal []XY
	for _, p := range sc.Points {
		thr = append(thr, XY{float64(p.VUs), p.RPS})
		speed = append(speed, XY{float64(p.VUs), p.Speedup})
		ideal = append(ideal, XY{float64(p.VUs), float64(p.VUs) / float64(sc.Points[0].VUs)})
	}
	series := []Series{{Name: "measured", Points: thr}}
	if u := sc.USL; u != nil && len(sc.Points) > 0 {
		var fit []XY
		last := float64(sc.Points[len(sc.Points)-1].VUs)
		for i := 0; i <= 60; i++ {
			n := 1 + (last-1)*float64(i)/60
			fit = append(fit, XY{n, u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))})
		}
		series = append(series, Series{Name: "USL fit", Points: fit, Dashed: true})
	}
	return []Chart{
		{Slug: "throughput-vs-vus", Title: "Throughput against VUs", XLabel: "VUs", YLabel: "requests/s", Series: series},
		{Slug: "speedup-vs-vus", Title: "Speedup against VUs", XLabel: "VUs", YLabel: "speedup", Series: []Series{{Name: "measured", Points: speed}, {Name: "ideal", Points: ideal, Dashed: true}}},
	}
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":          results.Ms,
	"chartCSS":    func() template.CSS { return chartCSS },
	"driftClass":  DriftClass,
	"pct":         func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"f1":          func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":          func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"upper":       upperFirst,
	"actual":      ShownActual,
	"driftValue":  driftValue,
	"driftChange": driftChange,
	"help":        help,
	"list":        func(s ...string) []string { return s },
	"suspects":    func(v []IncidentView, suspect bool) []IncidentView { return suspects(v, suspect) },
	"opHeaders":   func() []Header { return operationHeaders },
	"opLegend":    func() []Legend { return operationLegend },
	"plotCSS":     func() template.CSS { return template.CSS(asset("uPlot.min.css") + asset("charts.css")) },
	"plotJS": func() template.JS {
		return template.JS("/*! uPlot's licence:\n" + strings.ReplaceAll(asset("uPlot.LICENSE"), "*/", "* /") + "*/\n" + asset("uPlot.iife.min.js") + "\n" + asset("charts.js"))
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.S.Plan.Name}} — perflab run {{.S.RunID}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1400px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right; } th:first-child, td:first-child { text-align: left; }
th { background: #f6f6f6; } .meta { color: #555; } .fail { color: #b00; font-weight: 600; } .ok { color: #070; } .warn { color: #9a5b00; font-weight: 600; }
svg.chart { display: block; margin: 8px 0 20px; max-width: 100%; height: auto; }
{{chartCSS}}
code { background: #f4f4f4; padding: 1px 4px; }
table.drift td:nth-child(2), table.drift th:nth-child(2) { text-align: left; }
@media print { body { max-width: none; margin: 0; padding: 0; font-size: 12px; } h2 { break-after: avoid; } table { font-size: 11px; } }
tr.ko td { color: #b00; } tr.ko td:first-child { padding-left: 20px; }
th[title] { text-decoration: underline dotted #999; cursor: help; }
dl.legend { font-size: 12px; color: #444; margin: -8px 0 16px; display: grid; grid-template-columns: max-content 1fr; gap: 1px 10px; max-width: 1100px; }
dl.legend dt { font-weight: 600; } dl.legend dd { margin: 0; }
nav#toc { border: 1px solid #ddd; background: #fafafa; padding: 6px 14px; margin: 12px 0; font-size: 13px; }
nav#toc ul { margin: 2px 0; padding-left: 18px; } nav#toc li { margin: 1px 0; } nav#toc .charts a { margin-right: 8px; }
@media print { nav#toc { display: none; } }
table.errors td:nth-child(-n+4), table.errors th:nth-child(-n+4) { text-align: left; } table.errors td:nth-child(4) { word-break: break-word; }
details.sample { margin: 4px 0; } details.sample summary { cursor: pointer; } details.sample pre { background: #f8f8f8; border: 1px solid #eee; padding: 6px; max-height: 360px; overflow: auto; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
</style>{{if not .Web}}<style>{{plotCSS}}</style>{{end}}{{range .Parts.Styles}}<link rel="stylesheet" href="{{.}}">{{end}}{{range .Parts.Scripts}}<script src="{{.}}" defer></script>{{end}}</head><body>
{{if .Web}}{{.Parts.Before}}<main id="report">{{end}}<h1>{{.S.Plan.Name}}</h1>
<p class="meta">Run <code>{{.S.RunID}}</code> — {{.S.StatusLine}}{{if .S.Error}} ({{.S.Error}}){{end}} — started {{.S.Start.Format "2006-01-02 15:04:05 MST"}}, {{f1 .S.Duration}} s{{if .S.Host.CPUs}} — load generator {{.S.Host.Hostname}}: {{.S.Host.CPUs}} CPUs {{.S.Host.CPUModel}}, perflab {{.S.Host.Perflab}}{{end}}</p>
{{with .S.LabelList}}<p class="meta">Labels: {{.}}</p>
{{end}}{{with .S.Origin.Sentence}}<p class="meta">{{.}}</p>
{{end}}{{with .S.Drift}}<p class="{{driftClass .}}" id="drift-verdict"><strong>Drift over time:</strong> {{.Verdict}}</p>
{{end}}{{with .Incidents}}{{template "incidents" .}}
{{end}}<p><code>{{.S.Total.Line}}</code></p>
<nav id="toc"><strong>Contents</strong> <span class="plot-zone"></span><ul>
{{if .Incidents}}<li><a href="#incidents">Incidents</a></li>
{{end}}{{if .S.Thresholds}}<li><a href="#thresholds">Thresholds</a></li>
{{end}}{{if .S.Warnings}}<li><a href="#warnings">Warnings</a></li>
{{end}}{{if .S.Drift}}<li><a href="#drift">Drift over time</a></li>
{{end}}{{range .Stages}}<li><a href="#stage-{{.P.Index}}">Stage {{.P.Index}}: {{.P.Name}}</a>: <a href="#stage-{{.P.Index}}-operations">operations</a>{{if .Open}} · <a href="#stage-{{.P.Index}}-open">open model</a>{{end}}{{with .Charts}} · <span class="charts">charts: {{range .}}<a href="#{{.ID}}">{{.Name}}</a> {{end}}</span>{{end}}</li>
{{end}}{{if .Errors}}<li><a href="#errors">Errors</a></li>
{{end}}{{if .Across}}<li><a href="#across">Across stages</a></li>
{{end}}{{if .S.Scaling}}<li><a href="#scaling">Scaling</a></li>
{{end}}{{if .Resources}}<li><a href="#resources">Resources</a></li>
{{end}}{{with .S.Resources}}{{if .SlowQueries}}<li><a href="#slow-queries">Slow queries</a></li>
{{end}}{{end}}</ul></nav>
{{with .S.Thresholds}}<h2 id="thresholds">Thresholds</h2><table><tr><th>Threshold</th><th>Operation</th><th>Stage</th><th title="{{help "Actual"}}">Actual</th><th>Result</th></tr>
{{range .}}<tr><td>{{.Threshold}}</td><td>{{.Operation}}</td><td>{{.Stage}}</td><td>{{actual .}}</td><td>{{if .Pass}}<span class="ok">pass</span>{{else}}<span class="fail">fail</span>{{end}}</td></tr>
{{end}}</table>{{end}}
{{with .S.Warnings}}<div id="warnings">{{range .}}<p class="fail">Warning: {{.}}</p>
{{end}}</div>{{end}}
{{with .S.Drift}}<h2 id="drift">Drift over time</h2><table class="drift"><tr><th>Stage</th><th>Series</th><th title="{{help "Start"}}">Start</th><th title="{{help "End"}}">End</th><th title="{{help "Change"}}">Change</th><th>Verdict</th></tr>
{{range .Series}}<tr><td>{{.Stage}}</td><td>{{.Name}}</td><td>{{driftValue . .Start}}</td><td>{{driftValue . .End}}</td><td>{{driftChange .}}</td><td>{{if eq .Verdict "degraded"}}<span class="fail">degraded</span>{{else}}{{.Verdict}}{{end}}</td></tr>
{{end}}{{with .Generator}}{{range .Series}}<tr class="generator"><td>{{.Stage}}</td><td>{{.Name}} (generator)</td><td>{{driftValue . .Start}}</td><td>{{driftValue . .End}}</td><td>{{driftChange .}}</td><td>{{.Verdict}}</td></tr>
{{end}}{{end}}</table>{{if or .Hint $.Timeline}}<div id="timeline"><p><strong>What changed, in order:</strong>{{with .Hint}} {{.}}.{{end}}</p>{{with $.Timeline}}<ol class="timeline">
{{range .}}<li{{if .Incident}} class="incident"{{end}}>{{if .ID}}<a href="#{{.ID}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</li>
{{end}}</ol>{{end}}</div>{{end}}{{with .Generator}}<p>The load generator, judged apart: {{.Verdict}}.</p>{{end}}<p class="meta">{{upper .Method}}. Shaded: the stretches whose levels are compared; dashed: where the level changed{{if $.Incidents}}; amber: the incidents, whose intervals the level tests leave out{{end}}.</p>
{{range $.Drift}}{{.}}{{end}}{{end}}
{{range $st := .Stages}}<h2 id="stage-{{.P.Index}}">Stage {{.P.Index}}: {{.P.Name}}</h2>
<p class="meta">{{f1 .P.Duration}} s{{range .P.Load}} — {{.Scenario}}: {{.VUs}} VUs{{if .Iterations}} × {{.Iterations}} iterations{{end}}{{if .TotalIterations}}, {{.TotalIterations}} iterations shared{{end}}{{if .Rate}}, {{.Rate}} iterations/s{{end}}{{end}}{{if .P.Error}} — stopped: {{.P.Error}}{{end}}</p>
<table id="stage-{{.P.Index}}-operations"><tr>{{range opHeaders}}<th{{with .Title}} title="{{.}}"{{end}}>{{.Name}}</th>{{end}}</tr>
{{range $op := .P.Operations}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Count}}</td><td>{{.Errors.Total}}</td><td>{{f1 .RPS}}</td><td>{{ms .Latency.Min}}</td><td>{{ms .Latency.Mean}}</td><td>{{ms .Latency.P50}}</td><td>{{ms .Latency.P75}}</td><td>{{ms .Latency.P90}}</td><td>{{ms .Latency.P95}}</td><td>{{ms .Latency.P99}}</td><td>{{ms .Latency.Max}}</td><td>{{f2 .OpRate.Avg}}</td></tr>
{{if .KOCount}}{{with .Failed}}<tr class="ko"><td>{{$op.Name}} KO</td><td></td><td>{{$op.KOCount}}</td><td></td><td></td><td>{{ms .Min}}</td><td>{{ms .Mean}}</td><td>{{ms .P50}}</td><td>{{ms .P75}}</td><td>{{ms .P90}}</td><td>{{ms .P95}}</td><td>{{ms .P99}}</td><td>{{ms .Max}}</td><td></td></tr>
{{end}}{{end}}{{end}}</table>
<dl class="legend">{{range opLegend}}<dt>{{.Columns}}</dt><dd>{{.Help}}</dd>{{end}}</dl>
{{with .Open}}<table id="stage-{{$st.P.Index}}-open"><tr><th>Open model</th><th>Kind</th>{{range $h := list "Latency p50" "Latency p99" "Service time p50" "Service time p99" "Start delay p50" "Start delay p99" "Start delay max" "Dropped" "Queued"}}<th title="{{help $h}}">{{$h}}</th>{{end}}</tr>
{{range .}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{ms .Latency.P50}}</td><td>{{ms .Latency.P99}}</td><td>{{ms .ServiceTime.P50}}</td><td>{{ms .ServiceTime.P99}}</td><td>{{with .StartDelay}}{{ms .P50}}</td><td>{{ms .P99}}</td><td>{{ms .Max}}{{else}}</td><td></td><td>{{end}}</td><td>{{.DroppedDue}}</td><td>{{.Queued}}</td></tr>
{{end}}</table>
<p class="meta">Open model: latency from each iteration's due time = start delay (waiting for a VU or for the generator) + service time (from the send).</p>{{end}}
<div id="stage-{{.P.Index}}-charts">{{range .Charts}}{{.Div}}{{end}}</div>
{{end}}
{{with .Errors}}<h2 id="errors">Errors</h2><table class="errors"><tr><th>Stage</th><th>Operation</th><th>Kind</th><th>Message</th><th>Count</th><th title="{{help "Share"}}">Share</th>{{if $.ErrorTimes}}<th title="{{help "First"}}">First</th><th title="{{help "Last"}}">Last</th>{{end}}</tr>
{{range .}}<tr><td>{{.Stage}}</td><td>{{.Operation}}</td><td>{{.Kind}}</td><td>{{.Message}}</td><td>{{.Count}}</td><td>{{printf "%.2f%%" .Share}}</td>{{if $.ErrorTimes}}<td>{{.FirstText}}</td><td>{{.LastText}}</td>{{end}}</tr>
{{end}}</table><dl class="legend"><dt>Share</dt><dd>{{help "Share"}}</dd>{{if $.ErrorTimes}}<dt>First, Last</dt><dd>{{help "First"}}; {{help "Last"}}</dd>{{end}}</dl>
<p class="meta">What failed requests said; share of the operation's requests.</p>
<div id="error-samples">{{if $.FailureLog}}{{range .}}{{with .Sample}}<details class="sample"><summary>{{.Stage}} / {{.Step}}: {{.Kind}} {{.Message}} — the first, at {{.Time.UTC.Format "2006-01-02 15:04:05.000"}} UTC</summary>{{if .Response}}<pre>{{.Response}}</pre>{{if .ResponseTruncated}}<p class="meta">(cut to its first 8 KiB)</p>{{end}}{{else}}<p class="meta">No response came.</p>{{end}}</details>
{{end}}{{end}}<p class="meta">Above: the first failed request of each message, its response as received (head and body's first 8 KiB, secrets redacted), from the run's failures.jsonl.</p>{{else}}<p class="meta">No samples of the failures' responses: run with <code>--dump-failures</code> to keep samples (the run directory's failures.jsonl; the history does not keep them).</p>{{end}}</div>{{end}}
{{if .Across}}<h2 id="across">Across stages</h2>{{range .Across}}{{.}}{{end}}{{end}}
{{with .S.Scaling}}<h2 id="scaling">Scaling</h2><table><tr><th>VUs</th><th>Requests</th><th title="{{help "Wall s"}}">Wall s</th><th>Requests/s</th><th title="{{help "Speedup"}}">Speedup</th><th title="{{help "Efficiency"}}">Efficiency</th></tr>
{{range .Points}}<tr><td>{{.VUs}}</td><td>{{.Requests}}</td><td>{{f2 .Wall}}</td><td>{{f1 .RPS}}</td><td>{{f2 .Speedup}}</td><td>{{pct .Efficiency}}</td></tr>
{{end}}</table><p>{{upper .Sentence}}.{{with .USL}} Universal Scalability Law: λ {{f1 .Lambda}}/s, σ {{printf "%.4f" .Sigma}}, κ {{printf "%.6f" .Kappa}}{{if .PeakVUs}}, predicted peak {{f1 .PeakRPS}}/s at {{f1 .PeakVUs}} VUs{{end}} (R² {{printf "%.3f" .R2}}).{{end}}</p>{{end}}
{{range $.Scaling}}{{.}}{{end}}
{{with .Resources}}<section id="resources"><h2>Resources</h2><table><tr>{{range $.ResourceHeader}}<th{{with help .}} title="{{.}}"{{end}}>{{.}}</th>{{end}}</tr>
{{range .}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></section>{{end}}{{with .S.Resources}}{{with .SlowQueries}}<h3 id="slow-queries">Slow queries</h3><table><tr><th>Monitor</th><th>Calls</th><th>Mean ms</th><th>Total ms</th><th>Query</th></tr>
{{range .}}<tr><td>{{.Monitor}}</td><td>{{.Calls}}</td><td>{{f1 .MeanMS}}</td><td>{{f1 .TotalMS}}</td><td><code>{{.Query}}</code></td></tr>
{{end}}</table>{{end}}{{end}}
<p class="meta">Generated by perflab at {{.Generated}}.</p>
<script type="application/json" class="perflab-plots">{{.Plots}}</script>
{{if .Web}}</main>{{.Parts.After}}{{else}}<script id="perflab-charts">{{plotJS}}</script>{{end}}</body></html>
{{define "incidents"}}<div class="incidents" id="incidents"><p><strong>{{len .}} {{if eq (len .) 1}}incident{{else}}incidents{{end}}</strong>: changes that did not last (an outage, a burst of errors, a latency excursion), each shaded amber on the charts of its stage{{with suspects . true}}; {{len .}} of them while the generator's host was busier or saturated, listed last{{end}}.</p>{{with suspects . false}}<ol>
{{range .}}{{template "incident" .}}{{end}}</ol>{{end}}{{with suspects . true}}<details{{if not (suspects $ false)}} open{{end}}><summary>{{len .}} suspect {{if eq (len .) 1}}incident{{else}}incidents{{end}}: the generator's host was busier or saturated during each, the generator's doing as likely as the system's</summary><ol>
{{range .}}{{template "incident" .}}{{end}}</ol></details>{{end}}</div>{{end}}
{{define "incident"}}<li id="{{.ID}}" value="{{.N}}"><strong>Incident {{.N}}</strong>, stage {{.Stage}}: {{.When}}.<ul>{{range .Effects}}<li>{{.}}</li>{{end}}</ul>{{with .Suspect}}<p class="suspect">suspect: the generator's host meanwhile: {{.}} (the generator's doing as likely as the system's)</p>{{end}}</li>
{{end}}`))

// asset is one of the charts' files (Assets).
func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(err) // embedded: only a build without it fails
	}
	return string(b)
}
