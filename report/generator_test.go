package report

import (
	"bytes"
	"html/template"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/store"
)

// openRun is a stage of an open model: 100 iterations whose first request
// took 1 ms of service time after a start delay of i × 20 µs (i = 1..100:
// p50 1 ms, p99 1.98 ms), 3 dropped and 5 queued.
func openRun() *metrics.Run {
	ops := []metrics.Op{{Name: "GET /", Kind: metrics.KindStep, Scenario: "s"}, {Name: "s", Kind: metrics.KindScenario, Scenario: "s"}}
	totals := []*metrics.Stats{metrics.NewOpenStats(), metrics.NewOpenStats()}
	for i := 1; i <= 100; i++ {
		delay := time.Duration(i) * 20 * time.Microsecond
		for _, st := range totals {
			st.Add(delay+time.Millisecond, time.Millisecond, metrics.OK, 0)
		}
	}
	totals[1].Dropped, totals[1].Queued = 3, 5
	ph := &metrics.Phase{Index: 1, Name: "rate=100", Start: t0, End: t0.Add(time.Second), Ops: ops, Totals: totals,
		Load: []metrics.Load{{Scenario: "s", VUs: 2, Open: true, Rate: 100, MaxVUs: 2}}}
	return &metrics.Run{ID: "open", PlanName: "open", Start: t0, End: t0.Add(time.Second), Status: metrics.StatusCompleted, Stages: []*metrics.Phase{ph}}
}

// A generator that fell behind is named, with where and why, in
// summary.json, the terminal table, Markdown and HTML; the open model's
// start delay and service time are shown beside its latency.
func TestGeneratorThatFellBehindIsNamed(t *testing.T) {
	s := Summarize(openRun(), host)
	s.Resources = &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: "rate=100", Monitors: []monitor.MonitorFigures{
		{Monitor: SelfMonitor, CPU: &monitor.CPUFigures{Cores: 0.95}},
		{Monitor: GeneratorMonitor, Host: &monitor.HostFigures{BusyAvg: 0.5}},
	}}}}
	CheckGenerator(s, 1)
	g := s.Stages[0].Generator
	if g == nil || g.KeptUp || len(g.Problems) != 3 {
		t.Fatalf("generator check %+v: want start_delay, dropped and cpu", g)
	}
	want := map[string]float64{"start_delay": 1.98, "dropped": 3, "cpu": 0.95}
	for _, p := range g.Problems {
		if v, ok := want[p.Kind]; !ok || v != p.Value {
			t.Errorf("problem %s value %v, want %v", p.Kind, p.Value, v)
		}
		if !strings.Contains(p.Sentence, "stage 1 (rate=100)") {
			t.Errorf("%q does not say where", p.Sentence)
		}
	}
	if !strings.Contains(g.Problems[0].Sentence, "5 iterations waited for a free VU") {
		t.Errorf("the start delay's cause is not named: %s", g.Problems[0].Sentence)
	}
	op := s.Stages[0].Operations[1]
	if d := op.StartDelay; d == nil || d.Min != 0.02 || d.Max != 2 || d.Mean != 1.01 {
		t.Errorf("start delay %+v: want min 0.02, mean 1.01, max 2 ms", d)
	}

	var csvOut bytes.Buffer
	if err := WriteCSV(&csvOut, s); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(csvOut.String(), "\n"); !strings.Contains(lines[0], "start_delay_p99_ms") || !strings.Contains(lines[2], ",1.98,2,3,5") {
		t.Errorf("operations CSV without the start delay, dropped and queued:\n%s", csvOut.String())
	}
	var txt, md, html bytes.Buffer
	if err := WriteTable(&txt, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, &RunData{Summary: s, Intervals: map[string][]*IntervalData{}}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": txt.String(), "markdown": md.String(), "html": html.String()} {
		for _, p := range g.Problems {
			if sentence := p.Sentence; !strings.Contains(out, sentence) && !strings.Contains(out, template.HTMLEscapeString(sentence)) {
				t.Errorf("%s does not say %q", name, p.Sentence)
			}
		}
		if !strings.Contains(strings.ToLower(out), "start delay") || !strings.Contains(out, "1.980") {
			t.Errorf("%s does not show the start delay (p99 1.980 ms):\n%s", name, out)
		}
	}

	// The same stage without the problems kept up.
	s = Summarize(openRun(), host)
	for i := range s.Stages[0].Operations {
		op := &s.Stages[0].Operations[i]
		op.StartDelay.P99, op.Dropped = 0.05, 0
	}
	CheckGenerator(s, 1)
	if g := s.Stages[0].Generator; !g.KeptUp || len(g.Problems) != 0 || len(s.Warnings) != 0 {
		t.Errorf("a generator that kept up: %+v, warnings %q", g, s.Warnings)
	}
}

// A run that never finished is rebuilt from its stored intervals with its
// open model's service time and start delay, and a run directory keeps
// them through import into the history and export back.
func TestOpenModelDurationsThroughTheHistory(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := openRun()
	ph := run.Stages[0]
	if err := st.Begin("killed", "open", []byte("name: open\n"), run.Start, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Interval("killed", ph, &metrics.Interval{Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
		t.Fatal(err)
	}
	rd, err := FromStore(st, "killed")
	if err != nil {
		t.Fatal(err)
	}
	op := rd.Summary.Stages[0].Operations[1]
	if d, s := op.StartDelay, op.ServiceTime; d == nil || s == nil || d.P50 != 1 || d.Max != 2 || s.P99 != 1 {
		t.Fatalf("rebuilt from the history: start delay %+v, service time %+v", d, s)
	}
	tag := stageTag(1, "s", "s", metrics.KindScenario)
	for _, suffix := range []string{ServiceTimeTag, StartDelayTag} {
		if ivs := rd.Intervals[tag+suffix]; len(ivs) != 1 {
			t.Errorf("%s: %d intervals read from the history, want 1", tag+suffix, len(ivs))
		}
	}

	// A run directory, into the history and out again.
	dir := filepath.Join(t.TempDir(), "open")
	d, err := CreateRunDir(dir, "open-run", "open", run.Start, []byte("name: open\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Sink(ph).Interval(&metrics.Interval{Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(Summarize(run, host)); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportRunDir(st, dir, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "back")
	if err := ExportRunDir(st, "open", out); err != nil {
		t.Fatal(err)
	}
	orig, err1 := ReadRunDir(dir)
	back, err2 := ReadRunDir(out)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	charts, err := RunCharts(orig)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range charts.Stages[0] {
		if c.Slug == "start-delay-over-time" {
			found = len(c.Series) == 1 && len(c.Series[0].Points) == 1 && c.Series[0].Points[0].Y > 1.9 && c.Series[0].Points[0].Y <= 2
		}
	}
	if !found {
		t.Error("no chart of the start delay's p99 over time (1.98 ms in the one interval)")
	}
	for _, suffix := range []string{"", ServiceTimeTag, StartDelayTag} {
		a, b := orig.Intervals[tag+suffix], back.Intervals[tag+suffix]
		if len(a) != 1 || len(b) != 1 || a[0].enc != b[0].enc {
			t.Errorf("%s: %d intervals written, %d after import and export, or they differ", tag+suffix, len(a), len(b))
		}
	}
}
