package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, results.Summarize(runtest.Fixture(), runtest.Host)); err != nil {
		t.Fatal(err)
	}
	runtest.Golden(t, "table.txt", b.Bytes())
}

func TestProgressLines(t *testing.T) {
	run := runtest.Fixture()
	ph := run.Stages[0]
	cur := []*metrics.Stats{metrics.NewStats(), metrics.NewStats(), metrics.NewStats()}
	for i := 1; i <= 100; i++ {
		cur[0].Add(time.Duration(i)*time.Millisecond, time.Duration(i)*time.Millisecond, metrics.OK, 0)
	}
	cur[2].Add(time.Millisecond, time.Millisecond, metrics.OK, 0)
	total := []*metrics.Stats{metrics.NewStats(), metrics.NewStats(), metrics.NewStats()}
	total[0].Add(time.Millisecond, time.Millisecond, metrics.HTTP5xx, 0)
	tick := &metrics.Tick{Elapsed: 10 * time.Second, Ops: ph.Ops, Cur: cur, Total: total}
	sp := Scenarios(ph, tick)
	if len(sp) != 1 || sp[0].Requests != 101 || sp[0].Errors != 1 || sp[0].Iterations != 1 {
		t.Fatalf("progress %+v", sp)
	}
	if sp[0].P95 < 94.9 || sp[0].P95 > 95.1 {
		t.Errorf("p95 %v", sp[0].P95)
	}
	// 1 of 102 planned iterations in 10 s: 1010 s to go.
	if !sp[0].HasRemain || sp[0].Remaining != 1010*time.Second {
		t.Errorf("remaining %v", sp[0].Remaining)
	}
	var b bytes.Buffer
	p := &Progress{W: &b, Every: time.Second}
	p.Tick(ph, tick)
	if !strings.Contains(b.String(), "[vus=2] flow") || !strings.Contains(b.String(), "requests 101") {
		t.Errorf("plain line: %q", b.String())
	}
}

func TestMarkdownAndCSVGolden(t *testing.T) {
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	s.Labels = map[string]string{"release": "Goldenrod", "env": "perf"}
	var md, cs bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	runtest.Golden(t, "summary.md", md.Bytes())
	if err := WriteCSV(&cs, s); err != nil {
		t.Fatal(err)
	}
	runtest.Golden(t, "operations.csv", cs.Bytes())
	// The CPS basic load test's figures: CREATE ANCHOR 1..100 ms: ops/s min 10 (1000/100), max 1000, avg 1000/50.5.
	if !strings.Contains(md.String(), "| CREATE ANCHOR | 102 | 2 | 1.000 | 100.000 | 50.500 | 10.000 | 1000.000 | 19.802 |") {
		t.Errorf("CPS basic load test table row:\n%s", md.String())
	}
}

// User data in the HTML report is escaped, in tables and in charts.
func TestHTMLEscapesUserData(t *testing.T) {
	run := runtest.Fixture()
	run.PlanName = `<script>alert(1)</script>`
	run.Stages[0].Ops[0].Name = `<img src=x onerror=alert(2)>`
	s := results.Summarize(run, runtest.Host)
	rd := &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{}}
	h := metrics.NewHistogram()
	h.RecordValue(1500)
	enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
	rd.Intervals[results.Tag("s1", run.Stages[0].Ops[0])] = []*results.IntervalData{results.NewIntervalData(runtest.T0.UnixMilli(), runtest.T0.UnixMilli()+1000, -1, 0, string(enc))}
	var b bytes.Buffer
	if err := WriteHTML(&b, rd); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>") || strings.Contains(out, "<img") {
		t.Fatal("user data reached the page unescaped")
	}
	if !strings.Contains(out, "&lt;img src=x onerror=alert(2)&gt;") || strings.Count(out, `<div class="plot"`) < 3 {
		t.Errorf("escaped names or charts missing")
	}
	// In the charts' data, the name is the operation's, escaped for the
	// script it is in.
	if ps := plotsOf(t, out); len(ps) < 3 || ps[0].Series[0].Name != run.Stages[0].Ops[0].Name || !strings.Contains(out, `\u003cimg src=x onerror=alert(2)\u003e`) {
		t.Errorf("the charts' data has not the name escaped: %+v", ps)
	}
}

