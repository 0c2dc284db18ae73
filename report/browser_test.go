package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/perflab/perflab/internal/browsertest"
	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

// The HTML report of a run whose requests partly failed, in a real
// headless Chromium: every chart draws, the failures are charted where
// the server failed them (the errors per second over the run's intervals
// add up to the server's count of 500s), a drag zooms, shift-drag pans,
// a legend entry hides its series, and nothing goes wrong in the page.
// Screenshots: artifacts/report-failures.png, report-drift.png (its drift
// charts, at the top).
func TestReportWithFailuresInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	var calls, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		if r.URL.Path == "/flaky" && calls.Add(1)%3 == 0 {
			failed.Add(1)
			http.Error(w, "down", http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	res := runPlan(t, dir, "name: flaky\ntarget: "+srv.URL+"\ninterval: 250ms\nscenarios:\n"+
		"  - {name: buy, vus: 2, duration: 3s, flow: [{name: item, url: /item}, {name: flaky, url: /flaky}]}\n")
	rd, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	plots := writeReport(t, rd, page)
	// The errors chart has the failing operation alone, and its rates
	// over the intervals' lengths are the server's 500s.
	var errs *report.Plot
	at := 0 // the errors chart's place
	for i := range plots {
		if plots[i].Slug == "errors-over-time" {
			errs, at = &plots[i], i
		}
	}
	if errs == nil || len(errs.Series) != 1 || errs.Series[0].Name != "flaky" {
		t.Fatalf("the errors chart: %+v", errs)
	}
	ph := rd.Summary.Stages[0]
	sum := 0.0
	nominal := rd.Summary.IntervalLength()
	for _, iv := range rd.Intervals[results.StageTag(ph.Index, "buy", "flaky", metrics.KindStep)] {
		if iv.Partial(nominal) && 10*iv.Seconds() < nominal.Seconds() {
			// A sliver of an interval is left out of the charts over
			// time; its failures count here all the same.
			sum += float64(iv.Errors)
			continue
		}
		x := float64(iv.StartMs-ph.Start.UnixMilli()) / 1000
		sum += valueAt(t, *errs, 0, x) * iv.Seconds()
	}
	if n := failed.Load(); n == 0 || math.Round(sum) != float64(n) {
		t.Errorf("the errors chart adds up to %.2f failed requests; the server failed %d", sum, n)
	}
	// The failed requests are timed as the successful ones: their
	// percentiles over time, their percentile curve and their
	// distribution are series of their own (KO), beside the OK ones.
	for _, slug := range []string{"p50-over-time", "p95-over-time", "p99-over-time", "latency-percentiles", "latency-distribution"} {
		var names []string
		for _, pl := range plots {
			if pl.Slug == slug || strings.HasPrefix(pl.Slug, slug+"-") {
				for _, ser := range pl.Series {
					names = append(names, ser.Name)
				}
			}
		}
		if !slices.Contains(names, "flaky KO") || !slices.Contains(names, "flaky") || slices.Contains(names, "item KO") {
			t.Errorf("%s: series %q, want flaky and flaky KO, and no KO of item (which never failed)", slug, names)
		}
	}
	// The active VUs chart: the scenario's 2 VUs in every whole interval.
	vus := slices.IndexFunc(plots, func(p report.Plot) bool { return p.Slug == "vus-over-time" })
	if vus < 0 || len(plots[vus].Series) != 1 || plots[vus].Series[0].Name != "buy" {
		t.Fatalf("no active VUs chart of buy: %d charts", len(plots))
	}
	for _, iv := range rd.IntervalsOf(ph.Index, results.Operation{Name: "buy", Kind: metrics.KindScenario, Scenario: "buy"}) {
		if !iv.Partial(rd.Summary.IntervalLength()) {
			if v := valueAt(t, plots[vus], 0, float64(iv.StartMs-ph.Start.UnixMilli())/1000); v != 2 {
				t.Errorf("active VUs %v at +%d ms, want the plan's 2", v, iv.StartMs-ph.Start.UnixMilli())
			}
		}
	}
	bctx := browsertest.New(t, chromium, 2*time.Minute)
	problems := browsertest.Problems(t, bctx)
	timing := open(t, bctx, page, len(plots))
	t.Logf("a %.1f s run of %d intervals: report %d KB, loaded in %.0f ms, charts drawn at %.0f ms", ph.Duration, len(errs.Data[0].V), size(page)/1024, timing.Load, timing.Drawn)
	shot(t, bctx, "report-drift.png", 0)
	shot(t, bctx, "report-failures.png", at-1)
	zoomAndPan(t, bctx, 0)
	printed(t, bctx)
	for _, p := range problems() {
		t.Error(p)
	}
}

// A latency chart of a baseline of 2 to 3 ms with four intervals of
// 500 ms, in Chromium: its y axis goes by default well below 500 ms, the
// baseline in view, the four points above it marked and counted; its log
// scale is uPlot's distr 3, its full range reaches 500; its x axis reads
// as clock times from the stage's start (13:37:10 UTC), in UTC or, at the
// choice of the page, in the browser's local time (Asia/Kolkata,
// UTC+05:30), and its legend says the time into the stage at the cursor.
// The table of contents' links each go to an element of the page.
// Screenshots: artifacts/report-clipped.png, report-log.png.
func TestReportLatencyAxesInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rd, t0 := spikyRun(t)
	page := filepath.Join(t.TempDir(), "report.html")
	plots := writeReport(t, rd, page)
	i := slices.IndexFunc(plots, func(p report.Plot) bool { return p.Slug == "p99-over-time" })
	if i < 0 || !plots[i].RobustY || plots[i].T0 != float64(t0.Unix()) {
		t.Fatalf("no p99 chart with a robust y axis from %v: %+v", t0, plots)
	}
	bctx := browsertest.New(t, chromium, 2*time.Minute, chromedp.Env("TZ=Asia/Kolkata"))
	problems := browsertest.Problems(t, bctx)
	open(t, bctx, page, len(plots))
	type axis struct {
		Distr         int
		Min, Max      float64
		Count         int
		ClippedMax    float64
		Note, Label   string
		Splits        []float64
		Values        []string
		Mode, Pressed string
	}
	read := func() axis {
		t.Helper()
		return eval[axis](t, bctx, fmt.Sprintf(`(() => { const u = perflabCharts.charts[%d], el = u.root.parentElement, c = u.clipped || {};
			return {distr: u.scales.y.distr, min: u.scales.y.min, max: u.scales.y.max, count: c.count || 0, clippedMax: c.max || 0,
				note: el.querySelector('.plot-clipped').textContent, label: u.axes[0].label(u), splits: u.axes[0]._splits, values: u.axes[0]._values,
				mode: u.yMode, pressed: el.querySelector('.plot-ymode[aria-pressed=true]').dataset.mode} })()`, i))
	}
	mode := func(m string) axis {
		t.Helper()
		eval[bool](t, bctx, fmt.Sprintf(`perflabCharts.charts[%d].root.parentElement.querySelector('.plot-ymode[data-mode=%s]').click(), true`, i, m))
		return read()
	}
	// Clipped, by default: the baseline's 95th percentile is 2.4 ms, the
	// axis goes to 1.5 times it, plus a twentieth.
	a := read()
	if a.Mode != "clipped" || a.Pressed != "clipped" || a.Distr != 1 || a.Min != 0 || math.Abs(a.Max-1.05*1.5*2.4) > 0.01 {
		t.Errorf("by default: y axis %s (%s pressed), distr %d, %g..%g ms; want clipped, 0..%g", a.Mode, a.Pressed, a.Distr, a.Min, a.Max, 1.05*1.5*2.4)
	}
	if a.Count != 4 || a.ClippedMax != 500 || !strings.Contains(a.Note, "4 points above the axis, max 500 ms") {
		t.Errorf("clipped: %d points marked, max %g; the note %q; want the 4 spikes of 500 ms", a.Count, a.ClippedMax, a.Note)
	}
	// The marks are drawn: red pixels (the series' colour) along the top
	// edge, at the spikes' x.
	shot(t, bctx, "report-clipped.png", i)
	if l := mode("log"); l.Distr != 3 || l.Max < 500 || l.Min > 2 || l.Min <= 0 || l.Count != 0 || l.Note != "" || l.Pressed != "log" {
		t.Errorf("log scale: distr %d, %g..%g ms, %d marked (%q), %s pressed; want distr 3 from at most 2 up to 500 and more, none marked", l.Distr, l.Min, l.Max, l.Count, l.Note, l.Pressed)
	}
	shot(t, bctx, "report-log.png", i)
	if f := mode("full"); f.Distr != 1 || f.Max < 500 || f.Max > 600 || f.Count != 0 || f.Note != "" {
		t.Errorf("full range: distr %d, up to %g ms, %d marked; want distr 1 up to 500 and a twentieth, none marked", f.Distr, f.Max, f.Count)
	}
	if c := mode("clipped"); c.Max != a.Max || c.Count != 4 {
		t.Errorf("clipped again: up to %g ms, %d marked; was %g, 4", c.Max, c.Count, a.Max)
	}
	// The x axis: clock times of the stage, on round times, in UTC.
	clocks := func(a axis, zone *time.Location, name string) {
		t.Helper()
		if !strings.Contains(a.Label, "clock time ("+name+")") || !strings.Contains(a.Label, "start at "+t0.In(zone).Format("2006-01-02 15:04:05")) {
			t.Errorf("the x axis is labelled %q; want clock time (%s), the stage's start", a.Label, name)
		}
		if len(a.Splits) < 3 || len(a.Splits) != len(a.Values) {
			t.Fatalf("x ticks %v, labels %q", a.Splits, a.Values)
		}
		step := a.Splits[1] - a.Splits[0]
		for k, x := range a.Splits {
			at := t0.Add(time.Duration(math.Round(x*1000)) * time.Millisecond).In(zone)
			want := at.Format("15:04")
			if step < 60 {
				want = at.Format("15:04:05")
			}
			if k == 0 {
				want += "\n" + at.Format("2006-01-02")
			}
			if a.Values[k] != want || at.Unix()%int64(step) != 0 && step >= 1 {
				t.Errorf("x tick %d at %g s into the stage: %q; want %q, on a round time", k, x, a.Values[k], want)
			}
		}
	}
	clocks(read(), time.UTC, "UTC")
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	eval[bool](t, bctx, `document.querySelector('.plot-zone button[data-zone=local]').click(), true`)
	clocks(read(), kolkata, "local time, UTC+05:30")
	eval[bool](t, bctx, `perflabCharts.setZone(true), true`)
	// At the cursor: the clock time and the time into the stage.
	at := eval[string](t, bctx, fmt.Sprintf(`(() => { const u = perflabCharts.charts[%d]; u.setCursor({left: u.valToPos(600, 'x'), top: 20});
		return u.root.parentElement.querySelector('.plot-at').textContent })()`, i))
	if want := "13:47:10 UTC (10:00 into the stage):"; at != want {
		t.Errorf("the legend at 600 s into the stage: %q, want %q", at, want)
	}
	// Zoomed in on 150 to 250 s, 11 intervals, one of them a spike: the
	// clipped axis is of those in view (their 95th percentile, 2.4 ms
	// and half of 500 - 2.4 ms, times 1.5), the one spike marked.
	eval[bool](t, bctx, fmt.Sprintf(`perflabCharts.charts[%d].setScale('x', {min: 150, max: 250}), true`, i))
	if z := read(); math.Abs(z.Max-1.05*1.5*(2.4+0.5*(500-2.4))) > 0.01 || z.Count != 1 {
		t.Errorf("zoomed in on 150..250 s: up to %g ms, %d marked; want %g, 1", z.Max, z.Count, 1.05*1.5*(2.4+0.5*(500-2.4)))
	}
	for _, p := range problems() {
		t.Error(p)
	}
}

