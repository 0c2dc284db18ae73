package engine

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// A goroutine per VU (http.event_loop: false, and wherever the event loop
// cannot run a scenario) must count, time and classify exactly as the event
// loop, the default, does: the engine's tests of HTTP scenarios run again
// with every plan's VUs on goroutines, against the same servers and with
// the same assertions. (Off Linux, the tests run on goroutines already.)
func TestGoroutineEngine(t *testing.T) {
	tests := []struct {
		name string
		f    func(*testing.T)
	}{
		{"ClosedModelsCountExactly", TestClosedModelsCountExactly},
		{"DurationModelMatchesServerCount", TestDurationModelMatchesServerCount},
		{"ErrorsAreClassified", TestErrorsAreClassified},
		{"TemplatingExtractionAndData", TestTemplatingExtractionAndData},
		{"TransactionsAndParallelScenarios", TestTransactionsAndParallelScenarios},
		{"SweepStagesKeepStatisticsApart", TestSweepStagesKeepStatisticsApart},
		{"InterruptRunsTeardownAndKeepsResults", TestInterruptRunsTeardownAndKeepsResults},
		{"DurationCutsThinkTime", TestDurationCutsThinkTime},
		{"RampUpSpreadsStarts", TestRampUpSpreadsStarts},
		{"ForEachSetupAndRandomThink", TestForEachSetupAndRandomThink},
		{"ConstantArrivalRate", TestConstantArrivalRate},
		{"StallShowsInLatencyNotServiceTime", TestStallShowsInLatencyNotServiceTime},
		{"DroppedIterationsAreCounted", TestDroppedIterationsAreCounted},
		{"RampingArrivalRate", TestRampingArrivalRate},
		{"LatePacerLosesNoIteration", TestLatePacerLosesNoIteration},
		{"RampingVUs", TestRampingVUs},
		{"InterruptOpenModelCounts", TestInterruptOpenModelCounts},
		{"RatesOverEachScenariosSpan", TestRatesOverEachScenariosSpan},
		{"OpenIterationsFinishAfterTheEnd", TestOpenIterationsFinishAfterTheEnd},
		{"InterruptedQueueIsCounted", TestInterruptedQueueIsCounted},
		{"LatencyMatchesServerTime", TestLatencyMatchesServerTime},
		{"StartDelayIsLatencyLessServiceTime", TestStartDelayIsLatencyLessServiceTime},
	}
	goroutines := false
	forceEngine = &goroutines
	defer func() { forceEngine = nil }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := loopsStarted.Load()
			defer func() {
				if loopsStarted.Load() != before {
					t.Errorf("%s ran an event loop", tt.name)
				}
			}()
			tt.f(t)
		})
	}
}

// By default each scenario runs on event loops where they can run it, and
// on goroutines, saying why, where they cannot; http.event_loop: false
// runs every scenario on goroutines.
func TestEngineChoice(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	body := `target: TARGET
buses: [{name: b, url: "mem://engine-choice"}]
scenarios:
  - {name: plain, vus: 2, iterations: 3, flow: [{name: a, url: /a}]}
  - {name: bus, vus: 1, iterations: 1, flow: [{name: a, url: /a}, {name: p, publish: {bus: b, topic: t, body: x}}]}
  - {name: tls, vus: 1, iterations: 1, flow: [{name: s, url: "https://127.0.0.1:1/"}]}
`
	want := map[string]string{"plain": EngineLoop, "bus": EngineGoroutines, "tls": EngineGoroutines}
	if runtime.GOOS != "linux" {
		want["plain"] = EngineGoroutines
	}
	if loopTLS {
		want["tls"] = EngineLoop
	}
	r := run(t, load(t, srv.URL, body, nil))
	for _, l := range r.Stages[0].Load {
		if l.Engine != want[l.Scenario] || (l.Engine == EngineGoroutines) != (l.EngineWhy != "") {
			t.Errorf("scenario %s ran on %s (%q), want %s with a reason where not the event loop", l.Scenario, l.Engine, l.EngineWhy, want[l.Scenario])
		}
	}
	off := false
	p := load(t, srv.URL, body, nil)
	p.HTTP.EventLoop = &off
	before := loopsStarted.Load()
	r = run(t, p)
	for _, l := range r.Stages[0].Load {
		if l.Engine != EngineGoroutines || l.EngineWhy != "http.event_loop: false" {
			t.Errorf("event_loop: false: scenario %s ran on %s (%q)", l.Scenario, l.Engine, l.EngineWhy)
		}
	}
	if loopsStarted.Load() != before {
		t.Error("event_loop: false started an event loop")
	}
}

