package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./report -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// fixture is a run with known values: 1..100 ms for the step, two errors.
func fixture() *metrics.Run {
	ops := []metrics.Op{
		{Name: "CREATE ANCHOR", Kind: metrics.KindStep, Scenario: "flow", Transaction: "tx"},
		{Name: "tx", Kind: metrics.KindTransaction, Scenario: "flow"},
		{Name: "flow", Kind: metrics.KindScenario, Scenario: "flow"},
	}
	totals := []*metrics.Stats{metrics.NewStats(), metrics.NewStats(), metrics.NewStats()}
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Millisecond
		totals[0].Add(d, d, metrics.OK, 512)
		totals[1].Add(d+time.Millisecond, d+time.Millisecond, metrics.OK, 0)
		totals[2].Add(d+2*time.Millisecond, d+2*time.Millisecond, metrics.OK, 0)
	}
	totals[0].Add(3*time.Second, 3*time.Second, metrics.Timeout, 0)
	totals[0].Add(time.Millisecond/2, time.Millisecond/2, metrics.HTTP5xx, 0)
	ph := &metrics.Phase{
		Index: 1, Name: "vus=2", Values: []metrics.KV{{Name: "vus", Value: "2"}},
		Start: t0, End: t0.Add(10 * time.Second), Ops: ops, Totals: totals,
		Load: []metrics.Load{{Scenario: "flow", VUs: 2, Iterations: 51}},
	}
	return &metrics.Run{
		ID: "r1", PlanName: "demo", PlanFile: "plan.yaml", PlanSource: []byte("name: demo\n"),
		Vars: []metrics.Var{{Name: "vus", Values: []string{"2"}, Swept: true}, {Name: "ds", Values: []string{"perf"}}}, Interval: 10 * time.Second,
		Start: t0, End: t0.Add(11 * time.Second), Status: metrics.StatusCompleted,
		Stages: []*metrics.Phase{ph},
	}
}

var host = Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, Go: "go1.26", Perflab: "test"}

func TestSummaryJSONGolden(t *testing.T) {
	var b bytes.Buffer
	s := Summarize(fixture(), host)
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.json", b.Bytes())
	// Figures a reader relies on.
	op := s.Stages[0].Operations[0]
	if op.Count != 102 || op.Errors.Total != 2 || op.Latency.Min != 1 || op.Latency.Max != 100 || op.Latency.Mean != 50.5 {
		t.Errorf("operation figures: %+v", op)
	}
	if op.RPS != 10.2 {
		t.Errorf("rps %v, want 10.2 (102 in 10s)", op.RPS)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["format"] != Format {
		t.Errorf("summary.json does not round-trip: %v", err)
	}
}

func TestSummaryLine(t *testing.T) {
	s := Summarize(fixture(), host)
	// Requests are the steps only: 102 in 10 s; mean over all 102 requests,
	// failed included: (5050 + 3000 + 0.5) / 102 = 78.93 ms.
	want := "summary = 102 in 00:00:10 = 10.2/s Avg: 79 Min: 1 Max: 3000 Err: 2 (1.96%)"
	if s.Total.Line != want {
		t.Errorf("got  %s\nwant %s", s.Total.Line, want)
	}
	// The JMeter summary line of the XACML PDP report's 72-hour stability run.
	line := SummaryLine(Total{Requests: 222450112, Errors: 17, Duration: 72*3600 + 39, RPS: 858.1, Mean: 5, Min: 1, Max: 946942})
	if line != "summary = 222450112 in 72:00:39 = 858.1/s Avg: 5 Min: 1 Max: 946942 Err: 17 (0.00%)" {
		t.Errorf("stability run's summary line: %s", line)
	}
}

func TestTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, Summarize(fixture(), host)); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.txt", b.Bytes())
}