// spikyRun is a 20-minute stage, from 13:37:10 UTC, of 120 intervals of
// 10 s of one operation: p50, p95 and p99 of 2.0 to 2.4 ms, but for four
// intervals of 500 ms. It returns the run and the stage's start.
func spikyRun(t *testing.T) (*results.Run, time.Time) {
	t.Helper()
	t0 := time.Date(2026, 11, 22, 13, 37, 10, 0, time.UTC)
	const intervals, step = 120, 10 * time.Second
	rd, ph, totals := newRun("spiky", t0, intervals, step)
	op := metrics.Op{Scenario: "s", Name: "get", Kind: metrics.KindStep}
	ph.Operations = []results.Operation{{Name: "get", Kind: metrics.KindStep, Scenario: "s"}}
	total := metrics.NewStats() // the stage's exact totals, for its curves
	totals.Ops, totals.Totals = []metrics.Op{op}, []*metrics.Stats{total}
	for i := range intervals {
		v := int64(2000 + 100*(i%5)) // µs
		if i%30 == 20 {
			v = 500_000
		}
		q := metrics.Quantiles{N: 100, P50: v, P95: v, P99: v, Max: v}
		total.Add(time.Duration(v)*time.Microsecond, time.Duration(v)*time.Microsecond, metrics.OK, 0)
		start := t0.Add(time.Duration(i) * step).UnixMilli()
		rd.Intervals[results.Tag("s1", op)] = append(rd.Intervals[results.Tag("s1", op)], results.NewIntervalQuantiles(start, start+step.Milliseconds(), q.N, 0, "", &q))
	}
	rd.Summary.Stages = []results.PhaseSummary{ph}
	return rd, t0
}

