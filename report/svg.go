package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"
)

// A small SVG chart renderer: the HTML report must open offline, so charts
// are drawn here as inline SVG, not by a script from a CDN.

// XY is a point of a series.
type XY struct{ X, Y float64 }

// Series is a named line. Partial are its points of partial intervals
// (cut short by their stage's end), drawn as open circles apart from the
// line: a line through them would drop or spike where only the load's end
// did.
type Series struct {
	Name    string
	Points  []XY
	Dashed  bool
	Partial []XY
	// Color, if set, is the series' colour instead of the palette's
	// (an operation's failed requests in its successful ones' colour).
	Color string
}

// Chart describes a line chart.
type Chart struct {
	// Slug names the chart's file when it is saved on its own.
	Slug                  string
	Title, XLabel, YLabel string
	Series                []Series
	// LogX draws the x axis on a log scale (for percentile plots).
	LogX bool
	// XTicks, if set, labels the x axis at these values instead of evenly.
	XTicks []XY // X is the value, Y is unused; label from XTickLabel
	// XTickLabel formats an x value (default %g).
	XTickLabel func(float64) string
	// Bars draws grouped bars at whole x values 1..n (stages) instead of
	// lines.
	Bars bool
	// Bands shade ranges of x (the stretches a drift verdict compares),
	// Marks draw a vertical line at x (where a level changed), each with
	// its label.
	Bands []Band
	Marks []Mark
	// XKind is the x axis of the interactive chart (XSeconds, XNines,
	// XLog, XStages, XTime; empty: linear), XNames the stages' names for
	// XStages; XUnit and YUnit are the values' units in its tooltips.
	XKind        string
	XNames       []string
	XUnit, YUnit string
	// Sync names the charts whose cursors move together.
	Sync string
	// Median makes a downsampled bucket's line its median (latency
	// percentiles: one slow interval shows in the band, not the line);
	// else its mean (rates: the bucket's average rate).
	Median bool
	// Step draws the lines as steps (a histogram's bins).
	Step bool
	// Start is when x = 0 is, for a chart over a stage's time (XSeconds:
	// seconds into the stage): the interactive chart labels its x axis
	// with clock times from it, the time into the stage in its tooltip.
	Start time.Time
	// RobustY marks a latency chart over time: the interactive chart's y
	// axis goes up to a robust range by default (its points above marked
	// at the top edge and counted), with toggles to the full range and to
	// a log scale.
	RobustY bool
}

// Band is a shaded range of a chart's x axis.
type Band struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Label string  `json:"label"`
	// Kind is BandIncident for an incident (drawn amber, over the
	// compared stretches), empty for a stretch a drift verdict compares;
	// Text says the band on hover.
	Kind string `json:"kind,omitempty"`
	Text string `json:"text,omitempty"`
}

// Mark is a vertical line across a chart at X.
type Mark struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	chartW, chartH         = 720, 300
	padL, padR, padT, padB = 64, 150, 32, 44
)

// chartCSS styles the charts, in the HTML page and in standalone files.
const chartCSS = `svg .title { font-weight: 600; font-size: 13px; } svg .tick, svg .legend { font-size: 11px; fill: #444; } svg .label { font-size: 12px; fill: #333; }
svg .axis line { stroke: #333; } svg .grid { stroke: #e4e4e4; } svg .empty { fill: #888; }`

