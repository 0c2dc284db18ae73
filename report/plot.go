package report

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strconv"
)

// The interactive charts: a Chart as charts.js draws it with uPlot, in the
// HTML report (assets and data inline: one file that opens offline) and in
// perflab serve's run page (the same files, served). The SVG renderer
// (svg.go) stays for the Markdown report's image files.

//go:embed assets
var assets embed.FS

// Assets are the charts' script and styles, and uPlot's (with its
// licence): charts.js, charts.css, uPlot.iife.min.js, uPlot.min.css,
// uPlot.LICENSE.
func Assets() fs.FS {
	sub, _ := fs.Sub(assets, "assets")
	return sub
}

// MaxBuckets is the most x values a chart's data holds: a series with
// more points is downsampled into this many buckets of equal width, each
// its mean (or median) with its min and max. It is about the plot's width
// in pixels on a wide screen: a 72-hour run's 25,920 intervals are 1,500
// buckets of 173 s, each of 17 or 18 intervals.
const MaxBuckets = 1500

// The kinds of x axis a Chart has (XKind).
const (
	XSeconds = "seconds" // seconds into the stage: clock times from the stage's start (Plot.T0), else durations
	XNines   = "nines"   // 1/(1-p) on a log scale, labelled as percentiles
	XLog     = "log"     // a value on a log scale (latency in ms)
	XStages  = "stages"  // stages 1..n, labelled with their names
	XTime    = "time"    // Unix seconds, labelled as clock times
)

// Plot is a chart's data as charts.js reads it (JSON): an x column and
// the series' columns, aligned (null where a series has no value at an
// x), and how to draw them.
type Plot struct {
	Slug   string   `json:"slug"`
	Title  string   `json:"title"`
	X      string   `json:"x,omitempty"`
	XLabel string   `json:"xLabel"`
	XUnit  string   `json:"xUnit,omitempty"`
	YLabel string   `json:"yLabel"`
	YUnit  string   `json:"yUnit,omitempty"`
	Names  []string `json:"names,omitempty"`
	// Sync names the charts whose cursors move together (a stage's over
	// time).
	Sync string `json:"sync,omitempty"`
	// T0 is the Unix time (seconds, to the millisecond) of x = 0 of a
	// chart over a stage (the stage's start): its x axis reads as clock
	// times, t0 + x, its tooltip says the time into the stage, x.
	T0 float64 `json:"t0,omitempty"`
	// RobustY: a latency chart, whose y axis goes by default up to 1.5
	// times the greatest of its series' 95th percentiles in view (unless
	// the max is near), the points above it marked at the top edge and
	// counted; toggles give the full range and a log scale.
	RobustY bool `json:"robustY,omitempty"`
	// Bucketed says how the data was downsampled, empty when it was not.
	Bucketed string       `json:"bucketed,omitempty"`
	Data     []Column     `json:"data"`
	Series   []PlotSeries `json:"series"`
	Bands    []Band       `json:"bands,omitempty"`
	Marks    []Mark       `json:"marks,omitempty"`
}

// PlotSeries is a line of a Plot: its columns in Data (Y; Min and Max
// when it was downsampled, drawn as a band; Partial its partial
// intervals' points).
type PlotSeries struct {
	Name    string `json:"name"`
	Color   string `json:"color"`
	Y       int    `json:"y"`
	Min     *int   `json:"min,omitempty"`
	Max     *int   `json:"max,omitempty"`
	Partial *int   `json:"partial,omitempty"`
	Dash    bool   `json:"dash,omitempty"`
	Step    bool   `json:"step,omitempty"`
	Points  bool   `json:"points,omitempty"`
}

// Column is a column of a Plot's data: NaN is null (no value there), and
// the numbers are written with Digits significant digits (7 for x: a
// 72-hour stage to the tenth of a second; 5 for values).
type Column struct {
	V      []float64
	Digits int
}

// MarshalJSON writes the column as an array of numbers and nulls.
func (c Column) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 8*len(c.V)+2)
	b = append(b, '[')
	for i, v := range c.V {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'g', c.Digits, 64)
	}
	return append(b, ']'), nil
}

// Plots are the charts of a page, in the order they are placed.
type Plots []Plot

// Place adds a chart to the page's and returns its placeholder, where
// charts.js draws it: <div class="plot" data-plot="N">.
func (ps *Plots) Place(c Chart) template.HTML {
	*ps = append(*ps, c.Plot())
	n := len(*ps) - 1
	return template.HTML(fmt.Sprintf(`<div class="plot" data-plot="%d" id="%s"></div>`, n, ps.ID(n)))
}

// ID is the id of the placeholder of the n-th chart placed (from 0).
func (ps Plots) ID(n int) string {
	return fmt.Sprintf("plot-%d-%s", n, slug(ps[n].Slug))
}

// Data is the charts' data, for the page's
// <script type="application/json" class="perflab-plots"> (charts.js reads
// it there). json.Marshal escapes <, > and &: no name ends the script.
func (ps Plots) Data() (template.JS, error) {
	if ps == nil {
		ps = Plots{}
	}
	b, err := json.Marshal(ps)
	return template.JS(b), err
}

// UnmarshalJSON reads a column back, null as NaN.
func (c *Column) UnmarshalJSON(b []byte) error {
	var vs []*float64
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	c.V = make([]float64, len(vs))
	for i, v := range vs {
		c.V[i] = math.NaN()
		if v != nil {
			c.V[i] = *v
		}
	}
	return nil
}