// Hostile names (a step named with a cell border, HTML and backticks, such
// labels) keep the Markdown tables whole, and neither report has raw tags.
func TestReportsEscapeHostileNames(t *testing.T) {
	const bad = "a|b <script>alert(1)</script> `x` \\| [l](javascript:x) &amp;"
	run := runtest.Fixture()
	run.Stages[0].Name = "vus=2 " + bad
	run.Stages[0].Ops[0].Name = bad
	run.Stages[0].Ops[1].Name = bad + " tx"
	run.Stages[0].Ops[0].Transaction = bad + " tx"
	s := results.Summarize(run, runtest.Host)
	s.Labels = map[string]string{"release": bad, "<b>": "x|y"}
	s.Thresholds = []results.ThresholdResult{{Threshold: bad + ": p95 < 1ms", Operation: bad, Stage: bad, Actual: 2, Note: bad}}
	s.Warnings = []string{bad}
	s.Resources = &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: bad}},
		SlowQueries: []monitor.SlowQuery{{Monitor: bad, Query: "SELECT '|' || `x` FROM \"<t>\""}, {Monitor: "db", Query: "SELECT <b>1</b>"}}}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	cells := -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			cells = -1 // a table ends
			continue
		}
		if n := strings.Count(line, "|"); cells < 0 {
			cells = n
		} else if n != cells {
			t.Errorf("a row of %d cell borders in a table of %d:\n%s", n, cells, line)
		}
	}
	if !strings.Contains(out, "| <code>SELECT '&#124;' &#124;&#124; &#96;x&#96; FROM \"&lt;t&gt;\"</code> |") || !strings.Contains(out, "| `SELECT <b>1</b>` |") {
		t.Errorf("slow queries not shown as code:\n%s", out)
	}
	out = strings.ReplaceAll(out, "`SELECT <b>1</b>`", "") // literal in a code span
	for _, raw := range []string{"<script", "<b>", "`x`", "[l]"} {
		if strings.Contains(out, raw) {
			t.Errorf("Markdown has %q raw:\n%s", raw, out)
		}
	}
	if !strings.Contains(out, "Labels: &lt;b&gt;=x&#124;y, release=a&#124;b &lt;script&gt;") {
		t.Errorf("labels missing or not escaped:\n%s", out)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{}}); err != nil {
		t.Fatal(err)
	}
	if h := withoutCharts(page.String()); strings.Contains(h, "<script>") || strings.Contains(h, "<b>") || !strings.Contains(h, "Labels: &lt;b&gt;=x|y, release=a|b &lt;script&gt;") {
		t.Errorf("HTML labels missing or raw tags:\n%s", h)
	}
}

// A regression that begins at a known run is named there.
func TestHistoryNamesTheRun(t *testing.T) {
	var runs []*results.Summary
	for i := 0; i < 12; i++ {
		p95 := 100.0 + float64(i%3) // noise
		if i >= 7 {
			p95 = 150 + float64(i%3)
		}
		runs = append(runs, &results.Summary{RunID: fmt.Sprintf("run-%02d", i), Stages: []results.PhaseSummary{{Name: "users=5",
			Operations: []results.Operation{{Name: "check-out", Kind: metrics.KindTransaction, Summary: metrics.Summary{Count: 10, Latency: metrics.LatencySummary{P95: p95}}}}}}})
	}
	hs := judge.History(runs, 95, 3)
	if len(hs) != 1 || len(hs[0].Changes) != 1 || !strings.Contains(hs[0].Changes[0], "from run run-07 on") || !strings.Contains(hs[0].Changes[0], "rose") {
		t.Fatalf("history: %+v", hs)
	}
	var b bytes.Buffer
	WriteHistory(&b, hs, 95)
	if !strings.Contains(b.String(), "users=5  check-out: 12 runs") {
		t.Errorf("%s", b.String())
	}
}

// Thresholds' actual values carry their unit in Markdown and HTML, and a
// regression shows its comparison.
func TestThresholdActualsInReports(t *testing.T) {
	s := &results.Summary{Plan: results.PlanInfo{Name: "p"}, Thresholds: []results.ThresholdResult{
		{Threshold: "errors < 0.1%", Operation: "a", Stage: "all", Actual: 0.0355},
		{Threshold: "p95 < 500ms", Operation: "a", Stage: "all", Actual: 612.5},
		{Threshold: "p75 regression vs release=A < 10%", Operation: "a", Stage: "all", Actual: 0.91, Note: "3.525 ms → 6.731 ms: 91.0% worse (p=3.11e-08, worse)"},
	}}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{md.String(), page.String()} {
		for _, want := range []string{"3.550%", "612.50 ms", "91.0% worse"} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%.2000s", want, out)
			}
		}
	}
}

