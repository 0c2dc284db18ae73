package report

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/results"
)

// A drift verdict's incidents (results.Drift.Incidents: changes that did
// not last) where a reader looks: an amber box at the top of the HTML
// report and of the web UI's run page, a table near the top of the
// Markdown report, a line each under the terminal's verdict, a shaded
// amber band on each chart over the time of the incident's stage, and an
// entry in the drift's timeline.

// BandIncident is the Kind of a Band that is an incident: drawn amber,
// its Text said on hover.
const BandIncident = "incident"

// IncidentView is an incident as the reports write it.
type IncidentView struct {
	// N numbers the incidents of a run from 1, first to last: "incident
	// 2" in the box, on the charts' bands and in the timeline; ID is its
	// element's id in the HTML report.
	N     int
	ID    string
	Stage string
	// From and To are its start and end in time into the run ("24.0 s",
	// "1 h 05 m"), Clock the same by the clock ("10:00:24 to 10:00:36
	// UTC"), Length its duration.
	From, To, Clock, Length string
	Ongoing                 bool
	// Effects say each series' level during it against its baseline, its
	// worst value, its failures and their most frequent message.
	Effects []string
	Suspect string
	// Sentence is the verdict's sentence of it.
	Sentence string
}

// Incidents are a drift verdict's incidents as the reports write them,
// first to last; none for no verdict.
func Incidents(d *results.Drift) []IncidentView {
	if d == nil {
		return nil
	}
	out := make([]IncidentView, 0, len(d.Incidents))
	for i, inc := range d.Incidents {
		v := IncidentView{N: i + 1, ID: fmt.Sprintf("incident-%d", i+1), Stage: inc.Stage, Ongoing: inc.Ongoing, Suspect: inc.Suspect, Sentence: inc.Sentence,
			From: elapsedText(inc.Elapsed), To: elapsedText(inc.Elapsed + inc.EndS - inc.StartS), Length: elapsedText(inc.EndS - inc.StartS),
			Clock: inc.Start.UTC().Format("15:04:05") + " to " + inc.End.UTC().Format("15:04:05") + " UTC"}
		for _, e := range inc.Effects {
			v.Effects = append(v.Effects, effectText(e, inc.Ongoing))
		}
		out = append(out, v)
	}
	return out
}

// suspects are the incidents the generator's host could explain (suspect),
// or those it could not.
func suspects(v []IncidentView, suspect bool) []IncidentView {
	var out []IncidentView
	for _, inc := range v {
		if (inc.Suspect != "") == suspect {
			out = append(out, inc)
		}
	}
	return out
}

// effectText says one series' part in an incident: "error ratio of GET b:
// 33.33% (worst 50.00%) against 0.00% around it; 1200 failures, most
// often: HTTP 503 Service Unavailable".
func effectText(e results.IncidentEffect, ongoing bool) string {
	v := results.DriftSeries{Unit: e.Unit}.Value
	s := e.Series + ": " + v(e.Level)
	if e.Peak != e.Level {
		s += " (worst " + v(e.Peak) + ")"
	}
	around := "around it"
	if ongoing {
		around = "before it"
	}
	s += " against " + v(e.Baseline) + " " + around
	if e.Failures > 0 {
		s += fmt.Sprintf("; %d failures", e.Failures)
		if e.Message != "" {
			s += ", most often: " + e.Message
		}
	}
	return s
}

// When is an incident's time: "from 24.0 s to 36.0 s into the run
// (10:00:24 to 10:00:36 UTC), 12.0 s", or to the end of its stage.
func (v IncidentView) When() string {
	to := "to " + v.To
	if v.Ongoing {
		to = "to the end of the stage, " + v.To
	}
	return fmt.Sprintf("from %s %s into the run (%s), %s", v.From, to, v.Clock, v.Length)
}