// Plot turns the chart into charts.js's data: its series aligned on one x
// column, downsampled to MaxBuckets when they have more x values.
func (c Chart) Plot() Plot {
	p := Plot{Slug: c.Slug, Title: c.Title, X: c.XKind, XLabel: c.XLabel, XUnit: c.XUnit, YLabel: c.YLabel, YUnit: c.YUnit,
		Names: c.XNames, Sync: c.Sync, Bands: c.Bands, Marks: c.Marks, Series: []PlotSeries{}, RobustY: c.RobustY}
	if c.XKind == XSeconds {
		p.XLabel = "time into the stage" // written as durations, not seconds
		if !c.Start.IsZero() {
			p.XLabel = "clock time" // t0 + x; the zone is charts.js's choice
			p.T0 = float64(c.Start.UnixMilli()) / 1000
		}
	}
	valid := func(pt XY) bool {
		return !math.IsNaN(pt.X) && !math.IsInf(pt.X, 0) && !((c.XKind == XNines || c.XKind == XLog) && pt.X <= 0)
	}
	// The series' points, valid and in x order.
	lines := make([][]XY, len(c.Series))
	partials := make([][]XY, len(c.Series))
	var xs []float64
	for i, s := range c.Series {
		for _, pt := range s.Points {
			if valid(pt) {
				lines[i] = append(lines[i], pt)
				xs = append(xs, pt.X)
			}
		}
		for _, pt := range s.Partial {
			if valid(pt) {
				partials[i] = append(partials[i], pt)
			}
		}
		sort.SliceStable(lines[i], func(a, b int) bool { return lines[i][a].X < lines[i][b].X })
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	bucketed := len(xs) > MaxBuckets && !c.Bars
	var b bucketer
	if bucketed {
		b = bucketer{lo: xs[0], hi: xs[len(xs)-1], n: MaxBuckets}
		xs = xs[:0]
		for i := range b.n {
			xs = append(xs, b.centre(i))
		}
		agg := "mean"
		if c.Median {
			agg = "median"
		}
		p.Bucketed = strconv.Itoa(len(c.Series)) + " series downsampled into " + strconv.Itoa(b.n) + " buckets: the line is each bucket's " + agg + ", the band its min to max"
	}
	for _, ps := range partials {
		for _, pt := range ps {
			xs = append(xs, pt.X)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	at := make(map[float64]int, len(xs))
	for i, x := range xs {
		at[x] = i
	}
	p.Data = append(p.Data, Column{V: xs, Digits: 7})
	col := func() []float64 {
		v := make([]float64, len(xs))
		for i := range v {
			v[i] = math.NaN()
		}
		return v
	}
	add := func(v []float64) *int {
		p.Data = append(p.Data, Column{V: v, Digits: 5})
		i := len(p.Data) - 1
		return &i
	}
	for i, s := range c.Series {
		ps := PlotSeries{Name: s.Name, Color: s.Color, Dash: s.Dashed, Step: c.Step, Points: c.Bars || len(lines[i]) == 1}
		if ps.Color == "" {
			ps.Color = palette[i%len(palette)]
		}
		y := col()
		if bucketed {
			lo, hi := col(), col()
			spread := false
			for _, bk := range b.buckets(lines[i], c.Median) {
				j := at[b.centre(bk.i)]
				y[j], lo[j], hi[j] = bk.value, bk.min, bk.max
				spread = spread || bk.min != bk.max
			}
			ps.Y = *add(y)
			if spread {
				ps.Min, ps.Max = add(lo), add(hi)
			}
		} else {
			for _, pt := range lines[i] {
				y[at[pt.X]] = pt.Y
			}
			ps.Y = *add(y)
		}
		if len(partials[i]) > 0 {
			v := col()
			for _, pt := range partials[i] {
				v[at[pt.X]] = pt.Y
			}
			ps.Partial = add(v)
		}
		p.Series = append(p.Series, ps)
	}
	return p
}

// bucketer cuts [lo, hi] into n buckets of equal width.
type bucketer struct {
	lo, hi float64
	n      int
}

func (b bucketer) width() float64 { return (b.hi - b.lo) / float64(b.n) }

func (b bucketer) centre(i int) float64 { return b.lo + (float64(i)+0.5)*b.width() }

func (b bucketer) index(x float64) int {
	return min(b.n-1, max(0, int((x-b.lo)/b.width())))
}

// bucket is a bucket's figures: the mean (or median) of its values, its
// least and its greatest.
type bucket struct {
	i               int
	value, min, max float64
}

// buckets are a line's buckets (those with values; its points in x
// order). NaN values are left out: a bucket of none has no figures.
func (b bucketer) buckets(pts []XY, median bool) []bucket {
	var out []bucket
	var vals []float64
	flush := func(i int) {
		if len(vals) == 0 {
			return
		}
		bk := bucket{i: i, min: math.Inf(1), max: math.Inf(-1)}
		sum := 0.0
		for _, v := range vals {
			bk.min, bk.max = math.Min(bk.min, v), math.Max(bk.max, v)
			sum += v
		}
		bk.value = sum / float64(len(vals))
		if median {
			slices.Sort(vals)
			m := len(vals) / 2
			bk.value = vals[m]
			if len(vals)%2 == 0 {
				bk.value = (vals[m-1] + vals[m]) / 2
			}
		}
		out = append(out, bk)
		vals = vals[:0]
	}
	cur := -1
	for _, pt := range pts {
		i := b.index(pt.X)
		if i != cur {
			flush(cur)
			cur = i
		}
		if !math.IsNaN(pt.Y) && !math.IsInf(pt.Y, 0) {
			vals = append(vals, pt.Y)
		}
	}
	flush(cur)
	return out
}
