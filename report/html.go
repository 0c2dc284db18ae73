package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"runtime"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// WriteHTML writes a self-contained HTML report of a run: tables, and charts
// drawn as inline SVG (no script, no CDN: it opens offline and user data is
// escaped). It needs the run's interval histograms for the charts over time.
func WriteHTML(w io.Writer, rd *RunData) error {
	s := rd.Summary
	page := htmlPage{S: s, Generated: time.Now().UTC().Format(time.RFC3339)}
	for _, ph := range s.Stages {
		hs := htmlStage{P: ph}
		// Each operation's intervals are decoded on their own goroutine:
		// a long run has thousands per operation.
		type opSeries struct {
			name            string
			p95, rps, curve []XY
			err             error
		}
		var jobs []*opSeries
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario {
				continue
			}
			ivs := rd.Intervals[Tag(fmt.Sprintf("s%d", ph.Index), metrics.Op{Scenario: op.Scenario, Name: op.Name})]
			if len(ivs) == 0 {
				continue
			}
			j := &opSeries{name: op.Name}
			jobs = append(jobs, j)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				start := ph.Start.UnixMilli()
				merged := metrics.NewHistogram()
				for _, iv := range ivs {
					h, err := iv.Histogram()
					if err != nil {
						j.err = err
						return
					}
					x := float64(iv.StartMs-start) / 1000
					if secs := float64(iv.EndMs-iv.StartMs) / 1000; secs > 0 {
						j.rps = append(j.rps, XY{x, float64(h.TotalCount()) / secs})
					}
					if h.TotalCount() > 0 {
						j.p95 = append(j.p95, XY{x, float64(h.ValueAtPercentile(95)) / 1e3})
					}
					h.MergeInto(merged)
				}
				j.curve = percentileCurve(merged)
			}()
		}
		wg.Wait()
		var latency, rate, dist []Series
		for _, j := range jobs {
			if j.err != nil {
				return j.err
			}
			latency = append(latency, Series{Name: j.name, Points: j.p95})
			rate = append(rate, Series{Name: j.name, Points: j.rps})
			dist = append(dist, Series{Name: j.name, Points: j.curve})
		}
		nines := []XY{{X: 2}, {X: 10}, {X: 100}, {X: 1000}, {X: 10000}}
		hs.Charts = []template.HTML{
			template.HTML(Chart{Title: "p95 latency over time", XLabel: "seconds into the stage", YLabel: "ms", Series: latency}.SVG()),
			template.HTML(Chart{Title: "Successful operations per second over time", XLabel: "seconds into the stage", YLabel: "per second", Series: rate}.SVG()),
			template.HTML(Chart{Title: "Latency by percentile (HDR)", XLabel: "percentile", YLabel: "ms", Series: dist, LogX: true, XTicks: nines,
				XTickLabel: func(x float64) string { return fmt.Sprintf("%g%%", 100*(1-1/x)) }}.SVG()),
		}
		page.Stages = append(page.Stages, hs)
	}
	if len(s.Stages) > 1 {
		page.Across = template.HTML(acrossChart(s).SVG())
	}
	if sc := s.Scaling; sc != nil {
		page.Scaling = scalingCharts(sc)
	}
	return htmlTmpl.Execute(w, page)
}

type htmlPage struct {
	S         *Summary
	Generated string
	Stages    []htmlStage
	Across    template.HTML
	Scaling   []template.HTML
}

type htmlStage struct {
	P      PhaseSummary
	Charts []template.HTML
}

// percentileCurve is the HDR percentile plot: latency against 1/(1-p).
func percentileCurve(h *hdr.Histogram) []XY {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var out []XY
	for _, p := range []float64{0, 25, 50, 60, 70, 75, 80, 85, 90, 92.5, 95, 96, 97, 98, 99, 99.5, 99.9, 99.95, 99.99} {
		out = append(out, XY{1 / (1 - p/100), float64(h.ValueAtPercentile(p)) / 1e3})
	}
	return out
}

// acrossChart draws each operation's p95 across the stages.
func acrossChart(s *Summary) Chart {
	var series []Series
	idx := map[string]int{}
	for i, ph := range s.Stages {
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario || op.Count == 0 {
				continue
			}
			j, ok := idx[op.Name]
			if !ok {
				j = len(series)
				idx[op.Name] = j
				series = append(series, Series{Name: op.Name})
			}
			series[j].Points = append(series[j].Points, XY{float64(i + 1), op.Latency.P95})
		}
	}
	var ticks []XY
	for i := range s.Stages {
		ticks = append(ticks, XY{X: float64(i + 1)})
	}
	return Chart{Title: "p95 latency per stage", XLabel: "stage", YLabel: "ms", Series: series, XTicks: ticks,
		XTickLabel: func(x float64) string {
			i := int(math.Round(x)) - 1
			if i >= 0 && i < len(s.Stages) {
				return trim(s.Stages[i].Name, 14)
			}
			return ""
		}}
}