// elapsedText writes seconds into a run as the verdict's sentences do:
// "24.0 s", "9 m 41 s", "2 h 05 m".
func elapsedText(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Minute {
		return fmt.Sprintf("%.1f s", s)
	}
	if d < time.Hour {
		d = d.Round(time.Second)
		return fmt.Sprintf("%d m %02d s", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%d h %02d m", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// DriftClass is the class of a drift verdict's line: "fail" (red) when
// the run degraded, "warn" (amber) when it did not but had incidents,
// "ok" (green) when neither.
func DriftClass(d *results.Drift) string {
	switch {
	case d == nil:
		return ""
	case d.Degraded:
		return "fail"
	case len(d.Incidents) > 0:
		return "warn"
	}
	return "ok"
}

// incidentBand is incident n (from 1) as a band from x to y.
func incidentBand(n int, inc results.Incident, from, to float64) Band {
	return Band{From: from, To: to, Label: fmt.Sprintf("incident %d", n), Kind: BandIncident,
		Text: fmt.Sprintf("incident %d (stage %s): %s", n, inc.Stage, inc.Sentence)}
}

// incidentBands are the bands of a stage's incidents on a chart whose x
// is seconds into that stage.
func incidentBands(d *results.Drift, stage string) []Band {
	var out []Band
	if d == nil {
		return nil
	}
	for i, inc := range d.Incidents {
		if inc.Stage == stage {
			out = append(out, incidentBand(i+1, inc, inc.StartS, inc.EndS))
		}
	}
	return out
}

// IncidentBandsAt are a run's incidents as bands on a chart whose x is
// Unix seconds (the web UI's live charts of the whole run).
func IncidentBandsAt(d *results.Drift) []Band {
	var out []Band
	if d == nil {
		return nil
	}
	for i, inc := range d.Incidents {
		out = append(out, incidentBand(i+1, inc, float64(inc.Start.UnixMilli())/1000, float64(inc.End.UnixMilli())/1000))
	}
	return out
}

// withIncidents gives each chart over a stage's time (those whose
// cursors move with the stage's) the bands of the stage's incidents.
func withIncidents(cs []Chart, d *results.Drift, stage string) {
	bands := incidentBands(d, stage)
	if len(bands) == 0 {
		return
	}
	for i := range cs {
		if cs[i].XKind == XSeconds && cs[i].Sync != "" {
			cs[i].Bands = append(cs[i].Bands, bands...)
		}
	}
}

// IncidentBox is the amber box of a run's incidents, every one of them,
// at the top of the HTML report and of the web UI's pages: empty when the
// run had none.
func IncidentBox(d *results.Drift) template.HTML {
	vs := Incidents(d)
	if len(vs) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := htmlTmpl.ExecuteTemplate(&b, "incidents", vs); err != nil {
		return template.HTML(template.HTMLEscapeString(err.Error()))
	}
	return template.HTML(b.String())
}

// incidentsText writes each incident on a line of its own: "incident 1:
// <its sentence>".
func incidentsText(w io.Writer, d *results.Drift) {
	for _, v := range Incidents(d) {
		fmt.Fprintf(w, "incident %d: %s\n", v.N, v.Sentence)
	}
}

// incidentsMarkdown is the Markdown report's table of a run's incidents,
// near its top.
func incidentsMarkdown(w io.Writer, d *results.Drift) {
	vs := Incidents(d)
	if len(vs) == 0 {
		return
	}
	word := "incidents"
	if len(vs) == 1 {
		word = "incident"
	}
	fmt.Fprintf(w, "## Incidents\n\n%d %s: changes that did not last, each shaded on its stage's charts.\n\n| # | Stage | Start | End | Duration | Effects | Suspect |\n|--:|---|---|---|--:|---|---|\n", len(vs), word)
	for _, v := range vs {
		inc := d.Incidents[v.N-1]
		end := v.To + " (" + inc.End.UTC().Format("15:04:05") + ")"
		if v.Ongoing {
			end += ", the stage's end"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", v.N, mdEscape(v.Stage), mdEscape(v.From+" ("+inc.Start.UTC().Format("15:04:05")+")"), mdEscape(end),
			mdEscape(v.Length), mdEscape(strings.Join(v.Effects, "; ")), mdEscape(v.Suspect))
	}
	fmt.Fprintln(w, "\nTimes are into the run, clock times UTC.")
	fmt.Fprintln(w)
}

// TimelineEntry is an entry of the drift's timeline as the reports write
// it: a series' change, or an incident (Incident its number), in time
// into the run.
type TimelineEntry struct {
	Elapsed  float64
	Text     string
	Incident int
	ID       string
}

// Timeline lines up a drift verdict's changes (Drift.Timeline) and its
// incidents, first to last: "at 30.0 s (10:00:30 UTC): throughput 100/s →
// 20/s (degraded)", "from 24.0 s to 36.0 s (...): incident 1: ...".
// runStart is the start of the run's first stage, whence the verdict's
// times into the run (DriftStart).
func Timeline(d *results.Drift, runStart time.Time) []TimelineEntry {
	if d == nil {
		return nil
	}
	var out []TimelineEntry
	for _, e := range d.Timeline {
		v := results.DriftSeries{Unit: e.Unit}.Value
		who := e.Series
		if e.Generator {
			who += " (generator)"
		}
		what := fmt.Sprintf("%s %s → %s (%s)", who, v(e.Before), v(e.After), e.Verdict)
		at := runStart.Add(time.Duration(e.Elapsed * float64(time.Second))).UTC().Format("15:04:05")
		text := fmt.Sprintf("at %s (%s UTC): %s", elapsedText(e.Elapsed), at, what)
		if e.Trend {
			text = fmt.Sprintf("from %s (%s UTC), a trend over stage %s: %s", elapsedText(e.Elapsed), at, e.Stage, what)
		}
		out = append(out, TimelineEntry{Elapsed: e.Elapsed, Text: text})
	}
	for _, v := range Incidents(d) {
		effects := strings.Join(v.Effects, "; ")
		out = append(out, TimelineEntry{Elapsed: d.Incidents[v.N-1].Elapsed, Incident: v.N, ID: v.ID,
			Text: fmt.Sprintf("%s: incident %d, stage %s: %s", upperFirst(v.When()), v.N, v.Stage, effects)})
	}
	slices.SortStableFunc(out, func(a, b TimelineEntry) int { return cmp.Compare(a.Elapsed, b.Elapsed) })
	return out
}

// DriftStart is where a drift verdict's times into the run count from:
// the start of its first stage.
func DriftStart(s *results.Summary) time.Time {
	if len(s.Stages) == 0 {
		return s.Start
	}
	return s.Stages[0].Start
}
