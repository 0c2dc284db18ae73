package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// WriteWindows prints each operation's figures over each window of its
// stage.
func WriteWindows(w io.Writer, ows []judge.OpWindows) error {
	for _, d := range ows {
		fmt.Fprintf(w, "\n%s  %s\n", d.Stage, d.Operation)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\tcount\tmean\tp50\tp95\tp99\tmax\t")
		for _, ws := range d.Windows {
			s := ws.Stats
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", ws.Window, ws.Count, results.Ms(s.Mean), results.Ms(s.P50), results.Ms(s.P95), results.Ms(s.P99), results.Ms(s.Max))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// WriteDrift prints a longevity verdict whole: every series of every
// stage with its sentence, then the verdict and how it was reached.
func WriteDrift(w io.Writer, d *results.Drift) error {
	stage := ""
	for _, s := range d.Series {
		if s.Stage != stage {
			stage = s.Stage
			fmt.Fprintf(w, "\nstage %s\n", stage)
		}
		fmt.Fprintf(w, "  %s%s\n", driftMark(s), s.Sentence)
	}
	if g := d.Generator; g != nil {
		fmt.Fprintf(w, "\nthe load generator, judged apart\n")
		for _, s := range g.Series {
			fmt.Fprintf(w, "  %s%s\n", driftMark(s), s.Sentence)
		}
	}
	fmt.Fprintf(w, "\ndrift over time: %s\n", d.Verdict)
	incidentsText(w, d)
	driftWhy(w, d)
	fmt.Fprintf(w, "method: %s.\n", d.Method)
	return nil
}

// driftMark marks a series' verdict in the terminal: ✗ degraded, ? suspect,
// + improved, ~ settled.
func driftMark(s results.DriftSeries) string {
	switch s.Verdict {
	case results.DriftDegraded:
		return "✗ "
	case results.DriftSuspect:
		return "? "
	case results.DriftImproved:
		return "+ "
	case results.DriftSettled:
		return "~ "
	}
	return "  "
}

// driftWhy writes the hint (what changed, in order) and the generator's
// health, each a line when there is one.
func driftWhy(w io.Writer, d *results.Drift) {
	if d.Hint != "" {
		fmt.Fprintf(w, "what changed, in order: %s\n", d.Hint)
	}
	if g := d.Generator; g != nil {
		fmt.Fprintf(w, "the generator: %s\n", g.Verdict)
	}
}

// driftLine is the verdict in the terminal's tables: one line, the series
// left to perflab drift.
func driftLine(w io.Writer, d *results.Drift) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "\ndrift over time: %s\n", d.Verdict)
	incidentsText(w, d)
	driftWhy(w, d)
}

// driftMarkdown is a long run's verdict in a Markdown report: the verdict,
// each series, how it was reached.
func driftMarkdown(w io.Writer, d *results.Drift, start time.Time) {
	if d == nil {
		return
	}
	head := "No degradation"
	switch {
	case d.Degraded:
		head = "Degraded"
	case len(d.Incidents) > 0:
		head = "Not degraded; incidents above"
	}
	fmt.Fprintf(w, "## Drift over time\n\n**%s.** %s\n\n", head, mdEscape(upperFirst(d.Verdict)))
	tl := Timeline(d, start)
	if d.Hint != "" || len(tl) > 0 {
		fmt.Fprint(w, "What changed, in order:")
		if d.Hint != "" {
			fmt.Fprintf(w, " %s.", mdEscape(d.Hint))
		}
		fmt.Fprint(w, "\n\n")
		for _, e := range tl {
			fmt.Fprintf(w, "- %s\n", mdEscape(e.Text))
		}
		if len(tl) > 0 {
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "| Stage | Series | Start | End | Change | Verdict |\n|---|---|--:|--:|---|---|\n")
	rows := d.Series
	if g := d.Generator; g != nil {
		rows = append(slices.Clone(rows), g.Series...)
	}
	for i, s := range rows {
		name := s.Name
		if i >= len(d.Series) {
			name += " (generator)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(s.Stage), mdEscape(name), mdEscape(driftValue(s, s.Start)), mdEscape(driftValue(s, s.End)),
			mdEscape(driftChange(s)), mdEscape(driftVerdict(s)))
	}
	if g := d.Generator; g != nil {
		fmt.Fprintf(w, "\nThe load generator, judged apart: %s.\n", mdEscape(g.Verdict))
	}
	fmt.Fprintf(w, "\n%s.\n\n", mdEscape(upperFirst(d.Method)))
}

// driftValue writes a level of a series in its unit, "-" for a series
// with nothing measured.
func driftValue(s results.DriftSeries, v float64) string {
	if s.Values == 0 {
		return "-"
	}
	return s.Value(v)
}

// driftChange says where a series changed level, if it did.
func driftChange(s results.DriftSeries) string {
	c := s.Change
	if c == nil || !s.Significant {
		return ""
	}
	return fmt.Sprintf("%s → %s after %.0f s", driftValue(s, c.Before), driftValue(s, c.After), c.AtS)
}

// driftVerdict is a series' verdict in words.
func driftVerdict(s results.DriftSeries) string {
	switch s.Verdict {
	case results.DriftDegraded:
		return "**degraded**"
	case results.DriftSuspect:
		return "suspect (the generator)"
	case results.DriftTooShort:
		return "too short to judge"
	}
	return s.Verdict
}

// driftCharts draws a long run's series over time with the stretches whose
// levels were compared shaded and the change of level marked: every series
// that degraded or improved, and each stage's throughput and error ratio.
func driftCharts(s *results.Summary) []Chart {
	d := s.Drift
	if d == nil {
		return nil
	}
	// Each series' stage's start: its x axis reads as clock times.
	starts := map[string]time.Time{}
	for _, ph := range s.Stages {
		starts[ph.Name] = ph.Start
	}
	var out []Chart
	for _, s := range d.Series {
		if s.Values == 0 || s.Verdict == results.DriftTooShort {
			continue
		}
		if s.Verdict == results.DriftSteady && s.Kind != "throughput" && s.Kind != "errors" {
			continue
		}
		var pts []XY
		for _, p := range s.Points {
			pts = append(pts, XY{p[0], p[1]})
		}
		step := s.SpanS / float64(s.Values)
		first, last := d.FirstS, d.LastS
		tenth := float64(max(3, (s.Values+9)/10)) * step
		if first == 0 {
			first = tenth
		}
		if last == 0 {
			last = tenth
		}
		t0 := 0.0
		if len(pts) > 0 {
			t0 = pts[0].X
		}
		end := t0 + s.SpanS
		c := Chart{Slug: "drift-" + slug(s.Stage+"-"+s.Name), Title: fmt.Sprintf("%s: %s (%s)", s.Stage, s.Name, strings.ReplaceAll(s.Verdict, "_", " ")),
			XLabel: "seconds into the stage", XKind: XSeconds, Start: starts[s.Stage], RobustY: s.Kind == "latency", YLabel: s.Unit, YUnit: s.Unit, Series: []Series{{Name: s.Name, Points: pts}},
			Bands: append([]Band{{From: t0, To: math.Min(t0+first, end), Label: "start"}, {From: math.Max(end-last, t0), To: end, Label: "end"}}, incidentBands(d, s.Stage)...)}
		if ch := s.Change; ch != nil && s.Significant {
			c.Marks = []Mark{{X: ch.AtS, Label: "change"}}
		}
		out = append(out, c)
	}
	return out
}

// slug makes a name safe for a file name.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
