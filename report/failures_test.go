package report_test

import (
	"bytes"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/browsertest"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// patternServer answers /a with a body of aBody bytes, and /b so too but
// every third request of /b between 2 s and 4 s after its first request
// (by its own clock) with a 503 and a body of its own; it notes when it
// sent each 503.
type patternServer struct {
	mu    sync.Mutex
	first time.Time
	nb    int
	sent  []time.Time // the 503s
}

const (
	aBody    = 1000
	body503  = `{"error":"overloaded","retry":"later"}`
	message  = "HTTP 503 Service Unavailable"
	interval = 500 * time.Millisecond
)

func (p *patternServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(5 * time.Millisecond)
	p.mu.Lock()
	now := time.Now()
	if p.first.IsZero() {
		p.first = now
	}
	fail := false
	if r.URL.Path == "/b" {
		p.nb++
		at := now.Sub(p.first)
		fail = at >= 2*time.Second && at < 4*time.Second && p.nb%3 == 0
	}
	if fail {
		p.sent = append(p.sent, now)
	}
	p.mu.Unlock()
	if fail {
		w.Header().Set("Set-Cookie", "session=secret")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(body503))
		return
	}
	w.Write(bytes.Repeat([]byte("x"), aBody))
}

// A run of known failures and bytes: /b answers every third request 503
// from 2 s to 4 s of the server's clock, /a 1000 bytes each. Per
// interval, the failures by kind and message written (interval_errors.csv)
// add up to the server's 503s, none outside the window's intervals; the
// message's first and last times are within an interval of the server's
// first and last 503; the bytes received per second of /a are 1000 ×
// its requests over the interval's length; summary.json's message has
// its first and last times; the history reads the same back. The HTML
// report charts the failures by kind (their rates add up to the server's
// count), the responses by status and the bytes received, and gives the
// message's first and last times and its first response, redacted, in a
// <details>; the Markdown report's errors table has them too. In
// Chromium, every chart draws, the new ones among them.
func TestFailuresOverTime(t *testing.T) {
	ps := &patternServer{}
	srv := httptest.NewServer(ps)
	defer srv.Close()
	dir := t.TempDir()
	// 2 VUs for 6 s, the failed requests dumped (--dump-failures), the
	// run kept in a history.
	res := runPlan(t, dir, "name: pattern\ntarget: "+srv.URL+"\ninterval: 500ms\nscenarios:\n"+
		"  - {name: s, vus: 2, duration: 6s, flow: [{name: a, url: /a}, {name: b, url: /b}]}\n", func(c *lab.Config) { c.Failures = 100 })
	ps.mu.Lock()
	sent := append([]time.Time(nil), ps.sent...)
	ps.mu.Unlock()
	if len(sent) == 0 {
		t.Fatal("the server sent no 503")
	}
	rd, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ph := rd.Summary.Stages[0]
	a := results.Operation{Scenario: "s", Name: "a", Kind: metrics.KindStep}
	b := results.Operation{Scenario: "s", Name: "b", Kind: metrics.KindStep}
	firstSent, lastSent := sent[0], sent[len(sent)-1]

	check := func(t *testing.T, rd *results.Run, from string) {
		var total int64
		for _, iv := range rd.IntervalsOf(ph.Index, b) {
			var n int64
			for _, e := range iv.Failures {
				if e.Kind != "http_5xx" || e.Message != message {
					t.Errorf("%s: interval at %d: failure %+v, want only %s", from, iv.StartMs, e, message)
				}
				n += e.Count
			}
			if n != iv.Errors {
				t.Errorf("%s: interval at %d: %d failures by message, %d errors", from, iv.StartMs, n, iv.Errors)
			}
			// No failure in an interval that ends before the server's
			// first 503, or starts more than an interval after its last
			// (the client records a response after the server sent it).
			if n > 0 && (iv.EndMs < firstSent.UnixMilli() || iv.StartMs > lastSent.Add(interval).UnixMilli()) {
				t.Errorf("%s: %d failures in the interval %d-%d ms, outside the server's 503s (%d-%d)", from, n, iv.StartMs, iv.EndMs, firstSent.UnixMilli(), lastSent.UnixMilli())
			}
			total += n
		}
		if total != int64(len(sent)) {
			t.Errorf("%s: %d failures over the intervals; the server sent %d 503s", from, total, len(sent))
		}
		for _, iv := range rd.IntervalsOf(ph.Index, a) {
			if iv.Bytes != aBody*iv.Count {
				t.Errorf("%s: /a's interval at %d: %d bytes received of %d requests, want %d", from, iv.StartMs, iv.Bytes, iv.Count, aBody*iv.Count)
			}
		}
		sp, ok := rd.MessageSpans(ph)[results.MessageKey{Op: metrics.Key{Scenario: "s", Name: "b", Kind: metrics.KindStep}, ErrKind: "http_5xx", Message: message}]
		if !ok || sp.N != int64(len(sent)) {
			t.Fatalf("%s: the message's span %+v, %v; want %d failures", from, sp, ok, len(sent))
		}
		// The server sends before the client records: the first 503 was
		// seen in the interval the server sent it or in the next (the
		// intervals' times are kept in whole milliseconds).
		if d := sp.From.Sub(firstSent); d > interval || d < -(interval+time.Millisecond) {
			t.Errorf("%s: first seen %v, the server's first 503 at %v (%v apart; want within an interval)", from, sp.From, firstSent, d)
		}
		// The last interval ends with the stage: a request in flight
		// then is recorded in it, though its 503 was sent a little after.
		if d := sp.To.Sub(lastSent); d < -interval || d > 2*interval {
			t.Errorf("%s: last seen %v, the server's last 503 at %v (%v apart; want within an interval)", from, sp.To, lastSent, d)
		}
	}
	check(t, rd, "run directory")

	// summary.json: the message's first and last times, as the spans.
	var op results.Operation
	for _, o := range ph.Operations {
		if o.Name == "b" && o.Kind == metrics.KindStep {
			op = o
		}
	}
	if len(op.Errors.Messages) != 1 || op.Errors.Messages[0].First == nil || op.Errors.Messages[0].Last == nil {
		t.Fatalf("summary.json's messages of b: %+v", op.Errors.Messages)
	}
	m := op.Errors.Messages[0]
	sp := rd.MessageSpans(ph)[results.MessageKey{Op: metrics.Key{Scenario: "s", Name: "b", Kind: metrics.KindStep}, ErrKind: "http_5xx", Message: message}]
	if !m.First.Equal(sp.From) || !m.Last.Equal(sp.To) || m.Count != int64(len(sent)) {
		t.Errorf("summary.json: %s %d from %v to %v; the intervals say %v to %v, the server %d", m.Message, m.Count, m.First, m.Last, sp.From, sp.To, len(sent))
	}

	// The history keeps the same.
	fromStore := storedRun(t, filepath.Join(dir, "h.db"), rd.Summary.RunID)
	check(t, fromStore, "history")

	// The HTML report.
	page := filepath.Join(dir, "report.html")
	plots := writeReport(t, rd, page)
	find := func(slug string) *report.Plot {
		for i := range plots {
			if plots[i].Slug == slug {
				return &plots[i]
			}
		}
		t.Fatalf("no chart %s", slug)
		return nil
	}
	byKind, byStatus, recv := find("failures-by-kind-over-time"), find("responses-by-status-over-time"), find("bytes-received-over-time")
	if len(byKind.Series) != 1 || byKind.Series[0].Name != "http_5xx" {
		t.Fatalf("failures by kind: series %+v", byKind.Series)
	}
	var names []string
	for _, s := range byStatus.Series {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "accepted (OK),http_5xx" {
		t.Errorf("responses by status: series %q, want accepted (OK), http_5xx", names)
	}
	nominal := rd.Summary.IntervalLength()
	sum, sliver := 0.0, int64(0)
	for _, iv := range rd.IntervalsOf(ph.Index, b) {
		if iv.Partial(nominal) && 10*iv.Seconds() < nominal.Seconds() {
			for _, e := range iv.Failures {
				sliver += e.Count
			}
			continue
		}
		sum += valueAt(t, *byKind, 0, float64(iv.StartMs-ph.Start.UnixMilli())/1000) * iv.Seconds()
	}
	if math.Round(sum)+float64(sliver) != float64(len(sent)) {
		t.Errorf("the failures by kind chart adds up to %.2f (+%d in a sliver); the server sent %d", sum, sliver, len(sent))
	}
	ai := -1
	for i, s := range recv.Series {
		if s.Name == "a" {
			ai = i
		}
	}
	if ai < 0 {
		t.Fatalf("bytes received: no series of a: %+v", recv.Series)
	}
	for _, iv := range rd.IntervalsOf(ph.Index, a) {
		if iv.Partial(nominal) && 10*iv.Seconds() < nominal.Seconds() {
			continue
		}
		got := valueAt(t, *recv, ai, float64(iv.StartMs-ph.Start.UnixMilli())/1000)
		if want := float64(aBody*iv.Count) / iv.Seconds(); math.Abs(got-want) > 1e-6*want {
			t.Errorf("bytes received per second of a at %d: %v, want %d × %d / %.3f s = %v", iv.StartMs, got, aBody, iv.Count, iv.Seconds(), want)
		}
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	row := report.RunErrorRowsOf(rd)
	if len(row) != 1 || row[0].FirstText() == "" || row[0].LastText() == "" || row[0].Sample == nil {
		t.Fatalf("the errors rows: %+v", row)
	}
	for _, want := range []string{
		"<th title=\"" + "when the message was first seen",
		strings.ReplaceAll("<td>"+row[0].FirstText()+"</td><td>"+row[0].LastText()+"</td>", "+", "&#43;"),
		"<details class=\"sample\">",
		strings.ReplaceAll(body503, `"`, "&#34;"),
		"Set-Cookie: [redacted]",
	} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(html), "session=secret") {
		t.Error("the report shows the cookie")
	}
	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, rd.Summary); err != nil {
		t.Fatal(err)
	}
	if want := "| " + row[0].FirstText() + " | " + row[0].LastText() + " |"; !strings.Contains(md.String(), want) {
		t.Errorf("the Markdown report lacks %q:\n%s", want, md.String())
	}

	// Without --dump-failures (the history keeps no samples), the report
	// says how to keep them.
	var stored bytes.Buffer
	if err := report.WriteHTML(&stored, fromStore); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored.String(), "run with <code>--dump-failures</code> to keep samples") {
		t.Error("the report of the stored run does not say how to keep samples")
	}

	t.Run("chromium", func(t *testing.T) {
		chromium := browsertest.Chromium(t)
		bctx := browsertest.New(t, chromium, 2*time.Minute)
		problems := browsertest.Problems(t, bctx)
		open(t, bctx, page, len(plots))
		for _, slug := range []string{"failures-by-kind-over-time", "responses-by-status-over-time", "bytes-received-over-time"} {
			if n := eval[int](t, bctx, `perflabCharts.charts.filter(u => u.spec && u.spec.slug === '`+slug+`').length`); n != 1 {
				t.Errorf("%s: %d drawn", slug, n)
			}
		}
		if n := eval[int](t, bctx, `document.querySelectorAll('#error-samples details').length`); n != 1 {
			t.Errorf("%d samples on the page, want 1", n)
		}
		for _, p := range problems() {
			t.Error(p)
		}
	})
}

// storedRun is a run read back from the history at path.
func storedRun(t *testing.T, path, id string) *results.Run {
	t.Helper()
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rd, err := results.FromStore(st, id)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}
