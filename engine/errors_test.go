package engine

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	phttp "github.com/perflab/perflab/protocol/http"
)

// tlsCounted starts a TLS server with cert (httptest's own when nil) that
// counts the connections it accepts in conns.
func tlsCounted(t testing.TB, cert *tls.Certificate, conns *atomic.Int64) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = discardLog // the handshakes that fail, on purpose
	if cert != nil {
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// messages is an operation's messages of a phase.
func messages(t testing.TB, ph *metrics.Phase, name string) []metrics.ErrorMessage {
	return op(t, ph, name).Messages.List()
}

// The failures of a step are counted by what they said: two certificates
// refused for two reasons are two messages of kind tls, a server that
// answers 503 or resets is two messages, and failures whose words differ
// by an id are one; each counted as often as the servers saw it happen.
func TestErrorMessages(t *testing.T) {
	var unknownConns, otherHostConns atomic.Int64
	unknown := tlsCounted(t, nil, &unknownConns)
	cert, ca := certFor(t, nil, net.IPv4(10, 0, 0, 1))
	otherHost := tlsCounted(t, &cert, &otherHostConns)

	var n, unavailable, resets, ids atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if n.Add(1)%2 == 0 {
				unavailable.Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			resets.Add(1)
			reset(w)
		case "/order":
			i := ids.Add(1)
			fmt.Fprintf(w, `{"status":"order %d failed, request %08x-0000-4000-8000-%012x"}`, 10000+i, i*7919, i)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
http: {ca_file: ca.pem}
scenarios:
  - name: s
    vus: 3
    iterations: 8
    flow:
      - {name: unknown ca, url: "`+unknown.URL+`/"}
      - {name: other host, url: "`+otherHost.URL+`/"}
      - {name: flaky, url: /flaky}
      - {name: order, url: /order, check: {json: {$.status: ok}}}
`, map[string]string{"ca.pem": string(ca)})
	r := run(t, p)
	ph := r.Stages[0]
	for _, c := range []struct {
		op   string
		want []metrics.ErrorMessage
	}{
		{"unknown ca", []metrics.ErrorMessage{{Kind: "tls", Message: "x509: certificate signed by unknown authority", Count: unknownConns.Load()}}},
		{"other host", []metrics.ErrorMessage{{Kind: "tls", Message: "x509: certificate is valid for 10.0.0.1, not 127.0.0.1", Count: otherHostConns.Load()}}},
		{"flaky", []metrics.ErrorMessage{
			{Kind: "http_5xx", Message: "HTTP 503 Service Unavailable", Count: unavailable.Load()},
			{Kind: "connection_reset", Message: "read: connection reset by peer", Count: resets.Load()},
		}},
		{"order", []metrics.ErrorMessage{{Kind: "check_failed", Message: "json $.status is order <n> failed, request <uuid>, want ok", Count: ids.Load()}}},
	} {
		if got := messages(t, ph, c.op); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.op, got, c.want)
		}
		if s := op(t, ph, c.op); s.Count != 24 || s.ErrorCount() != 24 {
			t.Errorf("%s: %d requests, %d failed; want 24 and 24", c.op, s.Count, s.ErrorCount())
		}
	}
	if unavailable.Load() == 0 || resets.Load() == 0 {
		t.Errorf("the server answered 503 %d times and reset %d: want both", unavailable.Load(), resets.Load())
	}
}

// The same failures read the same on either engine: the event loop's
// words and the pooled client's are one message.
func TestEnginesSayTheSame(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop runs on Linux only")
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := l.Addr().String()
	l.Close()
	var conns atomic.Int64
	tlsSrv := tlsCounted(t, nil, &conns)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/500" {
			w.WriteHeader(500)
			return
		}
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		switch r.URL.Path {
		case "/reset":
			conn.(*net.TCPConn).SetLinger(0)
		case "/short":
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")
		case "/garbage":
			buf.WriteString("this is not HTTP\r\n\r\n")
		case "/slow":
			time.Sleep(300 * time.Millisecond)
		}
		buf.Flush()
	}))
	defer srv.Close()
	body := `target: TARGET
scenarios:
  - name: s
    vus: 1
    iterations: 2
    flow:
      - {name: e500, url: /500}
      - {name: reset, url: /reset}
      - {name: close, url: /close}
      - {name: short, url: /short}
      - {name: garbage, url: /garbage}
      - {name: slow, url: /slow, timeout: 100ms}
      - {name: refused, url: "http://` + refused + `/"}
      - {name: tls, url: "` + tlsSrv.URL + `/"}
      - {name: check, url: /500, check: {status: 200}}
`
	want := map[string]metrics.ErrorMessage{
		"e500":    {Kind: "http_5xx", Message: "HTTP 500 Internal Server Error", Count: 2},
		"reset":   {Kind: "connection_reset", Message: "read: connection reset by peer", Count: 2},
		"close":   {Kind: "connection_reset", Message: "the server closed the connection before responding", Count: 2},
		"short":   {Kind: "read", Message: "the server closed the connection mid-response", Count: 2},
		"garbage": {Kind: "read", Message: "malformed response", Count: 2},
		"slow":    {Kind: "timeout", Message: "timeout", Count: 2},
		"refused": {Kind: "connection_refused", Message: "connect: connection refused", Count: 2},
		"tls":     {Kind: "tls", Message: "x509: certificate signed by unknown authority", Count: 2},
		"check":   {Kind: "http_5xx", Message: "HTTP 500 Internal Server Error", Count: 2},
	}
	for _, loop := range []bool{true, false} {
		forceEngine = &loop
		r := run(t, load(t, srv.URL, body, nil))
		forceEngine = nil
		for name, w := range want {
			if got := messages(t, r.Stages[0], name); !slices.Equal(got, []metrics.ErrorMessage{w}) {
				t.Errorf("event loop %v, %s: %v, want %v", loop, name, got, w)
			}
		}
	}
}

// reset resets the connection of the request w answers.
func reset(w http.ResponseWriter) {
	conn, _, _ := w.(http.Hijacker).Hijack()
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}

// discardLog is a server's error log that keeps nothing.
var discardLog = log.New(io.Discard, "", 0)

// Failed requests and their responses go to the failure log, on either
// engine: as many as it takes and no more, each request as sent and each
// response as received (a reset has none), their secrets redacted.
func TestFailureLog(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop runs on Linux only")
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ok":
		case n.Add(1)%2 == 0:
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t-session"})
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"overloaded"}`+strings.Repeat(".", 2*phttp.FailureBytes))
		default:
			reset(w)
		}
	}))
	defer srv.Close()
	body := `target: TARGET
scenarios:
  - name: s
    vus: 2
    iterations: 10
    flow:
      - {name: ok, url: /ok}
      - name: pay
        method: POST
        url: /pay
        headers: {Authorization: "Bearer t0ken-${vu}", X-Api-Key: k3y, Cookie: "id=c00kie"}
        body: '{"amount":${vu}}'
`
	for _, loop := range []bool{true, false} {
		n.Store(0)
		forceEngine = &loop
		p := load(t, srv.URL, body, nil)
		forceEngine = nil
		var out bytes.Buffer
		log := phttp.NewFailureLog(&out, 7)
		r, err := Run(context.Background(), p, Options{RunID: "test", Seed: 1, Failures: log})
		if err != nil {
			t.Fatal(err)
		}
		if s := op(t, r.Stages[0], "pay"); s.ErrorCount() != 20 {
			t.Fatalf("event loop %v: %d failed, want 20", loop, s.ErrorCount())
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 7 {
			t.Fatalf("event loop %v: %d failures written, want 7:\n%s", loop, len(lines), out.String())
		}
		kinds := map[string]int{}
		for _, l := range lines {
			var f phttp.Failure
			if err := json.Unmarshal([]byte(l), &f); err != nil {
				t.Fatal(err)
			}
			kinds[f.Kind]++
			if f.Step != "pay" || f.Scenario != "s" || f.VU < 1 || f.VU > 2 || !strings.HasPrefix(f.Request, "POST /pay HTTP/1.1\r\n") ||
				!strings.HasSuffix(f.Request, fmt.Sprintf(`{"amount":%d}`, f.VU)) {
				t.Errorf("event loop %v: %+v", loop, f)
			}
			for _, secret := range []string{"t0ken", "k3y", "c00kie", "s3cr3t"} {
				if strings.Contains(l, secret) {
					t.Errorf("event loop %v: %q written: %s", loop, secret, l)
				}
			}
			if !strings.Contains(f.Request, "Authorization: [redacted]\r\n") || !strings.Contains(f.Request, "Cookie: [redacted]\r\n") {
				t.Errorf("event loop %v: request %q", loop, f.Request)
			}
			switch f.Kind {
			case "http_5xx":
				if f.Status != 503 || f.Message != "HTTP 503 Service Unavailable" || !strings.HasPrefix(f.Response, "HTTP/1.1 503 Service Unavailable\r\n") ||
					!strings.Contains(f.Response, "Set-Cookie: [redacted]\r\n") || !strings.Contains(f.Response, "\r\n\r\n"+`{"error":"overloaded"}`) ||
					!f.ResponseTruncated || len(f.Response) > phttp.FailureBytes {
					t.Errorf("event loop %v: 503: %+v", loop, f)
				}
			case "connection_reset":
				if f.Message != "read: connection reset by peer" || f.Response != "" {
					t.Errorf("event loop %v: reset: %+v", loop, f)
				}
			default:
				t.Errorf("event loop %v: %+v", loop, f)
			}
		}
		if kinds["http_5xx"] == 0 || kinds["connection_reset"] == 0 {
			t.Errorf("event loop %v: kinds %v, want both", loop, kinds)
		}
	}
}