// newRun is a run named name of one stage of intervals of step from t0,
// without operations yet: the run, its stage (for its summary's stages
// once it has its operations) and the stage's exact totals.
func newRun(name string, t0 time.Time, intervals int, step time.Duration) (*results.Run, results.PhaseSummary, *metrics.Phase) {
	end := t0.Add(time.Duration(intervals) * step)
	ph := results.PhaseSummary{Index: 1, Name: name, Start: t0, End: end, Duration: end.Sub(t0).Seconds()}
	s := &results.Summary{Format: results.Format, RunID: name, Status: metrics.StatusCompleted, Start: t0, End: end, Duration: ph.Duration, Interval: step.Seconds()}
	s.Plan.Name = name
	totals := &metrics.Phase{Index: 1, Name: name, Start: t0, End: end}
	return &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{}, Totals: &results.Totals{Stages: []*metrics.Phase{totals}}}, ph, totals
}

// printed prints the page as a PDF (artifacts/report.pdf): the charts are
// made the paper's width before (beforeprint) and the page's again after;
// in print media the hints and the tooltip are not shown.
func printed(t *testing.T, bctx context.Context) {
	t.Helper()
	wide := eval[int](t, bctx, `perflabCharts.charts[0].width`)
	pdf, err := chromedp.Call(bctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf.Data, []byte("%PDF")) || eval[int](t, bctx, `perflabCharts.printed || 0`) != 1 || eval[int](t, bctx, `perflabCharts.charts[0].width`) != wide {
		t.Errorf("printed: %d bytes; beforeprint %d times; width %d, was %d", len(pdf.Data), eval[int](t, bctx, `perflabCharts.printed || 0`), eval[int](t, bctx, `perflabCharts.charts[0].width`), wide)
	}
	os.WriteFile(filepath.Join(browsertest.Artifacts(), "report.pdf"), pdf.Data, 0o644)
	if _, err := chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	if hints := eval[int](t, bctx, `Array.from(document.querySelectorAll('.plot-hint')).filter(e => getComputedStyle(e).display !== 'none').length`); hints != 0 {
		t.Errorf("printed, %d charts show their hints", hints)
	}
	chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
}