// The interval log is readable by HdrHistogram's own reader and holds
// exactly the histograms recorded.
func TestRunDirLogRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	// A start that is not a whole second: readers must still place
	// intervals at the right milliseconds.
	t0 := t0.Add(437 * time.Millisecond)
	rd, err := CreateRunDir(dir, "x-run", "x", t0, []byte("name: x\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := fixture()
	ph := run.Stages[0]
	sink := rd.Sink(ph)
	var want []*hdr.Histogram
	for i := 0; i < 3; i++ {
		iv := &metrics.Interval{Index: i, Start: t0.Add(time.Duration(i) * 10 * time.Second), End: t0.Add(time.Duration(i+1) * 10 * time.Second)}
		for range ph.Ops {
			iv.Ops = append(iv.Ops, metrics.NewStats())
		}
		for v := 1; v <= 50*(i+1); v++ {
			iv.Ops[0].Add(time.Duration(v)*time.Millisecond, time.Duration(v)*time.Millisecond, metrics.OK, 0)
		}
		want = append(want, iv.Ops[0].Hist.Clone())
		if err := sink.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Finish(Summarize(run, host)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "latency.hlog"))
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	for i := 0; ; i++ {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			if i != 3 {
				t.Fatalf("read %d histograms, wrote 3", i)
			}
			break
		}
		if h.Tag() != "s1/flow/CREATE_ANCHOR" {
			t.Errorf("tag %q", h.Tag())
		}
		if h.TotalCount() != want[i].TotalCount() || h.ValueAtQuantile(99) != want[i].ValueAtQuantile(99) || h.Max() != want[i].Max() {
			t.Errorf("interval %d: read back %d values, p99 %d; wrote %d, %d", i, h.TotalCount(), h.ValueAtQuantile(99), want[i].TotalCount(), want[i].ValueAtQuantile(99))
		}
		if h.StartTimeMs()-t0.UnixMilli() != int64(i)*10000 {
			t.Errorf("interval %d starts at +%d ms", i, h.StartTimeMs()-t0.UnixMilli())
		}
	}
	for _, name := range []string{"summary.json", "summary.txt", "plan.yaml"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestProgressLines(t *testing.T) {
	run := fixture()
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

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1200 * time.Millisecond:     "1.2 s",
		250 * time.Second:           "4 m 10 s",
		2*time.Hour + 5*time.Minute: "2 h 05 m",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestMarkdownAndCSVGolden(t *testing.T) {
	s := Summarize(fixture(), host)
	s.Labels = map[string]string{"release": "Goldenrod", "env": "perf"}
	var md, cs bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.md", md.Bytes())
	if err := WriteCSV(&cs, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "operations.csv", cs.Bytes())
	// The CPS basic load test's figures: CREATE ANCHOR 1..100 ms: ops/s min 10 (1000/100), max 1000, avg 1000/50.5.
	if !strings.Contains(md.String(), "| CREATE ANCHOR | 102 | 2 | 1.000 | 100.000 | 50.500 | 10.000 | 1000.000 | 19.802 |") {
		t.Errorf("CPS basic load test table row:\n%s", md.String())
	}
}

// User data in the HTML report is escaped, in tables and in charts.
func TestHTMLEscapesUserData(t *testing.T) {
	run := fixture()
	run.PlanName = `<script>alert(1)</script>`
	run.Stages[0].Ops[0].Name = `<img src=x onerror=alert(2)>`
	s := Summarize(run, host)
	rd := &RunData{Summary: s, Intervals: map[string][]*IntervalData{}}
	h := metrics.NewHistogram()
	h.RecordValue(1500)
	enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
	rd.Intervals[Tag("s1", run.Stages[0].Ops[0])] = []*IntervalData{NewIntervalData(t0.UnixMilli(), t0.UnixMilli()+1000, -1, 0, string(enc))}
	var b bytes.Buffer
	if err := WriteHTML(&b, rd); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script>") || strings.Contains(out, "<img") {
		t.Fatal("user data reached the page unescaped")
	}
	if !strings.Contains(out, "&lt;img src=x onerror=alert(2)&gt;") || strings.Count(out, "<svg") < 3 {
		t.Errorf("escaped names or charts missing")
	}
}

// Hostile names (a step named with a cell border, HTML and backticks, such
// labels) keep the Markdown tables whole, and neither report has raw tags.
func TestReportsEscapeHostileNames(t *testing.T) {
	const bad = "a|b <script>alert(1)</script> `x` \\| [l](javascript:x) &amp;"
	run := fixture()
	run.Stages[0].Name = "vus=2 " + bad
	run.Stages[0].Ops[0].Name = bad
	run.Stages[0].Ops[1].Name = bad + " tx"
	run.Stages[0].Ops[0].Transaction = bad + " tx"
	s := Summarize(run, host)
	s.Labels = map[string]string{"release": bad, "<b>": "x|y"}
	s.Thresholds = []ThresholdResult{{Threshold: bad + ": p95 < 1ms", Operation: bad, Stage: bad, Actual: 2, Note: bad}}
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
	if err := WriteHTML(&page, &RunData{Summary: s, Intervals: map[string][]*IntervalData{}}); err != nil {
		t.Fatal(err)
	}
	if h := page.String(); strings.Contains(h, "<script") || strings.Contains(h, "<b>") || !strings.Contains(h, "Labels: &lt;b&gt;=x|y, release=a|b &lt;script&gt;") {
		t.Errorf("HTML labels missing or raw tags:\n%s", h)
	}
}

// A regression that begins at a known run is named there.
func TestHistoryNamesTheRun(t *testing.T) {
	var runs []*Summary
	for i := 0; i < 12; i++ {
		p95 := 100.0 + float64(i%3) // noise
		if i >= 7 {
			p95 = 150 + float64(i%3)
		}
		runs = append(runs, &Summary{RunID: fmt.Sprintf("run-%02d", i), Stages: []PhaseSummary{{Name: "users=5",
			Operations: []Operation{{Name: "check-out", Kind: metrics.KindTransaction, Summary: metrics.Summary{Count: 10, Latency: metrics.LatencySummary{P95: p95}}}}}}})
	}
	hs := History(runs, 95, 3)
	if len(hs) != 1 || len(hs[0].Changes) != 1 || !strings.Contains(hs[0].Changes[0], "from run run-07 on") || !strings.Contains(hs[0].Changes[0], "rose") {
		t.Fatalf("history: %+v", hs)
	}
	var b bytes.Buffer
	WriteHistory(&b, hs, 95)
	if !strings.Contains(b.String(), "users=5  check-out: 12 runs") {
		t.Errorf("%s", b.String())
	}
}

// Run directories written before tags carried the kind keep their
// transactions' intervals under the bare name.
func TestIntervalsOfLegacyTags(t *testing.T) {
	iv := []*IntervalData{NewIntervalData(0, 1000, 1, 0, "")}
	tx := Operation{Name: "checkout", Kind: metrics.KindTransaction, Scenario: "s"}
	rd := &RunData{Summary: &Summary{Stages: []PhaseSummary{{Index: 1, Operations: []Operation{tx}}}},
		Intervals: map[string][]*IntervalData{"s1/s/checkout": iv}}
	if got := rd.IntervalsOf(1, tx); len(got) != 1 {
		t.Errorf("legacy transaction tag not found")
	}
	// When a step has the bare name, the bare tag is the step's.
	rd.Summary.Stages[0].Operations = append(rd.Summary.Stages[0].Operations, Operation{Name: "checkout", Kind: metrics.KindStep, Scenario: "s"})
	if got := rd.IntervalsOf(1, tx); got != nil {
		t.Errorf("the step's intervals given to the transaction")
	}
	rd.Intervals["s1/s/checkout/.transaction"] = iv
	if got := rd.IntervalsOf(1, tx); len(got) != 1 {
		t.Errorf("current transaction tag not found")
	}
}

// Windows longer than a stage, or a first and a last window that overlap,
// are named: their figures would not compare what the user meant.
func TestWindowWarnings(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	rd := &RunData{Summary: &Summary{Stages: []PhaseSummary{{Name: "all", Start: t0, End: t0.Add(20 * time.Second)}}}}
	w := func(s string) Window {
		x, err := ParseWindow(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if got := WindowWarnings(rd, []Window{w("first:5s"), w("last:5s"), w("all")}); len(got) != 0 {
		t.Errorf("apart: %q", got)
	}
	got := WindowWarnings(rd, []Window{w("first:60s"), w("last:60s")})
	if len(got) != 2 || !strings.Contains(got[0], `stage all lasted 20s: window "first 1m0s" covers all of it`) {
		t.Errorf("longer than the stage: %q", got)
	}
	got = WindowWarnings(rd, []Window{w("first:12s"), w("last:12s")})
	if len(got) != 1 || !strings.Contains(got[0], "first 12s and last 12s overlap") {
		t.Errorf("overlap: %q", got)
	}
}

// The sentences say when the samples were too few to judge, rather than
// "no significant change", and count stages in good English.
func TestSentencesTooFewSamples(t *testing.T) {
	op := func(stage, name string, v analyze.Verdict, change float64) OpComparison {
		return OpComparison{Stage: stage, Operation: name, Change: change, Test: analyze.Comparison{Verdict: v}}
	}
	rc := &RunComparison{Percentile: 75, Ops: []OpComparison{
		op("users=1", "a", analyze.TooFewToSay, -0.9), op("users=5", "a", analyze.TooFewToSay, -0.9),
		op("users=1", "b", analyze.TooFewToSay, 0.1), op("users=5", "b", analyze.NoChange, 0.01),
		op("all", "c", analyze.Worse, 0.2),
	}}
	got := strings.Join(sentences(rc), "\n")
	for _, want := range []string{
		"a: too few samples to say at p75 (too few intervals a side in 2 stages;",
		"b: no significant change at p75 (1 of 2 stages had too few samples to say).",
		"c is 20% slower at p75 (1 of 1 stage).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// A sweep whose best throughput is at its largest VU count never saturated,
// and says so instead of naming that count as the saturation point.
func TestScalingSentence(t *testing.T) {
	pts := []ScalingPoint{{VUs: 1}, {VUs: 2}, {VUs: 4}}
	if got := (&Scaling{Points: pts, SaturationVUs: 2, Tolerance: 0.05}).Sentence(); got != "throughput stops increasing at 2 VUs (the fewest within 5% of the best)" {
		t.Error(got)
	}
	if got := (&Scaling{Points: pts, SaturationVUs: 4, Tolerance: 0.05}).Sentence(); got != "throughput was still increasing at 4 VUs, the most tried: no saturation within the sweep" {
		t.Error(got)
	}
}

// total: rps is the stage's requests over its wall time, not the sum of
// operations' rates over their own scenarios' spans.
func TestTotalRPSOverTheStage(t *testing.T) {
	th, err := plan.ParseThreshold("total: rps > 150")
	if err != nil {
		t.Fatal(err)
	}
	op := func(name string, count int64, rps float64) Operation {
		o := Operation{Name: name, Kind: metrics.KindStep}
		o.Count, o.RPS = count, rps
		return o
	}
	// 200 requests in a 2 s stage; the short scenario's step ran for 0.1 s.
	rs := checkStage(th, "all", []Operation{op("long", 100, 50), op("short", 100, 1000)}, 2)
	if len(rs) != 1 || rs[0].Actual != 100 || rs[0].Pass {
		t.Errorf("%+v: want 100/s, failing > 150", rs)
	}
}

// Thresholds' actual values carry their unit in Markdown and HTML, and a
// regression shows its comparison.
func TestThresholdActualsInReports(t *testing.T) {
	s := &Summary{Plan: PlanInfo{Name: "p"}, Thresholds: []ThresholdResult{
		{Threshold: "errors < 0.1%", Operation: "a", Stage: "all", Actual: 0.0355},
		{Threshold: "p95 < 500ms", Operation: "a", Stage: "all", Actual: 612.5},
		{Threshold: "p75 regression vs release=A < 10%", Operation: "a", Stage: "all", Actual: 0.91, Note: "3.525 ms → 6.731 ms: 91.0% worse (p=3.11e-08, worse)"},
	}}
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, &RunData{Summary: s}); err != nil {
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
	run := func(id string, a, b float64) *Summary {
		op := func(tx string, p95 float64) Operation {
			o := Operation{Name: "GET a", Kind: metrics.KindStep, Scenario: "s", Transaction: tx}
			o.Count, o.Latency.P95 = 10, p95
			return o
		}
		return &Summary{RunID: id, Stages: []PhaseSummary{{Name: "all", Operations: []Operation{op("in", a), op("out", b)}}}}
	}
	hs := History([]*Summary{run("r1", 1, 5), run("r2", 2, 6)}, 95, 3)
	if len(hs) != 2 || len(hs[0].Points) != 2 || hs[0].Transaction != "in" || hs[1].Points[1].Value != 6 {
		t.Fatalf("%+v", hs)
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, hs, 95); err != nil || !strings.Contains(b.String(), "all  GET a (scenario s, in out): 2 runs, p95 5.000 ms (r1) -> 6.000 ms (r2)") {
		t.Errorf("%v\n%s", err, b.String())
	}
}

// A stage's sliver of a last interval counts in the whole, but is not a
// sample of the test like a full interval.
func TestShortLastIntervalIsNoSample(t *testing.T) {
	run := fixture()
	s := Summarize(run, host)
	s.Interval = 1
	op := run.Stages[0].Ops[0]
	rd := &RunData{Summary: s, Intervals: map[string][]*IntervalData{}}
	var ivs []*IntervalData
	for i, lat := range []int64{1000, 1000, 1000, 9000} { // µs; the last interval lasts 11 ms
		h := metrics.NewHistogram()
		h.RecordValue(lat)
		enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
		start := t0.UnixMilli() + int64(i)*1000
		end := start + 1000
		if i == 3 {
			end = start + 11
		}
		ivs = append(ivs, NewIntervalData(start, end, 1, 0, string(enc)))
	}
	rd.Intervals[Tag("s1", op)] = ivs
	samples, whole, _, ok := metricSamples([]*RunData{rd}, s.Stages[0].Name, metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}, sampleMetric{Pct: 50})
	if !ok || len(samples) != 3 || whole <= 0 {
		t.Errorf("samples %v, whole %v, ok %v: want the 3 full intervals", samples, whole, ok)
	}
}

// A step name used in two scenarios is two operations in the sentences.
func TestSentencesNameInTwoScenarios(t *testing.T) {
	op := func(stage, scen string, v analyze.Verdict, change float64) OpComparison {
		return OpComparison{Stage: stage, Scenario: scen, Operation: "GET b", Change: change, Test: analyze.Comparison{Verdict: v}}
	}
	rc := &RunComparison{Percentile: 75, Ops: []OpComparison{
		op("users=1", "main", analyze.Worse, 0.2), op("users=2", "main", analyze.Worse, 0.3),
		op("users=1", "short", analyze.NoChange, 0.01), op("users=2", "short", analyze.NoChange, 0.01),
	}}
	got := strings.Join(sentences(rc), "\n")
	if !strings.Contains(got, "main: GET b is 20% to 30% slower at p75 across users=1 to users=2 (2 of 2 stages).") || !strings.Contains(got, "short: GET b: no significant change at p75.") {
		t.Errorf("%s", got)
	}
}

// openFixture is a stage of an open model, whose step and scenario both
// have a service time and a start delay, with the resources of a run: the
// generator's host, perflab's own process and a monitor of several
// processes whose memory is their PSS.
func openFixture() *Summary {
	lat := func(base float64) *metrics.LatencySummary {
		return &metrics.LatencySummary{Min: base, Mean: 2 * base, P50: 2 * base, P75: 3 * base, P90: 4 * base, P95: 5 * base, P99: 6 * base, P999: 7 * base, Max: 8 * base}
	}
	op := func(name string, kind metrics.Kind) Operation {
		o := Operation{Name: name, Kind: kind, Scenario: "checkout"}
		o.Count, o.RPS = 100, 10
		o.Latency, o.ServiceTime, o.StartDelay = *lat(2), lat(1), lat(0.5)
		return o
	}
	ms := 0.25
	return &Summary{
		Stages: []PhaseSummary{{Index: 1, Name: "rate=10", Duration: 10,
			Operations: []Operation{op("checkout", metrics.KindStep), op("checkout", metrics.KindScenario)}}},
		Resources: &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "rate=10", Transactions: 100, Monitors: []monitor.MonitorFigures{
			{Monitor: GeneratorMonitor, Host: &monitor.HostFigures{BusyAvg: 0.25, BusyMax: 0.5}},
			{Monitor: SelfMonitor, CPU: &monitor.CPUFigures{Seconds: 0.5, Cores: 0.05, MSPerTx: &ms},
				Memory: []monitor.MemoryTrend{{Metric: monitor.MetricRSS, AvgBytes: 30 << 20, PeakBytes: 32 << 20}}},
			{Monitor: "db", CPU: &monitor.CPUFigures{Seconds: 1, Cores: 0.1, MSPerTx: &ms},
				Memory: []monitor.MemoryTrend{{Metric: monitor.MetricPSS, AvgBytes: 110 << 20, PeakBytes: 120 << 20},
					{Metric: monitor.MetricRSS, AvgBytes: 600 << 20, PeakBytes: 646 << 20}}},
		}}}},
		Total: Total{Line: "summary = 100 in 00:00:10 = 10.0/s"},
	}
}

func TestTableOpenGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, openFixture()); err != nil {
		t.Fatal(err)
	}
	golden(t, "table_open.txt", b.Bytes())
}

