package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/results"
)

// incidentSummary is the fixture's run (stage vus=2, 10 s from 10:00:00)
// and a second stage (vus=4, the 10 s after), whose drift did not degrade
// but had two incidents in vus=2, an error burst from 2 to 4 s and a
// latency excursion from 6.5 to 8 s (suspect), with a change of the
// generator's memory between them, at 5 s.
func incidentSummary() *results.Summary {
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	two := s.Stages[0]
	two.Index, two.Name, two.Start, two.End = 2, "vus=4", two.End, two.End.Add(10*time.Second)
	s.Stages = append(s.Stages, two)
	s.Drift = IncidentDrift("vus=2", runtest.T0, 10, [2]float64{2, 4}, [2]float64{6.5, 8})
	s.Drift.Timeline = []results.DriftEvent{{Stage: "vus=2", Series: "memory of perflab (rss)", Kind: "memory", Generator: true, AtS: 5, Elapsed: 5,
		Before: 50, After: 74.2, Unit: "MB", Verdict: results.DriftSettled}}
	return s
}

const (
	incident1 = "from 2.0 s to 4.0 s (10:00:02 to 10:00:04, 2.0 s): error ratio of get 33.33% (worst 50.00%), 120 failures (most often: HTTP 503 Service Unavailable), then back to 0.00%"
	incident2 = "from 6.5 s to 8.0 s (10:00:06 to 10:00:08, 1.5 s): p95 of get 180.00 ms (worst 240.00 ms), then back to 20.00 ms; throughput 40/s (worst 31/s), then back to 100/s; " +
		"meanwhile the generator's host: run queue of generator's host at 24 tasks (8 tasks around it) (suspect: the generator's as likely as the system's)"
)

// The terminal's tables and perflab drift say each incident on a line of
// its own, after the verdict.
func TestIncidentsInTerminal(t *testing.T) {
	s := incidentSummary()
	var table, drift bytes.Buffer
	if err := WriteTable(&table, s); err != nil {
		t.Fatal(err)
	}
	want := "\ndrift over time: no lasting degradation: 2 series steady; 2 incidents: " + incident1 + "; " + incident2 + "\n" +
		"incident 1: " + incident1 + "\nincident 2: " + incident2 + "\nsummary = "
	if !strings.Contains(table.String(), want) {
		t.Errorf("the table lacks\n%s\nin\n%s", want, table.String())
	}
	if err := WriteDrift(&drift, s.Drift); err != nil {
		t.Fatal(err)
	}
	if want := "incident 1: " + incident1 + "\nincident 2: " + incident2 + "\nmethod: "; !strings.Contains(drift.String(), want) {
		t.Errorf("perflab drift lacks\n%s\nin\n%s", want, drift.String())
	}
}

// The Markdown report has a section Incidents near its top, a table of
// every incident; the drift's heading says it did not degrade, and its
// timeline has the incidents in order among the changes.
func TestIncidentsInMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, incidentSummary()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	want := "## Incidents\n\n2 incidents: changes that did not last, each shaded on its stage's charts.\n\n" +
		"| # | Stage | Start | End | Duration | Effects | Suspect |\n|--:|---|---|---|--:|---|---|\n" +
		"| 1 | vus=2 | 2.0 s (10:00:02) | 4.0 s (10:00:04) | 2.0 s | error ratio of get: 33.33% (worst 50.00%) against 0.00% around it; 120 failures, most often: HTTP 503 Service Unavailable |  |\n" +
		"| 2 | vus=2 | 6.5 s (10:00:06) | 8.0 s (10:00:08) | 1.5 s | p95 of get: 180.00 ms (worst 240.00 ms) against 20.00 ms around it; throughput: 40/s (worst 31/s) against 100/s around it | run queue of generator's host at 24 tasks (8 tasks around it) |\n" +
		"\nTimes are into the run, clock times UTC.\n\n## Drift over time\n\n**Not degraded; incidents above.** No lasting degradation: 2 series steady; 2 incidents: "
	if !strings.Contains(md, want) {
		t.Errorf("no\n%s\nin\n%s", want, md)
	}
	timeline := "What changed, in order:\n\n" +
		"- From 2.0 s to 4.0 s into the run (10:00:02 to 10:00:04 UTC), 2.0 s: incident 1, stage vus=2: error ratio of get: 33.33% (worst 50.00%) against 0.00% around it; 120 failures, most often: HTTP 503 Service Unavailable\n" +
		"- at 5.0 s (10:00:05 UTC): memory of perflab (rss) (generator) 50.0 MB → 74.2 MB (settled)\n" +
		"- From 6.5 s to 8.0 s into the run (10:00:06 to 10:00:08 UTC), 1.5 s: incident 2, stage vus=2: p95 of get: 180.00 ms (worst 240.00 ms) against 20.00 ms around it; throughput: 40/s (worst 31/s) against 100/s around it\n\n"
	if !strings.Contains(md, timeline) {
		t.Errorf("no\n%s\nin\n%s", timeline, md)
	}
	if i := strings.Index(md, "## Incidents"); i < 0 || i > strings.Index(md, "## Operations per stage") {
		t.Error("the incidents are not near the top")
	}
}

