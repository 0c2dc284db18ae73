// Package browsertest opens pages in a real headless Chromium for the
// tests of the HTML report and of perflab serve: a tab, the problems the
// page had (script errors, console errors, the browser's error log,
// dialogs), and what the tests read of the charts.
package browsertest

import (
	"context"
	"fmt"
	"math"
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

// Chromium is Debian's chromium, or the test is skipped (failed in CI).
func Chromium(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium; .ci/run does)")
	}
	return path
}

// New is a headless Chromium's tab of 1200 by 1400 pixels, closed at the
// test's end or after limit; extra are more options of its process
// (chromedp.Env("TZ=Asia/Kolkata"): its local time zone).
func New(tb testing.TB, chromium string, limit time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(tb.TempDir()), chromedp.WindowSize(1200, 1400), chromedp.Flag("disable-quic", true))
	opts = append(opts, extra...)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { bcancel(); acancel(); cancel() })
	return bctx
}

// Problems collects what went wrong in the tab's pages from now on: a
// script error, a console error or assertion, an error in the browser's
// log (a resource not loaded), a dialog (declined). The function returned
// says them so far.
func Problems(tb testing.TB, bctx context.Context) func() []string {
	tb.Helper()
	var mu sync.Mutex
	var problems []string
	problem := func(format string, a ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	err := chromedp.Listen(bctx, func(ev any) {
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
		tb.Fatal(err)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// Painted is a script that counts the canvases under the elements a CSS
// selector (%s) finds that have a pixel painted.
const Painted = `Array.from(document.querySelectorAll(%q)).filter(c => {
	const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
	return false }).length`

// PaintedIn is Painted's script for the canvases in what selector finds.
func PaintedIn(selector string) string {
	return fmt.Sprintf(Painted, selector+" canvas")
}

// Artifacts is where the tests' screenshots go: $PERFLAB_ARTIFACTS, or the
// module's artifacts/ (from a package one level under its root: report,
// web).
func Artifacts() string {
	art := os.Getenv("PERFLAB_ARTIFACTS")
	if art == "" {
		art = filepath.Join("..", "artifacts")
	}
	os.MkdirAll(art, 0o755)
	return art
}

// BrokenLinks is a script that lists the links of the table of contents
// (nav#toc) whose target id no element of the page has; TOCLinks counts
// them.
const (
	BrokenLinks = `Array.from(document.querySelectorAll('nav#toc a')).map(a => a.getAttribute('href'))
	.filter(h => !h.startsWith('#') || !document.getElementById(decodeURIComponent(h.slice(1))))`
	TOCLinks = `document.querySelectorAll('nav#toc a').length`
)

// IncidentBands is a script that reads where the chart of the element a
// CSS selector (%q) finds painted its incidents' bands (charts.js's
// u.incidentBands): for each, its label, its from and to (x values),
// where uPlot puts them on the canvas (want0, want1: valToPos, within
// the plot), and the first and last columns of amber pixels in five rows
// across the plot between them, 8 pixels either side (lo, hi; -1 when
// none). Amber is the band's colour alone, or over a compared stretch's
// blue: red at least green, green above 150, red above blue by 50; no
// line's colour is that.
const IncidentBands = `(() => { const u = document.querySelector(%q).uplot, c = u.ctx.canvas, b = u.bbox;
	const img = u.ctx.getImageData(0, 0, c.width, c.height).data;
	const amber = (x, y) => { const k = 4 * (y * c.width + x); return img[k+3] > 0 && img[k] >= img[k+1] && img[k+1] >= 150 && img[k] - img[k+2] >= 50; };
	const rows = [0.2, 0.4, 0.6, 0.8, 0.97].map(f => Math.round(b.top + f * b.height));
	return (u.incidentBands || []).map(ib => {
		const want0 = Math.max(b.left, u.valToPos(ib.from, 'x', true)), want1 = Math.min(b.left + b.width, u.valToPos(ib.to, 'x', true));
		let lo = null, hi = null;
		rows.forEach(y => { for (let x = Math.max(0, Math.floor(want0) - 8); x <= Math.min(c.width - 1, Math.ceil(want1) + 8); x++) if (amber(x, y)) {
			lo = lo == null ? x : Math.min(lo, x); hi = hi == null ? x : Math.max(hi, x); } });
		return {label: ib.label, from: ib.from, to: ib.to, want0: want0, want1: want1, lo: lo == null ? -1 : lo, hi: hi == null ? -1 : hi + 1};
	}) })()`

// PaintedBand is an incident's band as IncidentBands reads it.
type PaintedBand struct {
	Label                  string
	From, To, Want0, Want1 float64
	Lo, Hi                 float64
}

// Off says whether the band's amber pixels miss where uPlot puts its
// start and end by more than 2 pixels (its edges, the lines over it), or
// are not there; a band that uPlot puts outside the plot (a chart with
// no data: its x range is none of the stage's) must have none.
func (p PaintedBand) Off() bool {
	if p.Want1 <= p.Want0 {
		return p.Lo >= 0
	}
	return p.Lo < 0 || math.Abs(p.Lo-p.Want0) > 2 || math.Abs(p.Hi-p.Want1) > 2
}