// The HTML report's order, headline first, and its open-model table.
func TestHTMLGolden(t *testing.T) {
	s := openFixture()
	s.RunID, s.Status, s.Plan.Name, s.Start = "r1", "completed", "checkout", t0
	s.Labels = map[string]string{"release": "goldenrod"}
	s.Thresholds = []ThresholdResult{{Threshold: "p95 < 20ms", Stage: "rate=10", Operation: "checkout", Actual: 10, Pass: true}}
	s.Warnings = []string{"stage 1 (rate=10): a warning"}
	s.Resources.SlowQueries = []monitor.SlowQuery{{Monitor: "db", Calls: 3, MeanMS: 150, TotalMS: 450, Query: "SELECT 1"}}
	var b bytes.Buffer
	if err := WriteHTML(&b, &RunData{Summary: s}); err != nil {
		t.Fatal(err)
	}
	// The generation time is the only figure that changes between runs.
	h := b.String()
	if i := strings.Index(h, "Generated by perflab at "); i >= 0 {
		h = h[:i] + "Generated by perflab at (time)." + h[i+strings.Index(h[i:], "</p>"):]
	}
	golden(t, "report.html", []byte(h))
}

// A run from before pss_bytes (RSS only) compares by RSS with a run that
// has both, not its RSS with the other's PSS.
func TestCompareResourcesSameMemoryMetric(t *testing.T) {
	run := func(mem ...monitor.MemoryTrend) *RunData {
		return &RunData{Summary: &Summary{Resources: &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "s",
			Monitors: []monitor.MonitorFigures{{Monitor: "db", Memory: mem}}}}}}}
	}
	before := run(monitor.MemoryTrend{Metric: monitor.MetricRSS, PeakBytes: 640 << 20})
	after := run(monitor.MemoryTrend{Metric: monitor.MetricPSS, PeakBytes: 120 << 20}, monitor.MemoryTrend{Metric: monitor.MetricRSS, PeakBytes: 650 << 20})
	rs := compareResources([]*RunData{before}, []*RunData{after})
	if len(rs) != 1 || rs[0].BasePeakMB != 640 || rs[0].CandPeakMB != 650 {
		t.Errorf("got %+v, want RSS against RSS: 640 and 650 MB", rs)
	}
	rs = compareResources([]*RunData{after}, []*RunData{after})
	if len(rs) != 1 || rs[0].BasePeakMB != 120 || rs[0].CandPeakMB != 120 {
		t.Errorf("got %+v, want PSS against PSS: 120 MB", rs)
	}
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
	if rows := ResourceRows(a); len(rows) != 1 || rows[0][1] != SelfMonitor {
		t.Errorf("rows %q", rows)
	}
}