// history follows each operation of a stage on its own: a step of one name
// in two transactions is two series with one point per run, not one series
// with two.
func TestHistorySeriesPerOperation(t *testing.T) {
	run := func(id string, a, b float64) *results.Summary {
		op := func(tx string, p95 float64) results.Operation {
			o := results.Operation{Name: "GET a", Kind: metrics.KindStep, Scenario: "s", Transaction: tx}
			o.Count, o.Latency.P95 = 10, p95
			return o
		}
		return &results.Summary{RunID: id, Stages: []results.PhaseSummary{{Name: "all", Operations: []results.Operation{op("in", a), op("out", b)}}}}
	}
	hs := judge.History([]*results.Summary{run("r1", 1, 5), run("r2", 2, 6)}, 95, 3)
	if len(hs) != 2 || len(hs[0].Points) != 2 || hs[0].Transaction != "in" || hs[1].Points[1].Value != 6 {
		t.Fatalf("%+v", hs)
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, hs, 95); err != nil || !strings.Contains(b.String(), "all  GET a (scenario s, in out): 2 runs, p95 5.000 ms (r1) -> 6.000 ms (r2)") {
		t.Errorf("%v\n%s", err, b.String())
	}
}

// openFixture is a stage of an open model, whose step and scenario both
// have a service time and a start delay, with the resources of a run: the
// generator's host, perflab's own process and a monitor of several
// processes whose memory is their PSS.
func openFixture() *results.Summary {
	lat := func(base float64) *metrics.LatencySummary {
		return &metrics.LatencySummary{Min: base, Mean: 2 * base, P50: 2 * base, P75: 3 * base, P90: 4 * base, P95: 5 * base, P99: 6 * base, P999: 7 * base, Max: 8 * base}
	}
	op := func(name string, kind metrics.Kind) results.Operation {
		o := results.Operation{Name: name, Kind: kind, Scenario: "checkout"}
		o.Count, o.RPS = 100, 10
		o.Latency, o.ServiceTime, o.StartDelay = *lat(2), lat(1), lat(0.5)
		return o
	}
	ms, slope := 0.25, 2.5*(1<<20)
	return &results.Summary{
		Stages: []results.PhaseSummary{{Index: 1, Name: "rate=10", Duration: 10,
			Operations: []results.Operation{op("checkout", metrics.KindStep), op("checkout", metrics.KindScenario)}}},
		Resources: &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "rate=10", Transactions: 100, Monitors: []monitor.MonitorFigures{
			{Monitor: results.GeneratorMonitor, Host: &monitor.HostFigures{BusyAvg: 0.25, BusyMax: 0.5}},
			{Monitor: results.SelfMonitor, CPU: &monitor.CPUFigures{Seconds: 0.5, Cores: 0.05, MSPerTx: &ms},
				Memory: []monitor.MemoryTrend{{Metric: monitor.MetricRSS, AvgBytes: 30 << 20, PeakBytes: 32 << 20}}},
			{Monitor: "db", CPU: &monitor.CPUFigures{Seconds: 1, Cores: 0.1, MSPerTx: &ms},
				Memory: []monitor.MemoryTrend{{Metric: monitor.MetricPSS, AvgBytes: 110 << 20, PeakBytes: 120 << 20, SlopeBytesPerHour: &slope},
					{Metric: monitor.MetricRSS, AvgBytes: 600 << 20, PeakBytes: 646 << 20}}},
		}}}},
		Total: results.Total{Line: "summary = 100 in 00:00:10 = 10.0/s"},
	}
}

func TestTableOpenGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, openFixture()); err != nil {
		t.Fatal(err)
	}
	runtest.Golden(t, "table_open.txt", b.Bytes())
}

