package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// errorsRun is the fixture with a second step that failed 52 times of
// 100 by eight messages (10, 9, ..., 3 times), one of them markup, and
// a setup whose step failed once.
func errorsRun() *results.Summary {
	run := runtest.Fixture()
	ph := run.Stages[0]
	st := metrics.NewStats()
	for i := range 8 {
		for range 10 - i {
			st.AddResult(time.Millisecond, time.Millisecond, metrics.CheckFailed, 0, fmt.Sprintf("json $.state is <b>s%d</b>, want ok", i))
		}
	}
	for st.Count < 100 {
		st.AddResult(time.Millisecond, time.Millisecond, metrics.OK, 0, "")
	}
	ph.Ops = append(ph.Ops, metrics.Op{Name: "pay", Kind: metrics.KindStep, Scenario: "flow"})
	ph.Totals = append(ph.Totals, st)
	setup := metrics.NewStats()
	setup.AddResult(time.Millisecond, time.Millisecond, metrics.ConnRefused, 0, "connect: dial tcp 127.0.0.1:9: connect: connection refused")
	run.Setup = []*metrics.Phase{{Name: "setup", Start: runtest.T0, End: runtest.T0, Ops: []metrics.Op{{Name: "login", Kind: metrics.KindStep, Scenario: "flow"}},
		Totals: []*metrics.Stats{setup}}}
	return results.Summarize(run, runtest.Host)
}

// The Errors section: every message with its count and its share of its
// operation's requests, in the table (the five most frequent a phase,
// saying how many more), in perflab show --errors (all), in Markdown and
// in HTML, user text escaped.
func TestErrorsSection(t *testing.T) {
	s := errorsRun()
	rows := RunErrorRows(s)
	if len(rows) != 1+10 {
		t.Fatalf("%d rows, want 11: %+v", len(rows), rows)
	}
	// Which operation's, and the run's start (the rows' times are into
	// it): the summary has no first and last times, as a run's from
	// before perflab kept them.
	if r := rows[0]; r != (ErrorRow{Stage: "setup", Operation: "login", Kind: "connection_refused", Message: "connect: connection refused", Count: 1, Share: 100,
		Scenario: "flow", OpKind: metrics.KindStep, RunStart: s.Start}) {
		t.Errorf("setup: %+v", r)
	}
	if r := rows[1]; r != (ErrorRow{Stage: "vus=2", Operation: "pay", Kind: "check_failed", Message: "json $.state is <b>s0</b>, want ok", Count: 10, Share: 10,
		Scenario: "flow", OpKind: metrics.KindStep, RunStart: s.Start}) {
		t.Errorf("first of the stage: %+v", r)
	}
	// The fixture's step: one 503 and one timeout of 102 requests, last.
	if r := rows[len(rows)-1]; r.Operation != "CREATE ANCHOR" || r.Count != 1 || fmt.Sprintf("%.2f", r.Share) != "0.98" {
		t.Errorf("last: %+v", r)
	}

	var table bytes.Buffer
	if err := WriteTable(&table, s); err != nil {
		t.Fatal(err)
	}
	words := strings.Join(strings.Fields(table.String()), " ")
	for _, want := range []string{
		"the 5 most frequent of 10; perflab show --errors lists them all:",
		"pay check_failed 10 10.00% json $.state is <b>s0</b>, want ok pay",
		"pay check_failed 6 6.00% json $.state is <b>s4</b>, want ok summary =",
		"login connection_refused 1 100.00% connect: connection refused",
	} {
		if !strings.Contains(words, want) {
			t.Errorf("table: no %q in\n%s", want, table.String())
		}
	}
	if strings.Contains(table.String(), "s5</b>") {
		t.Errorf("table: a sixth message of the stage:\n%s", table.String())
	}
	var all bytes.Buffer
	if err := WriteErrors(&all, s); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(all.String(), "check_failed"); n != 8 || !strings.Contains(all.String(), "s7</b>, want ok") || !strings.Contains(all.String(), "timeout") {
		t.Errorf("all: %d check_failed rows\n%s", n, all.String())
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Errors",
		"| Stage | Operation | Kind | Message | Count | Share |",
		"| vus=2 | pay | check_failed | json $.state is &lt;b&gt;s7&lt;/b&gt;, want ok | 3 | 3.00% |",
		"| setup | login | connection_refused | connect: connection refused | 1 | 100.00% |",
		"| vus=2 | CREATE ANCHOR | http_5xx | HTTP 503 Service Unavailable | 1 | 0.98% |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown: no %q in\n%s", want, md.String())
		}
	}

	var page bytes.Buffer
	if err := WriteHTML(&page, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<h2 id="errors">Errors</h2>`,
		"<tr><td>vus=2</td><td>pay</td><td>check_failed</td><td>json $.state is &lt;b&gt;s7&lt;/b&gt;, want ok</td><td>3</td><td>3.00%</td></tr>",
		"<tr><td>vus=2</td><td>CREATE ANCHOR</td><td>timeout</td><td>timeout</td><td>1</td><td>0.98%</td></tr>",
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML: no %q", want)
		}
	}
	if strings.Contains(page.String(), "<b>s") {
		t.Error("HTML: a message's markup is not escaped")
	}
}

// A run without failures has no Errors section.
func TestNoErrorsNoSection(t *testing.T) {
	run := runtest.Fixture()
	run.Stages[0].Totals[0] = metrics.NewStats()
	s := results.Summarize(run, runtest.Host)
	var md, page, all bytes.Buffer
	WriteMarkdown(&md, s)
	WriteHTML(&page, &results.Run{Summary: s})
	WriteErrors(&all, s)
	if strings.Contains(md.String(), "## Errors") || strings.Contains(page.String(), `id="errors"`) || all.String() != "no failures\n" {
		t.Errorf("a section without errors: %q", all.String())
	}
}
