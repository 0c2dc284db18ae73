package web

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

// pages are the application's pages; html/template escapes every value
// (plan, step and label names, queries) in its context.
var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"ms":         results.Ms,
	"f1":         func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"f2":         func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"pct1":       func(v float64) string { return fmt.Sprintf("%+.1f%%", 100*v) },
	"time":       func(t interface{ Format(string) string }) string { return t.Format("2006-01-02 15:04:05") },
	"running":    func(s string) bool { return strings.HasPrefix(s, "running") },
	"join":       strings.Join,
	"driftClass": report.DriftClass,
}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.L.Title}} — perflab</title>
{{if .L.Styles}}{{range .L.Styles}}<link rel="stylesheet" href="{{.}}">{{end}}{{else}}<link rel="stylesheet" href="/static/app.css">{{end}}{{range .L.Scripts}}<script src="{{.}}" defer></script>{{end}}</head><body>
{{template "nav" .L}}{{end}}

{{define "nav"}}<nav class="top"><a class="brand" href="/">perflab</a>
<a href="/"{{if eq .Nav "runs"}} aria-current="page"{{end}}>Runs</a>
<a href="/compare"{{if eq .Nav "compare"}} aria-current="page"{{end}}>Compare</a>
<a href="/history"{{if eq .Nav "history"}} aria-current="page"{{end}}>History</a>
<span class="meta">{{.Version}}</span></nav>{{end}}

{{define "foot"}}</body></html>
{{end}}

{{define "error"}}{{template "head" .}}
<h1>{{.D.Status}} {{.D.Text}}</h1>
<p>{{.D.Msg}}</p>
<p><a href="/">The runs</a></p>
{{template "foot"}}{{end}}