// The HTML report of a 72-hour run at 10 s intervals (25,920 intervals of
// four operations, the monitors sampled every 10 s) opens in Chromium
// within 10 s (measured, on an idle machine: docs/results.md says the
// figure), every chart draws, downsampled to report.MaxBuckets buckets
// whose band keeps the one slow interval (above p99's clipped y axis,
// marked and counted there), and a drag zooms in (the stage's charts over
// time with it).
// Screenshots: artifacts/report-72h.png, report-72h-zoomed.png.
func TestReport72HoursInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	rd, spike := soakRun(t)
	page := filepath.Join(t.TempDir(), "report.html")
	plots := writeReport(t, rd, page)
	want := []string{"p50-over-time", "p95-over-time", "p99-over-time", "throughput-over-time", "errors-over-time", "latency-percentiles",
		"latency-distribution", "cpu-over-time", "memory-over-time", "gc-over-time", "host-busy-over-time"}
	var slugs []string
	for _, p := range plots {
		slugs = append(slugs, p.Slug)
		if p.X == report.XSeconds && (len(p.Data[0].V) > report.MaxBuckets+2 || p.Bucketed == "") {
			t.Errorf("%s: %d x values, %q", p.Slug, len(p.Data[0].V), p.Bucketed)
		}
	}
	if strings.Join(slugs, " ") != strings.Join(want, " ") {
		t.Errorf("charts %q, want %q", slugs, want)
	}
	// The slow interval: in its bucket's max, not in its median.
	p99 := plots[2]
	s := p99.Series[1] // search
	if p99.Series[1].Name != "search" || s.Max == nil {
		t.Fatalf("p99: %+v", p99.Series)
	}
	i := nearest(p99.Data[0].V, spike)
	if got := p99.Data[*s.Max].V[i]; got != 5000 {
		t.Errorf("the bucket of the slow interval: max %g ms, want 5000", got)
	}
	if got := p99.Data[s.Y].V[i]; got > 100 {
		t.Errorf("the bucket of the slow interval: median %g ms, want the others' level", got)
	}
	bctx := browsertest.New(t, chromium, 3*time.Minute)
	problems := browsertest.Problems(t, bctx)
	timing := open(t, bctx, page, len(plots))
	t.Logf("a 72-hour run: report %.1f MB, loaded in %.0f ms, charts drawn at %.0f ms", float64(size(page))/(1<<20), timing.Load, timing.Drawn)
	if timing.Drawn > 10000 {
		t.Errorf("the report's charts were drawn %.0f ms after the navigation began; want under 10 s (2 s on an idle machine)", timing.Drawn)
	}
	shot(t, bctx, "report-72h.png", 0)
	// The slow interval is above p99's clipped y axis, marked and counted.
	type clipped struct {
		Count int
		Max   float64
	}
	if c := eval[clipped](t, bctx, `perflabCharts.charts[2].clipped`); c != (clipped{1, 5000}) {
		t.Errorf("p99: %+v above the y axis; want the slow interval's 5000 ms alone", c)
	}
	zoomAndPan(t, bctx, 2)
	// The stage's other charts over time zoomed and panned with it.
	x := eval[[4]float64](t, bctx, `(c => [c[0].scales.x.min, c[0].scales.x.max, c[2].scales.x.min, c[2].scales.x.max])(perflabCharts.charts)`)
	if span := x[3] - x[2]; math.Abs(x[0]-x[2]) > 0.02*span || math.Abs(x[1]-x[3]) > 0.02*span {
		t.Errorf("p50's x %g..%g, p99's %g..%g: they did not zoom together", x[0], x[1], x[2], x[3])
	}
	shot(t, bctx, "report-72h-zoomed.png", 2)
	for _, p := range problems() {
		t.Error(p)
	}
}

// writeReport writes rd's HTML report to page, and returns its charts'
// data.
func writeReport(t *testing.T, rd *results.Run, page string) []report.Plot {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, rd); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	const open = `<script type="application/json" class="perflab-plots">`
	data := b.String()[strings.Index(b.String(), open)+len(open):]
	var plots []report.Plot
	if err := json.Unmarshal([]byte(data[:strings.Index(data, "</script>")]), &plots); err != nil {
		t.Fatal(err)
	}
	return plots
}

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// valueAt is a series' value at x, on its line or a partial point.
func valueAt(t *testing.T, p report.Plot, series int, x float64) float64 {
	t.Helper()
	i := nearest(p.Data[0].V, x)
	if math.Abs(p.Data[0].V[i]-x) > 1e-6 {
		t.Fatalf("%s: no x %g", p.Slug, x)
	}
	s := p.Series[series]
	if v := p.Data[s.Y].V[i]; !math.IsNaN(v) {
		return v
	}
	if s.Partial != nil && !math.IsNaN(p.Data[*s.Partial].V[i]) {
		return p.Data[*s.Partial].V[i]
	}
	t.Fatalf("%s: %s has no value at %g", p.Slug, s.Name, x)
	return 0
}

func nearest(xs []float64, x float64) int {
	best := 0
	for i, v := range xs {
		if math.Abs(v-x) < math.Abs(xs[best]-x) {
			best = i
		}
	}
	return best
}

type timing struct{ Load, Drawn float64 }