// The HTML report's order, headline first, and its open-model table.
func TestHTMLGolden(t *testing.T) {
	s := openFixture()
	s.RunID, s.Status, s.Plan.Name, s.Start = "r1", "completed", "checkout", runtest.T0
	s.Labels = map[string]string{"release": "goldenrod"}
	s.Thresholds = []results.ThresholdResult{{Threshold: "p95 < 20ms", Stage: "rate=10", Operation: "checkout", Actual: 10, Pass: true}}
	s.Warnings = []string{"stage 1 (rate=10): a warning"}
	s.Resources.SlowQueries = []monitor.SlowQuery{{Monitor: "db", Calls: 3, MeanMS: 150, TotalMS: 450, Query: "SELECT 1"}}
	var b bytes.Buffer
	if err := WriteHTML(&b, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	// The generation time is the only figure that changes between runs;
	// the charts' script and styles are uPlot's and charts.js, not the
	// report's.
	h := withoutCharts(b.String())
	if i := strings.Index(h, "Generated by perflab at "); i >= 0 {
		h = h[:i] + "Generated by perflab at (time)." + h[i+strings.Index(h[i:], "</p>"):]
	}
	runtest.Golden(t, "report.html", []byte(h))
}

// The generator's host and perflab's process make one row, in whichever
// order the analysis lists them; perflab alone keeps its own row.
func TestResourceRowsGeneratorRow(t *testing.T) {
	a := openFixture().Resources
	ms := a.Windows[0].Monitors
	ms[0], ms[1] = ms[1], ms[0]
	rows := ResourceRows(a)
	if len(rows) != 2 || rows[0][1] != "generator (perflab)" || rows[0][3] != "0.05" || rows[0][5] != "30.0 (rss)" || rows[0][11] != "25% / 50%" {
		t.Errorf("rows %q", rows)
	}
	a.Windows[0].Monitors = ms[:1] // perflab's process, no host monitor
	if rows := ResourceRows(a); len(rows) != 1 || rows[0][1] != results.SelfMonitor {
		t.Errorf("rows %q", rows)
	}
	// A merged run: each part's generator is a row of its own.
	ms = openFixture().Resources.Windows[0].Monitors
	var merged []monitor.MonitorFigures
	for _, part := range []string{"#1", "#2"} {
		for _, m := range ms {
			m.Monitor += part
			merged = append(merged, m)
		}
	}
	a.Windows[0].Monitors = merged
	var names []string
	for _, r := range ResourceRows(a) {
		names = append(names, r[1])
	}
	if got := strings.Join(names, ", "); got != "generator#1 (perflab), db#1, generator#2 (perflab), db#2" {
		t.Errorf("rows of a merged run: %s", got)
	}
}

// The Markdown report gives the headline first, as the HTML report does:
// thresholds and warnings, then the stages, then the resources.
func TestMarkdownHeadlineFirst(t *testing.T) {
	s := openFixture()
	s.Thresholds = []results.ThresholdResult{{Threshold: "p95 < 20ms", Stage: "rate=10", Operation: "checkout", Actual: 10, Pass: true}}
	s.Warnings = []string{"a warning"}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	at := func(s string) int {
		i := strings.Index(md, s)
		if i < 0 {
			t.Fatalf("no %q in:\n%s", s, md)
		}
		return i
	}
	if !(at("## Thresholds") < at("**Warning:** a warning") && at("**Warning:** a warning") < at("## Operations per stage") && at("## Operations per stage") < at("## Resources")) {
		t.Errorf("order:\n%s", md)
	}
}

// driftFixture is a long run's verdict: throughput fell at 30 s, the error
// ratio stayed at zero.
func driftFixture() *results.Drift {
	var tp, er [][2]float64
	for i := 0; i < 60; i++ {
		v := 100.0
		if i >= 30 {
			v = 20
		}
		tp, er = append(tp, [2]float64{float64(i), v}), append(er, [2]float64{float64(i), 0})
	}
	return &results.Drift{Degraded: true, Verdict: "degraded: throughput fell 80% from 100/s to 20/s; the change began after 30.0 s.",
		Method: "each series of at least 12 intervals is tested (...)", Alpha: 0.01, MinEffect: 0.2, MinErrorRise: 0.01, Tests: 4,
		Series: []results.DriftSeries{
			{Stage: "soak", Name: "throughput", Kind: "throughput", Unit: "/s", Values: 60, SpanS: 60, Start: 100, End: 20,
				Trend:  &results.DriftTrend{P: 1e-9, Correction: 1},
				Change: &results.DriftChange{AtS: 30, Before: 100, After: 20, P: 1e-12}, P: 1e-12, PAdjusted: 4e-12, Significant: true,
				Verdict: results.DriftDegraded, Sentence: "throughput fell 80% from 100/s to 20/s; the change began after 30.0 s", Points: tp},
			{Stage: "soak", Name: "error ratio", Kind: "errors", Unit: "%", Values: 60, SpanS: 60, Trend: &results.DriftTrend{P: 1, Correction: 1}, P: 1, PAdjusted: 1,
				Verdict: results.DriftSteady, Sentence: "error ratio steady: 0.00% at the start, 0.00% at the end", Points: er},
		},
		Hint: "at 28.0 s time in garbage collection of api +120%, then throughput -80% at 30.0 s; the generator steady",
		Generator: &results.GeneratorHealth{Steady: true, Verdict: "steady once warmed up: memory of perflab (rss) settled at 74.2 MB after 5.0 s (from 50.0 MB), then stayed level",
			Series: []results.DriftSeries{{Stage: "soak", Name: "memory of perflab (rss)", Kind: "memory", Unit: "MB", Values: 60, SpanS: 60, Start: 74.2, End: 74.2, Monitor: "perflab",
				Verdict: results.DriftSettled, Sentence: "memory of perflab (rss) settled at 74.2 MB after 5.0 s (from 50.0 MB), then stayed level", Points: er}}},
	}
}

// A long run's verdict is in every report: the terminal's tables say it in
// a line, Markdown and HTML at the top with each series, and the HTML
// charts each series with the compared stretches shaded and the change
// marked.
func TestDriftInReports(t *testing.T) {
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	s.Drift = driftFixture()
	var txt, md, page bytes.Buffer
	if err := WriteTable(&txt, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "\ndrift over time: degraded: throughput fell 80%") || !strings.Contains(txt.String(), "\nwhat changed, in order: at 28.0 s time in garbage collection") {
		t.Errorf("table:\n%s", txt.String())
	}
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	for _, want := range []string{"## Drift over time\n\n**Degraded.** Degraded: throughput fell 80%", "| soak | throughput | 100/s | 20/s | 100/s → 20/s after 30 s | **degraded** |", "| soak | error ratio | 0.00% | 0.00% |  | steady |",
		"What changed, in order: at 28.0 s time in garbage collection of api +120%, then throughput -80% at 30.0 s; the generator steady.", "| soak | memory of perflab (rss) (generator) | 74.2 MB | 74.2 MB |  | settled |",
		"The load generator, judged apart: steady once warmed up: memory of perflab (rss) settled at 74.2 MB"} {
		if !strings.Contains(m, want) {
			t.Errorf("no %q in:\n%s", want, m)
		}
	}
	if strings.Index(m, "## Drift over time") > strings.Index(m, "## Operations per stage") {
		t.Error("the drift verdict comes after the stages")
	}
	if err := WriteHTML(&page, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	top := strings.Index(h, "<strong>Drift over time:</strong> degraded: throughput fell 80%")
	if top < 0 || top > strings.Index(h, `<h2 id="stage-1">Stage 1`) {
		t.Errorf("the verdict is not at the top of the page")
	}
	var drift []Plot
	for _, p := range plotsOf(t, h) {
		if strings.HasPrefix(p.Slug, "drift-") {
			drift = append(drift, p)
		}
	}
	if len(drift) != 2 || len(drift[0].Marks) != 1 || drift[0].Marks[0] != (Mark{X: 30, Label: "change"}) || len(drift[0].Bands) != 2 || drift[0].Bands[0].Label != "start" ||
		len(drift[1].Marks) != 0 || drift[0].X != XSeconds {
		t.Errorf("the drift charts: %+v", drift)
	}
	for _, want := range []string{`<div class="plot" data-plot=`, "soak: throughput (degraded)", "soak: error ratio (steady)",
		"<strong>What changed, in order:</strong> at 28.0 s time in garbage collection", "memory of perflab (rss) (generator)", "The load generator, judged apart: steady once warmed up"} {
		if !strings.Contains(h, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	var d bytes.Buffer
	if err := WriteDrift(&d, s.Drift); err != nil || !strings.Contains(d.String(), "stage soak\n  ✗ throughput fell 80%") || !strings.Contains(d.String(), "method: each series") ||
		!strings.Contains(d.String(), "the load generator, judged apart\n  ~ memory of perflab (rss) settled") || !strings.Contains(d.String(), "the generator: steady once warmed up") {
		t.Errorf("%v\n%s", err, d.String())
	}
}

// plotsOf reads the charts' data of an HTML report.
func plotsOf(t *testing.T, page string) []Plot {
	t.Helper()
	const open = `<script type="application/json" class="perflab-plots">`
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatal("the page has no charts' data")
	}
	data := page[i+len(open):]
	data = data[:strings.Index(data, "</script>")]
	var ps []Plot
	if err := json.Unmarshal([]byte(data), &ps); err != nil {
		t.Fatalf("the charts' data: %v", err)
	}
	return ps
}

// withoutCharts is an HTML report without the charts' script and styles
// (uPlot's and charts.js).
func withoutCharts(page string) string {
	for _, cut := range [][2]string{{`<script id="perflab-charts">`, "</script>"}, {"</style><style>", "</style>"}} {
		if i := strings.Index(page, cut[0]); i >= 0 {
			j := i + len(cut[0]) + strings.Index(page[i+len(cut[0]):], cut[1])
			page = page[:i+len(cut[0])] + "(charts)" + page[j:]
		}
	}
	return page
}
