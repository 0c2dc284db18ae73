package engine

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// engineTests are the engine's tests of HTTP scenarios that run again on
// the other engine (TestGoroutineEngine) and over https (TestEventLoopTLS),
// against the same servers and with the same assertions.
var engineTests = []struct {
	name string
	f    func(*testing.T)
}{
	{"ClosedModelsCountExactly", TestClosedModelsCountExactly},
	{"DurationModelMatchesServerCount", TestDurationModelMatchesServerCount},
	{"ErrorsAreClassified", TestErrorsAreClassified},
	{"FailedOperationsAreTimed", TestFailedOperationsAreTimed},
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
	{"PeakVUsFollowTheRamp", TestPeakVUsFollowTheRamp},
	{"PeakVUsEndWithTheIterations", TestPeakVUsEndWithTheIterations},
	{"InterruptOpenModelCounts", TestInterruptOpenModelCounts},
	{"RatesOverEachScenariosSpan", TestRatesOverEachScenariosSpan},
	{"OpenIterationsFinishAfterTheEnd", TestOpenIterationsFinishAfterTheEnd},
	{"InterruptedQueueIsCounted", TestInterruptedQueueIsCounted},
	{"InjectedValuesAreNotSent", TestInjectedValuesAreNotSent},
	{"FlowLogic", TestFlowLogic},
	{"FlowLogicFailures", TestFlowLogicFailures},
	{"SetVariables", TestSetVariables},
	{"PollUntilDone", TestPollUntilDone},
	{"LoopRows", TestLoopRows},
	{"ConsecutiveScenarios", TestConsecutiveScenarios},
	{"UnsetVariableSaysWhy", TestUnsetVariableSaysWhy},
	{"RateBeyondTheMachine", TestRateBeyondTheMachine},
	{"LatencyMatchesServerTime", TestLatencyMatchesServerTime},
	{"StartDelayIsLatencyLessServiceTime", TestStartDelayIsLatencyLessServiceTime},
	{"TLSAndReadErrors", TestTLSAndReadErrors},
	{"ExtractListAndCheckFields", TestExtractListAndCheckFields},
	{"RedirectsCountAsTheServer", TestRedirectsCountAsTheServer},
	{"CookiesPerVU", TestCookiesPerVU},
	{"AuthCountsAsTheServer", TestAuthCountsAsTheServer},
	{"ErrorMessages", TestErrorMessages},
}

// runEngineTests runs engineTests with load's plans on the engine given
// (nil: the default, the event loop), and checks that event loops ran or
// not as wantLoops says, and over TLS when overTLS is set.
func runEngineTests(t *testing.T, engine *bool, wantLoops bool) {
	forceEngine = engine
	defer func() { forceEngine = nil }()
	for _, tt := range engineTests {
		t.Run(tt.name, func(t *testing.T) {
			if why := notOverTLS[tt.name]; overTLS && why != "" {
				t.Skip(why)
			}
			if overTLS && raceEnabled && notOverTLSRace[tt.name] {
				t.Skip("a timing test: handshakes under -race are too slow")
			}
			before, fronted := loopsStarted.Load(), tlsFronted.Load()
			defer func() {
				if ran := loopsStarted.Load() != before; !t.Skipped() && ran != wantLoops {
					t.Errorf("%s: event loops ran: %v, want %v", tt.name, ran, wantLoops)
				}
				if !t.Skipped() && overTLS && tlsFronted.Load() == fronted {
					t.Errorf("%s made no connection over TLS", tt.name)
				}
			}()
			tt.f(t)
		})
	}
}

