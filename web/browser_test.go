package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perflab/perflab/internal/browsertest"
)

// The web UI in a real headless Chromium: the runs list, a finished run,
// a run going (its live charts gain points while the test watches), a
// comparison, a plan's history and a run's drift; no console error, no
// script error, no dialog (a step named <script>alert(1)</script> opens
// none); the charts drew something. Screenshots go to artifacts/ (or
// $PERFLAB_ARTIFACTS).
func TestInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	s := seed(t)
	started := make(chan string, 1)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		runPlan(t, context.Background(), s.db, s.target.URL, "1", "8s", map[string]string{"release": "C"}, func(id string) { started <- id })
	}()
	going := <-started
	defer func() { <-runDone }()
	app := httptest.NewServer(New(Options{Store: s.st, Poll: 200 * time.Millisecond, Version: "test"}))
	defer app.Close()

	art := browsertest.Artifacts()

	bctx := browsertest.New(t, chromium, 2*time.Minute)
	problems := browsertest.Problems(t, bctx)
	shot := func(name string) {
		t.Helper()
		b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(art, "web-"+name+".png"), b, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
	}
	open := func(path, visible string) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Navigate(app.URL+path), chromedp.WaitVisible(chromedp.CSS(visible))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	evalInt := func(js string) int {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	evalString := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		return v
	}
	// waitFor polls a JS condition.
	waitFor := func(what, js string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			ok, err := chromedp.Run(bctx, chromedp.Evaluate[bool](js))
			if err != nil {
				t.Fatalf("%s: %v", js, err)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v (%s)", what, within, js)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// drew counts the canvases of #live that have pixels painted.
	drew := browsertest.PaintedIn("#live")

	// The runs list.
	open("/", "#runs")
	shot("runs")
	if rows := evalInt(`document.querySelectorAll('#runs tr').length`); rows != 1+len(s.ids)+1 {
		t.Errorf("the runs list has %d rows, want a header and %d runs", rows, len(s.ids)+1)
	}
	if n := evalInt(`Array.from(document.querySelectorAll('#runs tr')).filter(r => r.textContent.includes('completed; thresholds failed: 1 of 3')).length`); n != 2 {
		t.Errorf("the runs list says thresholds failed for %d runs, want the 2 of release B", n)
	}

	// A finished run: its live charts and the report's.
	open("/runs/"+s.ids[0], "#report")
	waitFor("the finished run's series", `+document.getElementById('live').dataset.points > 3`, 20*time.Second)
	painted, plots, placed := evalInt(drew), evalInt(browsertest.PaintedIn("#report div.plot")), evalInt(`document.querySelectorAll('#report div.plot').length`)
	if painted != 2 || plots < 6 || plots != placed {
		t.Errorf("finished run: %d live charts drawn (want 2), %d of the report's %d charts drawn", painted, plots, placed)
	}
	shot("run")
	// Its table of contents goes to the report's parts; its charts over
	// time read in clock times (UTC), their latency charts' y axes clipped
	// by default, with a full range and a log scale to choose.
	if broken, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](browsertest.BrokenLinks)); err != nil || len(broken) > 0 || evalInt(browsertest.TOCLinks) < 3 {
		t.Errorf("the run page's table of contents: %d links, none for %q (%v)", evalInt(browsertest.TOCLinks), broken, err)
	}
	if label := evalString(`(u => u.axes[0].label(u))(document.getElementById('live').charts.p95)`); !strings.HasPrefix(label, "clock time (UTC)") {
		t.Errorf("the live p95 chart's x axis: %q", label)
	}
	if modes := evalString(`Array.from(document.querySelectorAll('#live-p95 .plot-ymode, #report .plot-ymode')).map(b => b.dataset.mode).slice(0, 6).join(' ')`); modes != "clipped full log clipped full log" {
		t.Errorf("the y axes to choose from on the run page: %q", modes)
	}
	if evalString(`document.getElementById('live-p95').querySelector('.plot-ymode[data-mode=log]').click(), String(document.getElementById('live').charts.p95.scales.y.distr)`) != "3" {
		t.Errorf("the live p95 chart's log scale is not uPlot's distr 3")
	}

	// A run whose thresholds failed says so once its live status is read.
	open("/runs/"+s.ids[3], "#report")
	waitFor("the failing run's status", `+document.getElementById('live').dataset.points > 3 && document.getElementById('live-status').textContent === 'completed; thresholds failed: 1 of 3'`, 20*time.Second)

	// The run going: its charts gain points as the test watches, then it
	// ends and says so.
	open("/runs/"+going, "#live")
	waitFor("the run going's first points", `+document.getElementById('live').dataset.points > 0`, 20*time.Second)
	first := evalInt(`+document.getElementById('live').dataset.points`)
	waitFor("more points while the run goes", fmt.Sprintf(`+document.getElementById('live').dataset.points > %d`, first+2), 20*time.Second)
	shot("run-going")
	waitFor("the run's end", `document.getElementById('live').dataset.status === 'completed' && document.querySelector('#report .meta').textContent.includes('completed')`, 40*time.Second)
	if painted = evalInt(drew); painted != 2 {
		t.Errorf("the run that went: %d live charts drawn", painted)
	}

	// A comparison of two labels.
	open("/compare?base="+url.QueryEscape("release=A")+"&candidate="+url.QueryEscape("release=B"), "#verdicts")
	shot("compare")
	if verdicts := evalString(`document.getElementById('verdicts').textContent`); !strings.Contains(verdicts, "worse") {
		t.Errorf("compare: no operation worse:\n%s", verdicts)
	}

	// A plan's history, and a run's drift.
	open("/history?plan="+url.QueryEscape("shop "+hostile), "svg.chart")
	shot("history")
	if charts := evalInt(`document.querySelectorAll('svg.chart polyline').length`); charts < 2 {
		t.Errorf("history: %d chart lines", charts)
	}
	open("/runs/"+going+"/drift", "h1")
	shot("drift")
	for _, p := range problems() {
		t.Error(p)
	}
}

