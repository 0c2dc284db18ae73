package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// The generator's problems, and an open model's start delay and service
// time beside its latency, are shown in the terminal table, Markdown, HTML
// and the operations CSV.
func TestGeneratorProblemsInReports(t *testing.T) {
	s := results.Summarize(runtest.OpenRun(), runtest.Host)
	s.Resources = runtest.BusyGenerator("rate=100")
	judge.Generator(s, 1)
	g := s.Stages[0].Generator
	if g == nil || len(g.Problems) != 3 {
		t.Fatalf("generator check %+v: want start_delay, dropped and cpu", g)
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
	if err := WriteHTML(&html, &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{}}); err != nil {
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
}

// An open model's run directory has a chart of its start delay's p99 over
// time.
func TestStartDelayChart(t *testing.T) {
	rd, err := results.ReadDir(runtest.WriteRunDir(t, runtest.OpenRun()))
	if err != nil {
		t.Fatal(err)
	}
	charts, err := RunCharts(rd)
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
}

// The active VUs chart has a series per scenario of its intervals'
// PeakVUs: whole intervals on the line, a partial one apart, a sliver
// (under a tenth of an interval) left out as in the other charts.
func TestVUsChart(t *testing.T) {
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	ph := s.Stages[0]
	ivl := s.IntervalLength().Milliseconds()
	t0 := ph.Start.UnixMilli()
	iv := func(from, to, vus int64) *results.IntervalData {
		d := results.NewIntervalData(t0+from, t0+to, 1, 0, "")
		d.PeakVUs = vus
		return d
	}
	rd := &results.Run{Summary: s, Intervals: map[string][]*results.IntervalData{
		results.StageTag(ph.Index, "flow", "flow", metrics.KindScenario): {iv(0, ivl, 2), iv(ivl, 2*ivl, 5), iv(2*ivl, 2*ivl+ivl/2, 3), iv(2*ivl+ivl/2, 2*ivl+ivl/2+ivl/20, 1)},
	}}
	got := vusSeries(rd, ph)
	x := float64(ivl) / 1000
	want := []Series{{Name: "flow", Points: []XY{{0, 2}, {x, 5}}, Partial: []XY{{2 * x, 3}}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("VUs series %v, want %v", got, want)
	}
	charts, err := stageCharts(rd, ph)
	if err != nil {
		t.Fatal(err)
	}
	if c := charts[len(charts)-1]; c.Slug != "vus-over-time" || len(c.Series) != 1 {
		t.Errorf("the last chart is %s with %d series, want vus-over-time with 1", c.Slug, len(c.Series))
	}
}