// scalingCharts draws throughput against VUs with the USL fit, and speedup
// against the ideal line.
func scalingCharts(sc *Scaling) []template.HTML {
	var thr, speed, ideal []XY
	for _, p := range sc.Points {
		thr = append(thr, XY{float64(p.VUs), p.RPS})
		speed = append(speed, XY{float64(p.VUs), p.Speedup})
		ideal = append(ideal, XY{float64(p.VUs), float64(p.VUs) / float64(sc.Points[0].VUs)})
	}
	series := []Series{{Name: "measured", Points: thr}}
	if u := sc.USL; u != nil && len(sc.Points) > 0 {
		var fit []XY
		last := float64(sc.Points[len(sc.Points)-1].VUs)
		for i := 0; i <= 60; i++ {
			n := 1 + (last-1)*float64(i)/60
			fit = append(fit, XY{n, u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))})
		}
		series = append(series, Series{Name: "USL fit", Points: fit, Dashed: true})
	}
	return []template.HTML{
		template.HTML(Chart{Title: "Throughput against VUs", XLabel: "VUs", YLabel: "requests/s", Series: series}.SVG()),
		template.HTML(Chart{Title: "Speedup against VUs", XLabel: "VUs", YLabel: "speedup", Series: []Series{{Name: "measured", Points: speed}, {Name: "ideal", Points: ideal, Dashed: true}}}.SVG()),
	}
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":  Ms,
	"pct": func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) },
	"f1":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":  func(v float64) string { return fmt.Sprintf("%.2f", v) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.S.Plan.Name}} — perflab run {{.S.RunID}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1100px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right; } th:first-child, td:first-child { text-align: left; }
th { background: #f6f6f6; } .meta { color: #555; } .fail { color: #b00; font-weight: 600; } .ok { color: #070; }
svg.chart { display: block; margin: 8px 0 20px; max-width: 100%; height: auto; }
svg .title { font-weight: 600; font-size: 13px; } svg .tick, svg .legend { font-size: 11px; fill: #444; } svg .label { font-size: 12px; fill: #333; }
svg .axis line { stroke: #333; } svg .grid { stroke: #e4e4e4; } svg .empty { fill: #888; }
code { background: #f4f4f4; padding: 1px 4px; }
</style></head><body>
<h1>{{.S.Plan.Name}}</h1>
<p class="meta">Run <code>{{.S.RunID}}</code> — {{.S.Status}}{{if .S.Error}} ({{.S.Error}}){{end}} — started {{.S.Start.Format "2006-01-02 15:04:05 MST"}}, {{f1 .S.Duration}} s — load generator {{.S.Host.Hostname}}: {{.S.Host.CPUs}} CPUs {{.S.Host.CPUModel}}, perflab {{.S.Host.Perflab}}</p>
<p><code>{{.S.Total.Line}}</code></p>
{{with .S.Thresholds}}<h2>Thresholds</h2><table><tr><th>Threshold</th><th>Operation</th><th>Stage</th><th>Actual</th><th>Result</th></tr>
{{range .}}<tr><td>{{.Threshold}}</td><td>{{.Operation}}</td><td>{{.Stage}}</td><td>{{f2 .Actual}}</td><td>{{if .Pass}}<span class="ok">pass</span>{{else}}<span class="fail">fail</span>{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Across}}<h2>Across stages</h2>{{.Across}}{{end}}
{{with .S.Scaling}}<h2>Scaling</h2><table><tr><th>VUs</th><th>Requests</th><th>Wall s</th><th>Requests/s</th><th>Speedup</th><th>Efficiency</th></tr>
{{range .Points}}<tr><td>{{.VUs}}</td><td>{{.Requests}}</td><td>{{f2 .Wall}}</td><td>{{f1 .RPS}}</td><td>{{f2 .Speedup}}</td><td>{{pct .Efficiency}}</td></tr>
{{end}}</table><p>Throughput stops increasing at {{.SaturationVUs}} VUs.{{with .USL}} Universal Scalability Law: λ {{f1 .Lambda}}/s, σ {{printf "%.4f" .Sigma}}, κ {{printf "%.6f" .Kappa}}{{if .PeakVUs}}, predicted peak {{f1 .PeakRPS}}/s at {{f1 .PeakVUs}} VUs{{end}} (R² {{printf "%.3f" .R2}}).{{end}}</p>{{end}}
{{range $.Scaling}}{{.}}{{end}}
{{range .Stages}}<h2>Stage {{.P.Index}}: {{.P.Name}}</h2>
<p class="meta">{{f1 .P.Duration}} s{{range .P.Load}} — {{.Scenario}}: {{.VUs}} VUs{{if .Iterations}} × {{.Iterations}} iterations{{end}}{{if .TotalIterations}}, {{.TotalIterations}} iterations shared{{end}}{{if .Rate}}, {{.Rate}} iterations/s{{end}}{{end}}{{if .P.Error}} — stopped: {{.P.Error}}{{end}}</p>
<table><tr><th>Operation</th><th>Kind</th><th>Count</th><th>Errors</th><th>Rate /s</th><th>Min</th><th>Mean</th><th>p50</th><th>p75</th><th>p90</th><th>p95</th><th>p99</th><th>Max</th><th>ops/s avg</th></tr>
{{range .P.Operations}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Count}}</td><td>{{.Errors.Total}}</td><td>{{f1 .RPS}}</td><td>{{ms .Latency.Min}}</td><td>{{ms .Latency.Mean}}</td><td>{{ms .Latency.P50}}</td><td>{{ms .Latency.P75}}</td><td>{{ms .Latency.P90}}</td><td>{{ms .Latency.P95}}</td><td>{{ms .Latency.P99}}</td><td>{{ms .Latency.Max}}</td><td>{{f2 .OpRate.Avg}}</td></tr>
{{end}}</table>
<p class="meta">Latencies in ms, of successful operations.</p>
{{range .Charts}}{{.}}{{end}}
{{end}}
<p class="meta">Generated by perflab at {{.Generated}}.</p>
</body></html>
`))