// BenchmarkRunPage24hInChromium opens the page of a 24-hour run (as
// BenchmarkRunPage24h does) in headless Chromium, each time from a server
// that has cached nothing: from the navigation until the report is shown
// (s/loaded), and until the live charts hold the day's 8,640 points
// (s/drawn).
func BenchmarkRunPage24hInChromium(b *testing.B) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("chromium is not installed (apt-get install chromium)")
	}
	st := longHistory(b)
	bctx := browsertest.New(b, chromium, 5*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var loaded, drawn time.Duration
	for i := 0; i < b.N; i++ {
		app := httptest.NewServer(New(Options{Store: st}))
		t0 := time.Now()
		if err := chromedp.Do(bctx, chromedp.Navigate(app.URL+"/runs/long"), chromedp.WaitVisible(chromedp.CSS("#report"))); err != nil {
			b.Fatal(err)
		}
		loaded += time.Since(t0)
		for {
			n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`+document.getElementById('live').dataset.points || 0`))
			if err != nil {
				b.Fatal(err)
			}
			if n == 8640 {
				break
			}
			if time.Since(t0) > time.Minute {
				b.Fatalf("%d points after a minute", n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		drawn += time.Since(t0)
		app.Close()
	}
	b.ReportMetric(loaded.Seconds()/float64(b.N), "s/loaded")
	b.ReportMetric(drawn.Seconds()/float64(b.N), "s/drawn")
}

// A run page's live chart of a run whose last interval is partial (cut
// short by the stage's end), in a real headless Chromium: the lines end
// at the last whole interval, at the load's rate (not 0), and the
// partial interval is a point apart, at its rate over its own length.
// The screenshot is web-partial.png.
func TestLiveChartPartialIntervalInChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	s := steadyRun(t)
	app := httptest.NewServer(New(Options{Store: s.st, Version: "test"}))
	defer app.Close()
	bctx := browsertest.New(t, chromium, time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(app.URL+"/runs/"+s.id), chromedp.WaitVisible(chromedp.CSS("#report"))); err != nil {
		t.Fatal(err)
	}
	var data struct{ Rate, P95 [][]*float64 }
	for deadline := time.Now().Add(20 * time.Second); ; {
		js, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => { const c = document.getElementById('live').charts;
			return JSON.stringify({rate: c.rate.data, p95: c.p95.data}) })()`))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(js), &data); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		if len(data.Rate) == 5 && len(data.Rate[0]) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chart's data: %s", js)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(browsertest.Artifacts(), "web-partial.png"), b, 0o644)
	}
	// rate: t, requests/s and its partial intervals, errors/s and its.
	line, apart := data.Rate[1], data.Rate[2]
	secs := []float64{1, 1, s.run.Summary.Stages[0].End.Sub(time.UnixMilli(int64(*data.Rate[0][2] * 1000))).Seconds()}
	for i, v := range line[:2] {
		if v == nil || *v == 0 || !s.allows(*v, secs[i]) {
			t.Errorf("the line's point %d: %v/s; the server answered %d in %.3f s", i, v, s.served, s.run.Summary.Stages[0].Duration)
		}
	}
	if line[2] != nil || apart[2] == nil || apart[0] != nil || apart[1] != nil || !s.allows(*apart[2], secs[2]) {
		t.Errorf("the partial interval: in the line %v, apart %v (%.3f s)", line[2], apart, secs[2])
	}
	if p := data.P95; p[1][2] != nil || p[2][2] == nil || p[1][1] == nil {
		t.Errorf("p95: the line %v, apart %v", p[1], p[2])
	}
}