// eval is the value of a script in the page.
func eval[T any](t *testing.T, bctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(bctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// open opens the report and waits for its charts: each of the n drawn
// (a canvas with pixels painted); it returns when the page had loaded
// and when charts.js had drawn them, in ms from the navigation's start.
func open(t *testing.T, bctx context.Context, page string, n int) timing {
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	tm := eval[timing](t, bctx, `({load: performance.getEntriesByType('navigation')[0].loadEventEnd, drawn: perflabCharts.drawnAt})`)
	placed, painted := eval[int](t, bctx, `document.querySelectorAll('div.plot').length`), eval[int](t, bctx, browsertest.PaintedIn("div.plot"))
	if placed != n || painted != n {
		t.Errorf("%d charts placed, %d drawn; the report has %d", placed, painted, n)
	}
	// The table of contents: each link goes to an element of the page,
	// one to each chart of a stage (the drift's charts, as many as its
	// verdict has series to show, are under its one link).
	staged := eval[int](t, bctx, `document.querySelectorAll('div[id^="stage-"][id$="-charts"] div.plot').length`)
	if broken, links := eval[[]string](t, bctx, browsertest.BrokenLinks), eval[int](t, bctx, browsertest.TOCLinks); len(broken) > 0 || links < 2+staged {
		t.Errorf("the table of contents has %d links (want a stage's, its table's and its %d charts' at least); no element for %q", links, staged, broken)
	}
	// One file: the page loaded nothing besides itself.
	if loaded := eval[[]string](t, bctx, `performance.getEntriesByType('resource').map(e => e.name)`); len(loaded) > 0 {
		t.Errorf("the report loaded %q", loaded)
	}
	return tm
}

// zoomAndPan drags across the middle of chart i: its x range narrows to
// what was dragged over; then drags it with shift held: the range moves
// by as much, its width kept; then hides its first series by its legend
// entry.
func zoomAndPan(t *testing.T, bctx context.Context, i int) {
	t.Helper()
	type extent struct{ Left, Top, Width, Height, Min, Max float64 }
	read := fmt.Sprintf(`(() => { const u = perflabCharts.charts[%d]; u.root.scrollIntoView(); const r = u.over.getBoundingClientRect();
		return {left: r.left, top: r.top, width: r.width, height: r.height, min: u.scales.x.min, max: u.scales.x.max} })()`, i)
	box := eval[extent](t, bctx, read)
	before := box
	drag := func(from, to float64, mods int64) {
		y := box.Top + box.Height/2
		x0, x1 := box.Left+from*box.Width, box.Left+to*box.Width
		mouse := func(typ input.DispatchMouseEventType, x float64, buttons int64) {
			p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Modifiers: mods, Buttons: buttons}
			if typ != input.DispatchMouseEventTypeMouseMoved {
				p.Button, p.ClickCount = input.MouseButtonLeft, 1
			}
			if _, err := chromedp.Call(bctx, input.DispatchMouseEvent, p); err != nil {
				t.Fatal(err)
			}
		}
		mouse(input.DispatchMouseEventTypeMouseMoved, x0, 0)
		mouse(input.DispatchMouseEventTypeMousePressed, x0, 1)
		for k := 1; k <= 10; k++ {
			mouse(input.DispatchMouseEventTypeMouseMoved, x0+(x1-x0)*float64(k)/10, 1)
		}
		mouse(input.DispatchMouseEventTypeMouseReleased, x1, 0)
		box = eval[extent](t, bctx, read)
	}
	drag(0.25, 0.75, 0)
	span := before.Max - before.Min
	if box.Min < before.Min+0.2*span || box.Max > before.Max-0.2*span || box.Max-box.Min > 0.6*span || box.Max <= box.Min {
		t.Errorf("chart %d: x from %g..%g, after a drag over its middle half %g..%g", i, before.Min, before.Max, box.Min, box.Max)
	}
	zoomed := box
	drag(0.6, 0.4, 8) // shift; the plot follows the pointer: to later x
	width := zoomed.Max - zoomed.Min
	if math.Abs((box.Max-box.Min)-width) > 0.01*width || box.Min < zoomed.Min+0.1*width || box.Min > zoomed.Min+0.3*width {
		t.Errorf("chart %d: x %g..%g, after a pan of a fifth of it to later x %g..%g", i, zoomed.Min, zoomed.Max, box.Min, box.Max)
	}
	if eval[bool](t, bctx, fmt.Sprintf(`perflabCharts.charts[%d].root.parentElement.querySelector('.plot-entry').click(), perflabCharts.charts[%d].series[1].show`, i, i)) {
		t.Errorf("chart %d: its first series is shown after a click on its legend entry", i)
	}
}

// shot keeps a screenshot of the window, chart i at its top, in the
// artifacts (PERFLAB_ARTIFACTS, or artifacts/).
func shot(t *testing.T, bctx context.Context, name string, i int) {
	t.Helper()
	eval[bool](t, bctx, fmt.Sprintf(`perflabCharts.charts[%d].root.parentElement.scrollIntoView(), true`, i))
	capture(t, bctx, name)
}

// capture keeps a screenshot of the window as it is in the artifacts.
func capture(t *testing.T, bctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(browsertest.Artifacts(), name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// soakRun is a 72-hour run at 10 s intervals (25,920) of four operations,
// one of them failing now and then, with its exact totals and the
// monitors' points every 10 s: the generator's host and process, and a
// JVM with its heap and collections. One interval of search is slow: its
// p99 is 5 s; its x (seconds into the stage) is returned.
func soakRun(t *testing.T) (*results.Run, float64) {
	t.Helper()
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	const intervals, step = 25920, 10 * time.Second
	rd, ph, totals := newRun("soak", t0, intervals, step)
	r := rand.New(rand.NewPCG(7, 8))
	const slow = 12345
	for o, name := range []string{"login", "search", "checkout", "logout"} {
		op := metrics.Op{Scenario: "shop", Name: name, Kind: metrics.KindStep}
		ph.Operations = append(ph.Operations, results.Operation{Name: name, Kind: metrics.KindStep, Scenario: "shop"})
		total := metrics.NewStats()
		totals.Ops, totals.Totals = append(totals.Ops, op), append(totals.Totals, total)
		base := float64(10 + 15*o) // ms
		for i := range intervals {
			level := base * (1 + 0.3*float64(i)/intervals) // a slow drift up
			q := metrics.Quantiles{N: 500}
			q.P50 = int64(1000 * level * (0.9 + 0.2*r.Float64()))
			q.P95 = q.P50 * 2
			q.P99 = q.P50 * 3
			if name == "search" && i == slow {
				q.P99 = 5_000_000
			}
			q.Max = q.P99 + 1000
			errs := int64(0)
			if name == "checkout" && r.IntN(10) == 0 {
				errs = int64(1 + r.IntN(5))
			}
			start := t0.Add(time.Duration(i) * step).UnixMilli()
			rd.Intervals[results.Tag("s1", op)] = append(rd.Intervals[results.Tag("s1", op)], results.NewIntervalQuantiles(start, start+step.Milliseconds(), q.N+errs, errs, "", &q))
		}
		for k := 0; k < 2000; k++ {
			d := time.Duration(base*(0.5+r.ExpFloat64()/2)*1000) * time.Microsecond
			total.Add(d, d, metrics.OK, 0)
		}
	}
	rd.Summary.Stages = []results.PhaseSummary{ph}
	cpu, gc := 0.0, 0.0
	for i := range intervals {
		at := t0.Add(time.Duration(i) * step)
		cpu += 10 * (0.3 + 0.1*r.Float64())
		gc += 10 * 0.02 * r.Float64()
		rd.Points = append(rd.Points,
			monitor.Point{Time: at, Monitor: results.GeneratorMonitor, Metric: monitor.MetricBusy, Value: 0.2 + 0.1*r.Float64()},
			monitor.Point{Time: at, Monitor: results.SelfMonitor, Metric: monitor.MetricCPUUser, Value: cpu},
			monitor.Point{Time: at, Monitor: results.SelfMonitor, Metric: monitor.MetricRSS, Value: 60e6 + 1e6*r.Float64()},
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricHeapUsed, Value: 200e6 + 100e6*float64(i%360)/360},
			monitor.Point{Time: at, Monitor: "api", Metric: monitor.MetricGCYoungTime, Value: gc})
	}
	return rd, float64(slow) * step.Seconds()
}

// The HTML report of a 20-minute stage with two incidents (an error
// burst from 300 to 420 s, a latency excursion from 800 to 860 s, the
// generator suspect), in Chromium: the drift verdict's line is amber, the
// amber box at the top lists both, the contents link to it, and each
// chart over the stage's time (latency percentiles, throughput, errors,
// active VUs) and each drift chart paints each incident's band where
// uPlot puts its start and end; a hover inside a band names it.
// Screenshot: artifacts/report-incident-bands.png.
func TestReportIncidentsInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	t0 := time.Date(2026, 11, 22, 13, 37, 10, 0, time.UTC)
	const intervals, step = 120, 10 * time.Second
	rd, ph, totals := newRun("soak", t0, intervals, step)
	op := metrics.Op{Scenario: "s", Name: "get", Kind: metrics.KindStep}
	total := metrics.NewStats() // the stage's exact totals, for its curves
	totals.Ops, totals.Totals = []metrics.Op{op}, []*metrics.Stats{total}
	scen := metrics.Op{Scenario: "s", Name: "s", Kind: metrics.KindScenario}
	ph.Operations = []results.Operation{{Name: "get", Kind: metrics.KindStep, Scenario: "s"}, {Name: "s", Kind: metrics.KindScenario, Scenario: "s"}}
	for i := range intervals {
		at := float64(i) * step.Seconds()
		v, errs := int64(20_000), int64(0)
		if at >= 300 && at < 420 {
			errs = 300
		}
		if at >= 800 && at < 860 {
			v = 180_000
		}
		q := metrics.Quantiles{N: 900, P50: v / 2, P95: v, P99: v, Max: v}
		total.Add(time.Duration(v)*time.Microsecond, time.Duration(v)*time.Microsecond, metrics.OK, 0)
		start := t0.Add(time.Duration(i) * step).UnixMilli()
		rd.Intervals[results.Tag("s1", op)] = append(rd.Intervals[results.Tag("s1", op)], results.NewIntervalQuantiles(start, start+step.Milliseconds(), q.N+errs, errs, "", &q))
		vus := results.NewIntervalQuantiles(start, start+step.Milliseconds(), 0, 0, "", &metrics.Quantiles{})
		vus.PeakVUs = 4
		rd.Intervals[results.Tag("s1", scen)] = append(rd.Intervals[results.Tag("s1", scen)], vus)
	}
	rd.Summary.Stages = []results.PhaseSummary{ph}
	rd.Summary.Drift = report.IncidentDrift("soak", t0, ph.Duration, [2]float64{300, 420}, [2]float64{800, 860})
	page := filepath.Join(t.TempDir(), "report.html")
	plots := writeReport(t, rd, page)
	bctx := browsertest.New(t, chromium, 2*time.Minute)
	problems := browsertest.Problems(t, bctx)
	open(t, bctx, page, len(plots))
	banded := checkIncidents(t, bctx, rd, plots)
	want := []string{"p50-over-time", "p95-over-time", "p99-over-time", "throughput-over-time", "errors-over-time", "vus-over-time", "drift-soak-throughput", "drift-soak-error-ratio"}
	if strings.Join(banded, " ") != strings.Join(want, " ") {
		t.Errorf("the charts with the incidents' bands: %q, want %q", banded, want)
	}
	// A hover in the middle of the second band names it in the tooltip.
	p95 := slices.IndexFunc(plots, func(p report.Plot) bool { return p.Slug == "p95-over-time" })
	tip := eval[string](t, bctx, fmt.Sprintf(`(() => { const u = document.querySelector('div.plot[data-plot="%d"]').uplot; u.root.scrollIntoView(); u.hovered = true;
		u.setCursor({left: u.valToPos(830, 'x'), top: 40}); return u.over.querySelector('.plot-tip').textContent })()`, p95))
	if !strings.Contains(tip, "incident 2 (stage soak): from 13 m 20 s to 14 m 20 s (13:50:30 to 13:51:30, 1 m 00 s): p95 of get 180.00 ms") {
		t.Errorf("the tooltip in the second incident's band: %q", tip)
	}
	if note := eval[string](t, bctx, fmt.Sprintf(`document.querySelector('div.plot[data-plot="%d"] .plot-incidents').textContent`, p95)); !strings.HasPrefix(note, "amber: incident 1, incident 2 (") {
		t.Errorf("the p95 chart's legend: %q", note)
	}
	eval[bool](t, bctx, `window.scrollTo(0, 0), true`)
	capture(t, bctx, "report-incident.png")
	eval[bool](t, bctx, fmt.Sprintf(`document.querySelector('div.plot[data-plot="%d"]').scrollIntoView(), true`, p95-1))
	capture(t, bctx, "report-incident-bands.png")
	for _, p := range problems() {
		t.Error(p)
	}
}

// checkIncidents checks, in the report open in bctx, what it shows of
// rd's incidents: the drift verdict's line amber (red when degraded), the
// amber box at the top listing every incident, with its times and each
// effect, the contents' link to it; and on every chart over the time of
// an incident's stage (plots: the report's charts' data) the incident's
// band, painted amber on the canvas from uPlot's x of its start to its
// end. It returns the slugs of the charts with bands, in order.
func checkIncidents(t *testing.T, bctx context.Context, rd *results.Run, plots []report.Plot) []string {
	t.Helper()
	d := rd.Summary.Drift
	if d == nil || len(d.Incidents) == 0 {
		t.Fatalf("no incidents: %+v", d)
	}
	type top struct {
		Class, Color, Box, TOC string
		Items                  []string
		BoxAbove               bool
	}
	got := eval[top](t, bctx, `(() => { const v = document.getElementById('drift-verdict'), box = document.getElementById('incidents');
		return {class: v.className, color: getComputedStyle(v).color, box: getComputedStyle(box).backgroundColor,
			toc: document.querySelector('nav#toc a').getAttribute('href'),
			items: Array.from(box.querySelectorAll('li[id^="incident-"]')).map(li => li.id + ': ' + li.textContent),
			boxAbove: box.getBoundingClientRect().top < document.querySelector('nav#toc').getBoundingClientRect().top} })()`)
	wantClass := report.DriftClass(d)
	if got.Class != wantClass || wantClass == "warn" && got.Color != "rgb(154, 91, 0)" || got.Box != "rgb(255, 246, 219)" || got.TOC != "#incidents" || !got.BoxAbove {
		t.Errorf("the verdict's line %q in %s, the box's background %s, the contents' first link %q, the box above the contents %v; want %s (amber: rgb(154, 91, 0)), rgb(255, 246, 219), #incidents, true",
			got.Class, got.Color, got.Box, got.TOC, got.BoxAbove, wantClass)
	}
	// The box lists the incidents the generator's host could explain
	// last, each keeping its number (a busy machine's latency excursion
	// before an outage is incident 1, listed second).
	var views []report.IncidentView
	for _, suspect := range []bool{false, true} {
		views = append(views, slices.DeleteFunc(report.Incidents(d), func(v report.IncidentView) bool { return (v.Suspect != "") != suspect })...)
	}
	if len(got.Items) != len(views) {
		t.Errorf("the box lists %d incidents, the run has %d: %q", len(got.Items), len(views), got.Items)
	}
	for i, v := range views {
		if i >= len(got.Items) {
			break
		}
		want := append([]string{v.ID + ": Incident " + fmt.Sprint(v.N) + ", stage " + v.Stage + ": " + v.When()}, v.Effects...)
		if v.Suspect != "" {
			want = append(want, "suspect: the generator's host meanwhile: "+v.Suspect)
		}
		for _, w := range want {
			if !strings.Contains(got.Items[i], w) {
				t.Errorf("the box's incident %d lacks %q: %q", v.N, w, got.Items[i])
			}
		}
	}
	// The bands in the charts' data: each incident on each chart over its
	// stage's time, none elsewhere.
	stageOf := map[string]string{}
	for _, ph := range rd.Summary.Stages {
		stageOf[fmt.Sprintf("stage%d", ph.Index)] = ph.Name
	}
	var banded []string
	var at []int
	for i, p := range plots {
		var bands []report.Band
		for _, b := range p.Bands {
			if b.Kind == report.BandIncident {
				bands = append(bands, b)
			}
		}
		stage := stageOf[p.Sync]
		for _, s := range d.Series {
			if p.Slug == "drift-"+report.Slug(s.Stage+"-"+s.Name) {
				stage = s.Stage
			}
		}
		var want []report.Band
		for k, inc := range d.Incidents {
			if p.X == report.XSeconds && inc.Stage == stage {
				want = append(want, report.Band{From: inc.StartS, To: inc.EndS, Label: fmt.Sprintf("incident %d", k+1), Kind: report.BandIncident,
					Text: fmt.Sprintf("incident %d (stage %s): %s", k+1, inc.Stage, inc.Sentence)})
			}
		}
		if !slices.Equal(bands, want) {
			t.Errorf("%s: incidents' bands %+v, want %+v", p.Slug, bands, want)
		}
		if len(want) > 0 {
			banded, at = append(banded, p.Slug), append(at, i)
		}
	}
	// On the canvas: each band's amber pixels (alone, or over a compared
	// stretch's blue: red above blue, green above 150; no line's colour is
	// that) span uPlot's x of its start to its end (within the plot),
	// within 2 pixels (its edges, the lines over it).
	for _, i := range at {
		ps := eval[[]browsertest.PaintedBand](t, bctx, fmt.Sprintf(browsertest.IncidentBands, fmt.Sprintf(`div.plot[data-plot="%d"]`, i)))
		want := 0
		for _, inc := range d.Incidents {
			if slices.ContainsFunc(plots[i].Bands, func(b report.Band) bool { return b.Kind == report.BandIncident && b.From == inc.StartS }) {
				want++
			}
		}
		if len(ps) != want {
			t.Errorf("%s: %d incidents' bands drawn, want %d", plots[i].Slug, len(ps), want)
		}
		for _, p := range ps {
			if p.Off() {
				t.Errorf("%s: %s (%g to %g s) painted from x %g to %g; uPlot puts it from %.1f to %.1f", plots[i].Slug, p.Label, p.From, p.To, p.Lo, p.Hi, p.Want0, p.Want1)
			}
		}
	}
	return banded
}

// A real run of 30 s at 100 ms intervals against a service that answers
// every third request 503 from 10 s to 20 s (from its first request): its
// report, in Chromium, shows the incident (33% of b's requests failed
// with 503 from 10 s to 20 s) in the amber box at the top, and its band
// on every chart over the stage's time, where uPlot puts its start and
// end.
// Screenshot: artifacts/report-outage.png.
func TestReportOutageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("a 30 s run")
	}
	chromium := browsertest.Chromium(t)
	srv := httptest.NewServer(runtest.Outage(10*time.Second, 20*time.Second))
	defer srv.Close()
	dir := t.TempDir()
	res := runPlan(t, dir, "name: outage\ntarget: "+srv.URL+"\ninterval: 100ms\nhttp: {timeout: 2s}\nscenarios:\n"+
		"  - {name: s, vus: 2, duration: 30s, flow: [{name: b, url: /b}]}\n")
	rd, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	d := rd.Summary.Drift
	if d == nil {
		t.Fatal("no drift verdict")
	}
	// The outage: an incident of the error ratio of b, a third of the
	// requests, that covers 10 s to 20 s (give or take the run's first
	// interval and an interval each side) and ends with it. It may begin
	// earlier: on a busy machine a latency excursion just before is the
	// same incident, merged; and it may end up to 2 s later, where the
	// latency takes that long to settle (with both cores busy beside the
	// suite: the errors ended at 20 s, p95 back at 21.6 s).
	outage := slices.IndexFunc(d.Incidents, func(inc results.Incident) bool {
		return inc.StartS < 10.5 && inc.EndS > 19.5 && inc.EndS < 22 &&
			slices.ContainsFunc(inc.Effects, func(e results.IncidentEffect) bool {
				return e.Series == "error ratio of b" && math.Abs(e.Level-100.0/3) < 3 && e.Message == "HTTP 503 Service Unavailable"
			})
	})
	if outage < 0 {
		t.Fatalf("no incident of b's errors from 10 s to 20 s: %s\n%+v", d.Verdict, d.Incidents)
	}
	page := filepath.Join(dir, "report.html")
	plots := writeReport(t, rd, page)
	bctx := browsertest.New(t, chromium, 2*time.Minute)
	problems := browsertest.Problems(t, bctx)
	open(t, bctx, page, len(plots))
	banded := checkIncidents(t, bctx, rd, plots)
	for _, slug := range []string{"p50-over-time", "p95-over-time", "p99-over-time", "throughput-over-time", "errors-over-time", "vus-over-time", "drift-all-error-ratio"} {
		if !slices.Contains(banded, slug) {
			t.Errorf("no incident's band on %s (the charts with bands: %q)", slug, banded)
		}
	}
	errs := slices.IndexFunc(plots, func(p report.Plot) bool { return p.Slug == "errors-over-time" })
	eval[bool](t, bctx, `window.scrollTo(0, 0), true`)
	capture(t, bctx, "report-outage.png")
	eval[bool](t, bctx, fmt.Sprintf(`document.querySelector('div.plot[data-plot="%d"]').scrollIntoView(), true`, errs-1))
	capture(t, bctx, "report-outage-errors.png")
	for _, p := range problems() {
		t.Error(p)
	}
}
