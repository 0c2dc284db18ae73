package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A small SVG chart renderer: the HTML report must open offline, so charts
// are drawn here as inline SVG, not by a script from a CDN.

// XY is a point of a series.
type XY struct{ X, Y float64 }

// Series is a named line.
type Series struct {
	Name   string
	Points []XY
	Dashed bool
}

// Chart describes a line chart.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// LogX draws the x axis on a log scale (for percentile plots).
	LogX bool
	// XTicks, if set, labels the x axis at these values instead of evenly.
	XTicks []XY // X is the value, Y is unused; label from XTickLabel
	// XTickLabel formats an x value (default %g).
	XTickLabel func(float64) string
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	chartW, chartH         = 720, 300
	padL, padR, padT, padB = 64, 150, 32, 44
)

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
		for _, p := range s.Points {
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
	// Lines and legend.
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		var pts []string
		for _, p := range s.Points {
			if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) || c.LogX && p.X <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx(p.X), sy(p.Y)))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b, `<polyline class="series" fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`, color, dash, strings.Join(pts, " "), html.EscapeString(s.Name))
		if len(pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%s" r="3" fill="%s"/>`, strings.Replace(pts[0], ",", `" cy="`, 1), color)
		}
		ly := padT + 14 + 18*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text class="legend" x="%d" y="%d">%s</text>`,
			chartW-padR+10, ly-4, chartW-padR+30, ly-4, color, dash, chartW-padR+36, ly, html.EscapeString(trim(s.Name, 16)))
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
