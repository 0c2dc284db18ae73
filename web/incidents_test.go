package web

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perflab/perflab/internal/browsertest"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

// withIncidents gives the stored run s a drift verdict that did not
// degrade but had two incidents in its stage, from 0.5 to 1 s and from
// 1.5 to 2 s into it, and stores it (as perflab drift --save does).
func withIncidents(t *testing.T, s *steady) *results.Drift {
	t.Helper()
	sum := s.run.Summary
	ph := sum.Stages[0]
	at := func(x float64) time.Time { return ph.Start.Add(time.Duration(x * float64(time.Second))) }
	inc := func(a, b float64, effect results.IncidentEffect) results.Incident {
		return results.Incident{Stage: ph.Name, StartS: a, EndS: b, Elapsed: a, Start: at(a), End: at(b), Effects: []results.IncidentEffect{effect},
			Sentence: fmt.Sprintf("from %.1f s to %.1f s: %s %g%s, then back to %g%s", a, b, effect.Series, effect.Level, effect.Unit, effect.Baseline, effect.Unit)}
	}
	d := &results.Drift{Incidents: []results.Incident{
		inc(0.5, 1, results.IncidentEffect{Series: "error ratio of get", Kind: "errors", Unit: "%", Baseline: 0, Level: 40, Peak: 50, Failures: 8, Message: "HTTP 503 Service Unavailable"}),
		inc(1.5, 2, results.IncidentEffect{Series: "p95 of get", Kind: "latency", Unit: "ms", Baseline: 1, Level: 30, Peak: 45}),
	}}
	d.Verdict = "no lasting degradation: 2 series steady; 2 incidents: " + d.Incidents[0].Sentence + "; " + d.Incidents[1].Sentence
	sum.Drift = d
	b, err := json.Marshal(sum)
	if err == nil {
		err = s.st.SetSummary(s.id, b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A run page and a drift page of a run with two incidents, in Chromium:
// the drift verdict's line is amber, the amber box at the top lists both,
// the contents link to it; each incident's band is painted on the
// report's charts over the stage's time and on the live charts of the
// whole run (in clock time), where uPlot puts its start and end; no
// console error. Screenshot: artifacts/web-incidents.png.
func TestIncidentsInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	s := steadyRun(t)
	d := withIncidents(t, s)
	app := httptest.NewServer(New(Options{Store: s.st, Version: "test"}))
	defer app.Close()
	bctx := browsertest.New(t, chromium, time.Minute)
	problems := browsertest.Problems(t, bctx)
	eval := func(js string, v any) {
		t.Helper()
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[json.RawMessage](js))
		if err == nil {
			err = json.Unmarshal(raw, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(app.URL+"/runs/"+s.id), chromedp.WaitVisible(chromedp.CSS("#report"))); err != nil {
		t.Fatal(err)
	}
	// The live charts are made once their series are read.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var n int
		eval(`+document.getElementById('live').dataset.points`, &n)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no live series")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var top struct {
		Class, TOC string
		Items      []string
	}
	eval(`(() => ({class: document.getElementById('drift-verdict').className, toc: document.querySelector('nav#toc a').getAttribute('href'),
		items: Array.from(document.querySelectorAll('#incidents > ol > li')).map(li => li.textContent)}))()`, &top)
	views := report.Incidents(d)
	if top.Class != "warn" || top.TOC != "#incidents" || len(top.Items) != 2 {
		t.Fatalf("the verdict's line %q, the contents' first link %q, the box's incidents %q", top.Class, top.TOC, top.Items)
	}
	for i, v := range views {
		if want := fmt.Sprintf("Incident %d, stage %s: %s.", v.N, v.Stage, v.When()); !strings.HasPrefix(top.Items[i], want) || !strings.Contains(top.Items[i], v.Effects[0]) {
			t.Errorf("the box's incident %d: %q, want %q and %q", v.N, top.Items[i], want, v.Effects[0])
		}
	}
	// The bands: on the report's charts over the stage's time, and on the
	// live charts of the whole run (x in Unix seconds).
	var charts []string
	eval(`Array.from(document.querySelectorAll('#report div.plot[data-plot], #live div.plot')).filter(el => el.uplot && (el.uplot.incidentBands || []).length).map(el => '#' + el.id)`, &charts)
	var want []string
	for _, slug := range []string{"p50-over-time", "p95-over-time", "p99-over-time", "throughput-over-time", "errors-over-time", "vus-over-time"} {
		var id string
		eval(fmt.Sprintf(`(document.querySelector('#report div.plot[id$="-%s"]') || {}).id || ''`, slug), &id)
		if id == "" {
			t.Errorf("no chart %s", slug)
		}
		want = append(want, "#"+id)
	}
	for _, id := range append(want, "#live-rate", "#live-p95") {
		if !strings.Contains(strings.Join(charts, " "), id) {
			t.Errorf("no incidents' bands on %s (those with: %q)", id, charts)
			continue
		}
		var ps []browsertest.PaintedBand
		eval(fmt.Sprintf(browsertest.IncidentBands, id), &ps)
		if len(ps) != 2 {
			t.Errorf("%s: %d bands", id, len(ps))
		}
		for k, p := range ps {
			from, to := d.Incidents[k].StartS, d.Incidents[k].EndS
			if strings.HasPrefix(id, "#live") {
				from, to = float64(d.Incidents[k].Start.UnixMilli())/1000, float64(d.Incidents[k].End.UnixMilli())/1000
			}
			if p.Label != fmt.Sprintf("incident %d", k+1) || p.From != from || p.To != to || p.Off() {
				t.Errorf("%s: %s (%g to %g) painted from x %g to %g; uPlot puts it from %.1f to %.1f; want %g to %g", id, p.Label, p.From, p.To, p.Lo, p.Hi, p.Want0, p.Want1, from, to)
			}
		}
	}
	var scrolled bool
	eval(`window.scrollTo(0, document.getElementById('live-p95').getBoundingClientRect().top + window.scrollY), true`, &scrolled)
	if b, err := chromedp.Run(bctx, chromedp.CaptureScreenshot()); err == nil {
		os.WriteFile(filepath.Join(browsertest.Artifacts(), "web-incidents.png"), b, 0o644)
	}
	// The drift page: the amber line and box too.
	if err := chromedp.Do(bctx, chromedp.Navigate(app.URL+"/runs/"+s.id+"/drift"), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatal(err)
	}
	var drift struct {
		Class string
		Items int
	}
	eval(`({class: document.getElementById('drift-verdict').className, items: document.querySelectorAll('#incidents > ol > li').length})`, &drift)
	if drift.Class != "warn" || drift.Items != 2 {
		t.Errorf("the drift page: the verdict's line %q, %d incidents in the box", drift.Class, drift.Items)
	}
	for _, p := range problems() {
		t.Error(p)
	}
}