// The HTML report: the drift verdict's line amber, the amber box right
// under it listing every incident (its stage, times into the run and by
// the clock, length, each effect against its baseline, failures and their
// most frequent message, and the suspect), the contents' first link to
// it, the timeline with the incidents in order; the charts over the time
// of the incidents' stage have their bands, the other stage's none.
func TestIncidentsInHTML(t *testing.T) {
	s := incidentSummary()
	var b bytes.Buffer
	if err := WriteHTML(&b, &results.Run{Summary: s}); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	box := `<p class="warn" id="drift-verdict"><strong>Drift over time:</strong> no lasting degradation: 2 series steady; 2 incidents: from 2.0 s to 4.0 s (10:00:02 to 10:00:04, 2.0 s): ` +
		`error ratio of get 33.33% (worst 50.00%), 120 failures (most often: HTTP 503 Service Unavailable), then back to 0.00%; from 6.5 s to 8.0 s (10:00:06 to 10:00:08, 1.5 s): ` +
		`p95 of get 180.00 ms (worst 240.00 ms), then back to 20.00 ms; throughput 40/s (worst 31/s), then back to 100/s; meanwhile the generator&#39;s host: run queue of generator&#39;s host at 24 tasks (8 tasks around it) (suspect: the generator&#39;s as likely as the system&#39;s)</p>
<div class="incidents" id="incidents"><p><strong>2 incidents</strong>: changes that did not last (an outage, a burst of errors, a latency excursion), each shaded amber on the charts of its stage; 1 of them while the generator's host was busier or saturated, listed last.</p><ol>
<li id="incident-1" value="1"><strong>Incident 1</strong>, stage vus=2: from 2.0 s to 4.0 s into the run (10:00:02 to 10:00:04 UTC), 2.0 s.<ul><li>error ratio of get: 33.33% (worst 50.00%) against 0.00% around it; 120 failures, most often: HTTP 503 Service Unavailable</li></ul></li>
</ol><details><summary>1 suspect incident: the generator's host was busier or saturated during each, the generator's doing as likely as the system's</summary><ol>
<li id="incident-2" value="2"><strong>Incident 2</strong>, stage vus=2: from 6.5 s to 8.0 s into the run (10:00:06 to 10:00:08 UTC), 1.5 s.<ul><li>p95 of get: 180.00 ms (worst 240.00 ms) against 20.00 ms around it</li><li>throughput: 40/s (worst 31/s) against 100/s around it</li></ul><p class="suspect">suspect: the generator's host meanwhile: run queue of generator&#39;s host at 24 tasks (8 tasks around it) (the generator's doing as likely as the system's)</p></li>
</ol></details></div>
<p><code>summary = `
	if !strings.Contains(h, box) {
		t.Errorf("no\n%s\nin the page", box)
	}
	if !strings.Contains(h, "<ul>\n<li><a href=\"#incidents\">Incidents</a></li>\n<li><a href=\"#drift\">Drift over time</a></li>") {
		t.Error("the contents do not open with the incidents")
	}
	timeline := `<div id="timeline"><p><strong>What changed, in order:</strong></p><ol class="timeline">
<li class="incident"><a href="#incident-1">From 2.0 s to 4.0 s into the run (10:00:02 to 10:00:04 UTC), 2.0 s: incident 1, stage vus=2: error ratio of get: 33.33% (worst 50.00%) against 0.00% around it; 120 failures, most often: HTTP 503 Service Unavailable</a></li>
<li>at 5.0 s (10:00:05 UTC): memory of perflab (rss) (generator) 50.0 MB → 74.2 MB (settled)</li>
<li class="incident"><a href="#incident-2">From 6.5 s to 8.0 s into the run (10:00:06 to 10:00:08 UTC), 1.5 s: incident 2, stage vus=2: p95 of get: 180.00 ms (worst 240.00 ms) against 20.00 ms around it; throughput: 40/s (worst 31/s) against 100/s around it</a></li>
</ol></div>`
	if !strings.Contains(h, timeline) {
		t.Errorf("no\n%s\nin the page", timeline)
	}
	var banded, plain []string
	for _, p := range plotsOf(t, h) {
		var labels []string
		for _, band := range p.Bands {
			if band.Kind == BandIncident {
				labels = append(labels, band.Label)
				if band.Label == "incident 2" && (band.From != 6.5 || band.To != 8 || band.Text != "incident 2 (stage vus=2): "+incident2) {
					t.Errorf("%s: %+v", p.Slug, band)
				}
			}
		}
		switch {
		case strings.Join(labels, ",") == "incident 1,incident 2":
			banded = append(banded, p.Sync+" "+p.Slug)
		case len(labels) == 0:
			plain = append(plain, p.Sync+" "+p.Slug)
		default:
			t.Errorf("%s: bands %q", p.Slug, labels)
		}
	}
	if got := strings.Join(banded, ", "); got != "stage1 p50-over-time, stage1 p95-over-time, stage1 p99-over-time, stage1 throughput-over-time, stage1 errors-over-time, "+
		" drift-vus-2-throughput,  drift-vus-2-error-ratio" {
		t.Errorf("the charts with the incidents: %s", got)
	}
	if got := strings.Join(plain, ", "); got != " latency-percentiles,  latency-distribution, stage2 p50-over-time, stage2 p95-over-time, stage2 p99-over-time, "+
		"stage2 throughput-over-time, stage2 errors-over-time,  latency-percentiles,  latency-distribution,  p95-per-stage,  throughput-per-stage" {
		t.Errorf("the charts without: %s", got)
	}
}

