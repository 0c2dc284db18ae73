package report

import (
	"bytes"
	"encoding/csv"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// A step that always fails has no successful times ('-' in its row) and
// a KO row of its failures' times in every table: the terminal's, the
// Markdown and the HTML report's, and the operations CSV.
func TestAlwaysFailingStepShowsItsKOTimes(t *testing.T) {
	run := runtest.Fixture()
	ph := run.Stages[0]
	ph.Ops = append(ph.Ops, metrics.Op{Name: "broken", Kind: metrics.KindStep, Scenario: "flow"})
	broken := metrics.NewStats()
	for i := 1; i <= 10; i++ {
		d := time.Duration(20+i) * time.Millisecond // 21 ... 30 ms
		broken.Add(d, d, metrics.HTTP5xx, 0)
	}
	ph.Totals = append(ph.Totals, broken)
	s := results.Summarize(run, runtest.Host)
	var op results.Operation
	for _, o := range s.Stages[0].Operations {
		if o.Name == "broken" {
			op = o
		}
	}
	if op.Failed == nil || op.Failed.Count != 10 || op.Failed.P50 < 25 || op.Failed.P50 > 25.1 {
		t.Fatalf("broken: failed %+v, want 10 with p50 25 ms", op.Failed)
	}
	p50, max := results.Ms(op.Failed.P50), results.Ms(op.Failed.Max)

	var table bytes.Buffer
	if err := WriteTable(&table, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(table.String(), "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "broken" {
			// count 10, errors 10, 100%, rps, then - for each OK time.
			if f[7] != "-" || f[len(f)-1] != "-" {
				t.Errorf("the OK row: %q", l)
			}
			ko := strings.Fields(lines[i+1])
			if len(ko) != 11 || ko[0] != "KO" || ko[1] != "10" || ko[4] != p50 || ko[10] != max {
				t.Errorf("the KO row under it: %q, want count 10, p50 %s, max %s", lines[i+1], p50, max)
			}
		}
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if want := "| broken KO | 10 |  | 21.000 | 30.000 | 25.500 |  |  |  | " + num(op.Failed.P50) + " |"; !strings.Contains(md.String(), want) {
		t.Errorf("Markdown: no %q in\n%s", want, md.String())
	}

	var html bytes.Buffer
	if err := WriteHTML(&html, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	if want := `<tr class="ko"><td>broken KO</td><td></td><td>10</td><td></td><td></td><td>21.00</td><td>25.50</td><td>` + p50 + `</td>`; !strings.Contains(html.String(), want) {
		t.Errorf("HTML: no %q", want)
	}
	if want := `<tr class="ko"><td>CREATE ANCHOR KO</td><td></td><td>2</td>`; !strings.Contains(html.String(), want) {
		t.Errorf("HTML: no %q", want)
	}

	var cs bytes.Buffer
	if err := WriteCSV(&cs, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	found := false
	for _, r := range rows[1:] {
		if r[col["operation"]] != "broken" {
			continue
		}
		found = true
		got := map[string]string{}
		for _, c := range []string{"count", "errors", "p50_ms", "ko_count", "ko_min_ms", "ko_mean_ms", "ko_max_ms", "ko_p50_ms"} {
			got[c] = r[col[c]]
		}
		want := map[string]string{"count": "10", "errors": "10", "p50_ms": "0", "ko_count": "10", "ko_min_ms": "21", "ko_mean_ms": "25.5", "ko_max_ms": "30",
			"ko_p50_ms": strconv.FormatFloat(op.Failed.P50, 'f', -1, 64)}
		if !maps.Equal(got, want) {
			t.Errorf("CSV: %v, want %v", got, want)
		}
	}
	if !found {
		t.Error("CSV: no row of broken")
	}
}