{{define "runs"}}{{template "head" .}}
<h1>Runs</h1>
<form class="filters" method="get" action="/">
<label>Plan <select name="plan"><option value="">all</option>{{range .D.Plans}}<option{{if eq . $.D.Plan}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Labels <input name="label" value="{{.D.Label}}" placeholder="release=Goldenrod"></label>
<label>Status <select name="status"><option value="">all</option>{{range .D.Statuses}}<option{{if eq . $.D.Status}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<button type="submit">Show</button></form>
{{if .D.Rows}}<table id="runs"><tr><th>Run</th><th class="l">Plan</th><th class="l">Status</th><th class="l">Start</th><th>Duration</th><th>Requests</th><th>Requests/s</th><th>Errors</th><th class="l">Labels</th></tr>
{{range .D.Rows}}<tr><td><a href="/runs/{{.ID}}">{{.ID}}</a></td><td class="l">{{.Plan}}</td>
<td class="l">{{if running .Status}}<span class="running">{{.Status}}</span>{{else if eq .Status "completed"}}<span{{if .Clean}} class="ok"{{end}}>{{.Status}}</span>{{else}}<span class="fail">{{.Status}}</span>{{end}}{{range .Notes}}; <span class="{{if .Fail}}fail{{else}}warn{{end}}">{{.Text}}</span>{{end}}</td>
<td class="l">{{time .Start}}</td><td>{{.Duration}}</td>
<td>{{if .Has}}{{.Requests}}{{end}}</td><td>{{if .Has}}{{f1 .RPS}}{{end}}</td><td>{{if .Has}}{{f2 .ErrPct}}%{{end}}</td>
<td class="l">{{.Labels}}</td></tr>
{{end}}</table>
{{else}}<p>No run matches.</p>{{end}}
{{template "foot"}}{{end}}

{{define "runtop"}}{{template "nav" .L}}
<p class="meta"><a href="/runs/{{.ID}}/drift">Drift over the run</a> · <a href="/compare?candidate={{.ID}}">Compare with…</a> · <a href="/history?plan={{.S.Plan.Name}}">History of {{.S.Plan.Name}}</a></p>
<section id="live" data-run="{{.ID}}" data-status="{{.S.Status}}" data-points="0" data-incidents="{{.Incidents}}">
<p class="meta" id="live-status">{{if .Live}}running{{else}}{{.S.StatusLine}}{{end}}</p>
<div id="live-rate" class="plot"></div><div id="live-p95" class="plot"></div>
</section>{{end}}

{{define "compare"}}{{template "head" .}}
<h1>Compare runs</h1>
<form class="filters" method="get" action="/compare">
<label>Base <input name="base" value="{{.D.Base}}" placeholder="run id or release=A" size="34"></label>
<label>Candidate <input name="candidate" value="{{.D.Cand}}" placeholder="run id or release=B" size="34"></label>
<label>Percentile <input name="percentile" value="{{.D.Pct}}" size="5"></label>
<button type="submit">Compare</button></form>
{{with .D.C}}<p class="meta">base: {{join .Base ", "}} — candidate: {{join .Candidate ", "}}</p>
{{range .Sentences}}<p><strong>{{.}}</strong></p>{{end}}
<table id="verdicts"><tr><th class="l">Stage</th><th class="l">Operation</th><th>Base p{{.Percentile}}</th><th>Candidate p{{.Percentile}}</th><th>Change</th><th>Shift ms (95% CI)</th><th>p-value</th><th>n</th><th class="l">Verdict</th></tr>
{{range .Ops}}<tr><td class="l">{{.Stage}}</td><td class="l">{{.Operation}}</td><td>{{ms .BasePct}}</td><td>{{ms .CandPct}}</td><td>{{pct1 .Change}}</td>
<td>{{printf "%+.3g [%+.3g, %+.3g]" .Test.Shift (index .Test.ShiftCI 0) (index .Test.ShiftCI 1)}}</td><td>{{printf "%.3g" .Test.P}}</td><td>{{.Test.N1}}+{{.Test.N2}}</td>
<td class="l">{{if eq (printf "%s" .Test.Verdict) "worse"}}<span class="fail">{{.Test.Verdict}}</span>{{else if eq (printf "%s" .Test.Verdict) "better"}}<span class="ok">{{.Test.Verdict}}</span>{{else}}{{.Test.Verdict}}{{end}}</td></tr>
{{end}}</table>
<p class="meta">Verdicts: Mann-Whitney U over each interval's p{{.Percentile}}, alpha 0.05; a change is called only when it is unlikely to be chance and at least 5%. Shift: the Hodges-Lehmann estimate with its 95% confidence interval.</p>
{{end}}
{{template "foot"}}{{end}}

{{define "history"}}{{template "head" .}}
<h1>History{{if .D.Plan}} of {{.D.Plan}}{{end}}</h1>
<form class="filters" method="get" action="/history">
<label>Plan <select name="plan">{{range .D.Plans}}<option{{if eq . $.D.Plan}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>Percentile <input name="percentile" value="{{.D.Pct}}" size="5"></label>
<button type="submit">Show</button></form>
{{if .D.Plan}}<p class="meta">{{.D.Runs}} completed runs, oldest first; a marked run is where a change of level began (Mann-Whitney over the runs, corrected for the places tried).</p>
{{range .D.Series}}<h2>{{.H.Stage}} — {{.H.Operation}}</h2>
{{range .H.Changes}}<p class="fail">{{.}}</p>{{end}}
{{.Chart}}
{{else}}<p>No completed run of this plan.</p>{{end}}{{end}}
{{template "foot"}}{{end}}

{{define "drift"}}{{template "head" .}}
<h1>Drift of run <a href="/runs/{{.D.ID}}">{{.D.ID}}</a></h1>
<p class="meta">{{.D.S.Plan.Name}} — {{.D.S.Status}}, started {{time .D.S.Start}}, {{f1 .D.S.Duration}} s</p>
{{with .D.Drift}}<p class="{{driftClass .}}" id="drift-verdict"><strong>{{.Verdict}}</strong></p>{{$.D.Incidents}}{{with .Hint}}<p><strong>What changed, in order:</strong> {{.}}.</p>{{end}}{{with .Generator}}<p>The load generator, judged apart: {{.Verdict}}.</p>{{end}}{{else}}<p>The run is too short to judge its drift.</p>{{end}}
{{with .D.Text}}<pre>{{.}}</pre>{{end}}
{{range .D.Charts}}{{.}}{{end}}
<script type="application/json" class="perflab-plots">{{.D.Plots}}</script>
{{template "foot"}}{{end}}
`))