// The verdict's line is green when nothing degraded and nothing happened,
// amber for incidents alone, red when the run degraded, incidents or
// not.
func TestDriftClass(t *testing.T) {
	d := IncidentDrift("s", runtest.T0, 10, [2]float64{2, 4}, [2]float64{6, 8})
	if c := DriftClass(d); c != "warn" {
		t.Errorf("incidents: %s", c)
	}
	d.Degraded = true
	if c := DriftClass(d); c != "fail" {
		t.Errorf("degraded with incidents: %s", c)
	}
	if c := DriftClass(driftFixture()); c != "fail" {
		t.Errorf("degraded: %s", c)
	}
	d.Degraded, d.Incidents = false, nil
	if c := DriftClass(d); c != "ok" {
		t.Errorf("neither: %s", c)
	}
	if c := DriftClass(nil); c != "" {
		t.Errorf("no verdict: %q", c)
	}
}

// An incident's band in an SVG chart (the Markdown report's): amber, its
// sentence said on hover.
func TestIncidentBandSVG(t *testing.T) {
	d := IncidentDrift("s", runtest.T0, 10, [2]float64{2, 4}, [2]float64{6, 8})
	c := Chart{Title: "p95", Series: []Series{{Name: "get", Points: []XY{{0, 1}, {10, 1}}}}, Bands: incidentBands(d, "s")}
	svg := c.SVG()
	if want := `<rect class="band incident" x="165.2" y="32" width="101.2" height="224.0" fill="#ffe08a"><title>incident 1 (stage s): from 2.0 s to 4.0 s`; !strings.Contains(svg, want) {
		t.Errorf("no %q in\n%s", want, svg)
	}
	if len(incidentBands(d, "other")) != 0 || IncidentBandsAt(d)[1].From != float64(runtest.T0.Unix()+6) {
		t.Errorf("bands of another stage %+v; at clock times %+v", incidentBands(d, "other"), IncidentBandsAt(d))
	}
}