// A goroutine per VU (http.event_loop: false, and wherever the event loop
// cannot run a scenario) must count, time and classify exactly as the event
// loop, the default, does: the engine's tests run again with every plan's
// VUs on goroutines. (Off Linux, the tests run on goroutines already.)
func TestGoroutineEngine(t *testing.T) {
	goroutines := false
	runEngineTests(t, &goroutines, false)
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
  - {name: scheme, vus: 1, iterations: 1, flow: [{name: s, url: "${schemes}://127.0.0.1:1/"}]}
data:
  schemes: {values: [http]}
`
	want := map[string]string{"plain": EngineLoop, "bus": EngineGoroutines, "tls": EngineLoop, "scheme": EngineGoroutines}
	if runtime.GOOS != "linux" {
		want["plain"], want["tls"] = EngineGoroutines, EngineGoroutines
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

// The engine's tests again on event loops, over https: load puts a
// TLS-terminating proxy before every server the plan names by
// http://127.0.0.1 or http://localhost, and gives the plan the proxy's
// certificate authority, so that the same servers and assertions see the
// loop's TLS. The proxy opens one connection to the server per connection
// it accepts and closes each side when the other closes, so the servers'
// counts of requests and connections hold.
func TestEventLoopTLS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("http.event_loop needs Linux")
	}
	overTLS = true
	defer func() { overTLS = false }()
	runEngineTests(t, nil, true)
	t.Run("EventLoopFramingAndClosedConnections", TestEventLoopFramingAndClosedConnections)
}

// notOverTLS are the engineTests that TestEventLoopTLS does not run, and
// why.
var notOverTLS = map[string]string{
	"LatencyMatchesServerTime": "the proxy's hop (two more crossings of the loopback interface, two goroutines) " +
		"is latency the server does not see, as much as the 0.3 ms the test allows",
	"TLSAndReadErrors": "it has TLS servers of its own, and certificate authorities that are not the proxy's",
	"ErrorMessages":    "it has TLS servers of its own, and certificate authorities that are not the proxy's",
}

// notOverTLSRace are skipped over TLS under -race, where a handshake's
// instrumented cryptography takes the better part of a second of CPU,
// which on a busy machine starves the loop past the test's 200 ms grace.
var notOverTLSRace = map[string]bool{"InterruptedQueueIsCounted": true}

// raceEnabled is set under -race (race_test.go), whose instrumentation
// slows cryptography down tenfold.
var raceEnabled bool

// overTLS makes load run plans over https through tlsFront.
var overTLS bool

// tlsFronted counts the connections the TLS proxies have accepted.
var tlsFronted atomic.Int64

var plainURL = regexp.MustCompile(`http://(127\.0\.0\.1|localhost):(\d+)`)

// tlsFront starts a TLS-terminating proxy for each server src names by
// http://127.0.0.1:PORT or http://localhost:PORT, and returns src naming
// the proxies by https, with the PEM of their certificate authority. A
// port is tried first (a connection that sends nothing): one that refuses
// stays as it is, to be refused.
func tlsFront(t testing.TB, src string) (string, []byte) {
	cert, ca := tlsTestCert(t)
	conf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	fronts := map[string]string{}
	src = plainURL.ReplaceAllStringFunc(src, func(u string) string {
		m := plainURL.FindStringSubmatch(u)
		backend := "127.0.0.1:" + m[2]
		if f, ok := fronts[backend]; ok {
			return "https://" + m[1] + ":" + f
		}
		c, err := net.Dial("tcp", backend)
		if err != nil {
			return u
		}
		c.Close()
		ln, err := tls.Listen("tcp", "127.0.0.1:0", conf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go proxy(ln, backend)
		fronts[backend] = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		return "https://" + m[1] + ":" + fronts[backend]
	})
	return src, ca
}

// proxy relays each connection ln accepts to backend, and closes both
// sides as soon as either closes (a reset from the backend is passed on as
// a reset).
func proxy(ln net.Listener, backend string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		tlsFronted.Add(1)
		go func() {
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				return
			}
			done := make(chan error, 2)
			go func() { _, err := io.Copy(b, c); done <- err }()
			go func() { _, err := io.Copy(c, b); done <- err }()
			if err := <-done; errors.Is(err, syscall.ECONNRESET) {
				c.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
			}
			c.Close()
			b.Close()
		}()
	}
}

var testCert struct {
	once sync.Once
	cert tls.Certificate
	ca   []byte
}

// tlsTestCert is a self-signed certificate for 127.0.0.1, ::1 and
// localhost, and its PEM.
func tlsTestCert(t testing.TB) (tls.Certificate, []byte) {
	testCert.once.Do(func() {
		testCert.cert, testCert.ca = certFor(t, []string{"localhost"}, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	})
	return testCert.cert, testCert.ca
}

// certFor is a self-signed certificate (its own authority) for the names
// and addresses given, and its PEM.
func certFor(t testing.TB, names []string, ips ...net.IP) (tls.Certificate, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "perflab test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: ips, DNSNames: names,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// https straight to a TLS server, on both engines: the same counts as the
// server's, and on the event loop each VU keeps one connection.
func TestHTTPSOnBothEngines(t *testing.T) {
	var served, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, `{"vu":"`+r.URL.Query().Get("vu")+`"}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	for _, loop := range []bool{false, true} {
		if loop && runtime.GOOS != "linux" {
			continue
		}
		served.Store(0)
		conns.Store(0)
		p := load(t, srv.URL, `target: TARGET
http: {ca_file: ca.pem}
scenarios:
  - {name: s, vus: 4, iterations: 25, flow: [{name: a, url: "/a?vu=${vu}", check: {json: {$.vu: "${vu}"}}}]}
`, map[string]string{"ca.pem": pemCert(srv)})
		p.HTTP.EventLoop = &loop
		r := run(t, p)
		s := op(t, r.Stages[0], "a")
		if s.Count != 100 || s.ErrorCount() != 0 || served.Load() != 100 {
			t.Errorf("event loop %v: %d requests, errors %v, the server served %d; want 100, none, 100", loop, s.Count, s.Errors, served.Load())
		}
		if n := conns.Load(); n > 4 || loop && n != 4 {
			t.Errorf("event loop %v: %d connections for 4 VUs", loop, n)
		}
	}
}