// File renders the chart as a standalone SVG file, with its styles and a
// white background, for a Markdown page or a wiki to show beside its tables.
func (c Chart) File() string {
	svg := c.SVG()
	open := strings.IndexByte(svg, '>') + 1
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + strings.Replace(svg[:open], "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1) +
		"<style>" + chartCSS + `</style><rect width="100%" height="100%" fill="white"/>` + svg[open:] + "\n"
}

// SVG renders the chart.
func (c Chart) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, html.EscapeString(c.Title))
	fmt.Fprintf(&b, `<text x="%d" y="18" class="title">%s</text>`, padL, html.EscapeString(c.Title))
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	tx := func(x float64) float64 {
		if c.LogX {
			return math.Log10(x)
		}
		return x
	}
	n := 0
	for _, s := range c.Series {
		for _, p := range slices.Concat(s.Points, s.Partial) {
			if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) || c.LogX && p.X <= 0 {
				continue
			}
			xmin, xmax = math.Min(xmin, tx(p.X)), math.Max(xmax, tx(p.X))
			ymax = math.Max(ymax, p.Y)
			n++
		}
	}
	if n == 0 {
		b.WriteString(`<text x="360" y="150" text-anchor="middle" class="empty">no data</text></svg>`)
		return b.String()
	}
	if c.Bars {
		xmin, xmax = 0.5, math.Round(xmax)+0.5
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	ymax = niceCeil(ymax)
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	sx := func(x float64) float64 { return float64(padL) + (tx(x)-xmin)/(xmax-xmin)*pw }
	sy := func(y float64) float64 { return float64(padT) + ph - y/ymax*ph }
	// Axes and grid.
	fmt.Fprintf(&b, `<g class="axis"><line x1="%d" y1="%d" x2="%d" y2="%d"/><line x1="%d" y1="%d" x2="%d" y2="%d"/></g>`,
		padL, padT, padL, chartH-padB, padL, chartH-padB, chartW-padR, chartH-padB)
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%.1f" x2="%d" y2="%.1f"/><text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, sy(y), chartW-padR, sy(y), padL-6, sy(y)+4, short(y))
	}
	label := c.XTickLabel
	if label == nil {
		label = short
	}
	if len(c.XTicks) > 0 {
		for _, t := range c.XTicks {
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, sx(t.X), chartH-padB+16, html.EscapeString(label(t.X)))
		}
	} else {
		for i := 0; i <= 4; i++ {
			xv := xmin + (xmax-xmin)*float64(i)/4
			if c.LogX {
				xv = math.Pow(10, xv)
			}
			fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, sx(xv), chartH-padB+16, html.EscapeString(label(xv)))
		}
	}
	fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%d" text-anchor="middle">%s</text>`, float64(padL)+pw/2, chartH-6, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text class="label" transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, float64(padT)+ph/2, html.EscapeString(c.YLabel))
	// Bands and marks, under the lines.
	inside := func(x float64) float64 { return math.Max(float64(padL), math.Min(float64(chartW-padR), sx(x))) }
	for _, band := range c.Bands {
		x0, x1 := inside(band.From), inside(band.To)
		if x1 <= x0 {
			continue
		}
		class, fill, title := "band", "#eef3fa", band.Label
		if band.Kind == BandIncident { // amber, said in full on hover
			class, fill, title = "band incident", "#ffe08a", band.Text
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%d" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect><text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`,
			class, x0, padT, x1-x0, ph, fill, html.EscapeString(title), (x0+x1)/2, padT+12, html.EscapeString(band.Label))
	}
	for _, m := range c.Marks {
		x := inside(m.X)
		fmt.Fprintf(&b, `<line class="mark" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#b00" stroke-width="1.5" stroke-dasharray="4 3"><title>%s</title></line><text class="tick" x="%.1f" y="%d">%s</text>`,
			x, padT, x, chartH-padB, html.EscapeString(m.Label), x+4, padT+24, html.EscapeString(m.Label))
	}
	// Lines and legend.
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		if s.Color != "" {
			color = s.Color
		}
		var px []XY
		for _, p := range s.Points {
			if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) || c.LogX && p.X <= 0 {
				continue
			}
			px = append(px, XY{sx(p.X), sy(p.Y)})
		}
		var pts []string
		for _, p := range m4(px) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.X, p.Y))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		if c.Bars {
			group := pw / (xmax - xmin) * 0.8
			bw := group / float64(len(c.Series))
			for _, p := range s.Points {
				if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
					continue
				}
				x := sx(p.X) - group/2 + float64(i)*bw
				fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
					x, sy(p.Y), math.Max(bw-1, 1), sy(0)-sy(p.Y), color, html.EscapeString(s.Name), short(p.Y))
			}
			ly := padT + 14 + 18*i
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="20" height="8" fill="%s"/><text class="legend" x="%d" y="%d">%s</text>`,
				chartW-padR+10, ly-8, color, chartW-padR+36, ly, html.EscapeString(trim(s.Name, 16)))
			continue
		}
		fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`, color, dash, strings.Join(pts, " "), html.EscapeString(s.Name))
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%s" r="3" fill="%s"/>`, strings.Replace(pts[0], ",", `" cy="`, 1), color)
		}
		for _, p := range s.Partial {
			if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) || c.LogX && p.X <= 0 {
				continue
			}
			fmt.Fprintf(&b, `<circle class="partial" cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s" stroke-width="1.5"><title>%s: %s, a partial interval</title></circle>`,
				sx(p.X), sy(p.Y), color, html.EscapeString(s.Name), short(p.Y))
		}
		ly := padT + 14 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text class="legend" x="%d" y="%d">%s</text>`,
			chartW-padR+10, ly-4, chartW-padR+30, ly-4, color, dash, chartW-padR+36, ly, html.EscapeString(trim(s.Name, 16)))
	}
	if slices.ContainsFunc(c.Series, func(s Series) bool { return len(s.Partial) > 0 }) {
		ly := padT + 14 + 18*len(c.Series)
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="3.5" fill="white" stroke="#444" stroke-width="1.5"/><text class="legend" x="%d" y="%d">partial interval</text>`,
			chartW-padR+20, ly-4, chartW-padR+36, ly)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func short(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

func trim(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// m4 thins a line's points, in pixels and in x order, to those that draw
// it at that resolution: of each pixel column's run of points its first,
// its lowest, its highest and its last (the M4 aggregation of Jugel et
// al., VLDB 2014). A day of 10 s intervals is 8,640 points across some
// 560 pixels; the line drawn from what is kept is the same line.
func m4(px []XY) []XY {
	if len(px) <= 4 {
		return px
	}
	out := make([]XY, 0, min(len(px), 2048))
	for i := 0; i < len(px); {
		col := math.Floor(px[i].X)
		j, lo, hi := i, i, i
		for j < len(px) && math.Floor(px[j].X) == col {
			if px[j].Y < px[lo].Y {
				lo = j
			}
			if px[j].Y > px[hi].Y {
				hi = j
			}
			j++
		}
		last := j - 1
		keep := []int{i, lo, hi, last}
		slices.Sort(keep)
		for k, idx := range keep {
			if k == 0 || idx != keep[k-1] {
				out = append(out, px[idx])
			}
		}
		i = j
	}
	return out
}