// Responses framed every way HTTP/1.1 allows, and connections the server
// closes, through the event loop: each request counted once, with the
// right outcome.
func TestEventLoopFramingAndClosedConnections(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("http.event_loop needs Linux")
	}
	var served atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		switch r.URL.Path {
		case "/chunked": // no length, flushed in parts: chunked
			io.WriteString(w, `{"id":`)
			w.(http.Flusher).Flush()
			io.WriteString(w, `"c-`+r.Header.Get("X-N")+`"}`)
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		case "/eof", "/cut": // HTTP/1.0-style body ended by the close, or cut short
			conn, buf, _ := w.(http.Hijacker).Hijack()
			if r.URL.Path == "/eof" {
				buf.WriteString("HTTP/1.0 200 OK\r\nX-Kind: eof\r\n\r\nuntil the end")
			} else {
				buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			}
			buf.Flush()
			conn.Close()
		default:
			io.WriteString(w, "ok")
		}
	}))
	srv.Config.IdleTimeout = 100 * time.Millisecond // closes kept-alive connections while VUs think
	srv.Start()
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
http: {event_loop: true}
scenarios:
  - name: s
    vus: 3
    iterations: 4
    flow:
      - {name: chunked, url: /chunked, headers: {X-N: "${vu}"}, extract: {id: $.id}}
      - {name: echo, url: "/echo?id=${id}", check: {status: [200]}}
      - {name: close, url: /close, check: {body_contains: bye}}
      - {name: eof, url: /eof, check: {body_contains: until the end}, extract: {kind: {header: X-Kind}}}
      - {name: cut, url: /cut}
      - {name: idle, url: /, think: 150ms}
      - {name: byname, url: "http://localhost:`+strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)+`/"}
`, nil)
	r := run(t, p)
	for _, name := range []string{"chunked", "echo", "close", "eof", "idle", "byname"} {
		s := op(t, r.Stages[0], name)
		if s.Count != 12 || s.ErrorCount() != 0 {
			t.Errorf("%s: count %d, errors %v; want 12 without error", name, s.Count, s.Errors)
		}
	}
	if s := op(t, r.Stages[0], "cut"); s.Count != 12 || s.Errors[metrics.Read] != 12 {
		t.Errorf("cut: count %d, errors %v; want 12 read errors", s.Count, s.Errors)
	}
	if got := served.Load(); got != 7*12 {
		t.Errorf("server served %d requests, want %d", got, 7*12)
	}
}

// A VU parked by a ramp down does not count the time parked in the
// iteration it runs when the ramp brings it back.
func TestParkedVUIterationTime(t *testing.T) {
	for _, loop := range []bool{false, true} {
		if loop && runtime.GOOS != "linux" {
			continue
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 2
    ramp_vus: [{target: 2, duration: 200ms}, {target: 1, duration: 10ms}, {target: 1, duration: 500ms}, {target: 2, duration: 10ms}, {target: 2, duration: 200ms}]
    think: 5ms
    flow: [{name: a, url: /}]
`, nil)
		p.HTTP.EventLoop = &loop
		r := run(t, p)
		srv.Close()
		it := op(t, r.Stages[0], "s").Summarize(time.Second).Latency
		t.Logf("loop %v max %.1f", loop, it.Max)
		if it.Max > 200 {
			t.Errorf("event loop %v: an iteration took %.1f ms; the VU was parked for 500 ms, which is not iteration time", loop, it.Max)
		}
	}
}
