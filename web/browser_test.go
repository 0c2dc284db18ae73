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
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/perflab/perflab/internal/testenv"
)

// The web UI in a real headless Chromium: the runs list, a finished run,
// a run going (its live charts gain points while the test watches), a
// comparison, a plan's history and a run's drift; no console error, no
// script error, no dialog (a step named <script>alert(1)</script> opens
// none); the charts drew something. Screenshots go to artifacts/ (or
// $PERFLAB_ARTIFACTS).
func TestInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium; .ci/run does)")
	}
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

	art := artifacts()

	bctx := browser(t, chromium, 2*time.Minute)
	var mu sync.Mutex
	var problems []string
	problem := func(format string, a ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	err = chromedp.Listen(bctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problem("script error: %s %v", e.ExceptionDetails.Text, e.ExceptionDetails.Exception)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				problem("console %s: %s", e.Type, strings.Join(args, " "))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				problem("browser log: %s %s", e.Entry.Text, e.Entry.URL)
			}
		case *cdppage.EventJavascriptDialogOpening:
			problem("a dialog opened: %q", e.Message)
			go chromedp.Call(bctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
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
	const drew = `Array.from(document.querySelectorAll('#live canvas')).filter(c => {
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
		return false }).length`

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
	painted, plots, placed := evalInt(drew), evalInt(strings.Replace(drew, "#live canvas", "#report div.plot canvas", 1)), evalInt(`document.querySelectorAll('#report div.plot').length`)
	if painted != 2 || plots < 6 || plots != placed {
		t.Errorf("finished run: %d live charts drawn (want 2), %d of the report's %d charts drawn", painted, plots, placed)
	}
	shot("run")

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
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
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
	bctx := browser(b, chromium, 5*time.Minute)
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

// browser is a headless Chromium's tab, closed at the test's end or after
// limit.
func browser(tb testing.TB, chromium string, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(tb.TempDir()), chromedp.WindowSize(1200, 1400), chromedp.Flag("disable-quic", true))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { bcancel(); acancel(); cancel() })
	return bctx
}

// A run page's live chart of a run whose last interval is partial (cut
// short by the stage's end), in a real headless Chromium: the lines end
// at the last whole interval, at the load's rate (not 0), and the
// partial interval is a point apart, at its rate over its own length.
// The screenshot is web-partial.png.
func TestLiveChartPartialIntervalInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium; .ci/run does)")
	}
	s := steadyRun(t)
	app := httptest.NewServer(New(Options{Store: s.st, Version: "test"}))
	defer app.Close()
	bctx := browser(t, chromium, time.Minute)
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
		os.WriteFile(filepath.Join(artifacts(), "web-partial.png"), b, 0o644)
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

// artifacts is where screenshots go: $PERFLAB_ARTIFACTS, or artifacts/.
func artifacts() string {
	art := os.Getenv("PERFLAB_ARTIFACTS")
	if art == "" {
		art = filepath.Join("..", "artifacts")
	}
	os.MkdirAll(art, 0o755)
	return art
}
