//go:build linux

package http

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// crypto/tls, fed a record one byte at a time by a connection that says
// EAGAIN (a temporary net.Error) whenever it has nothing, returns EAGAIN
// until the record is whole, then its plaintext, and goes on working: the
// loop's TLS reads rest on this (loop_tls.go). TLS 1.2 and 1.3, a short
// record and a message of two records.
func TestTLSRecordSplitAcrossReads(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS() // for its certificate
	conf := srv.TLS.Clone()
	srv.Close()
	conf.SessionTicketsDisabled = true // nothing in flight after the handshake
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cEnd, sEnd := net.Pipe()
		gate, capture := &gateConn{Conn: cEnd}, &captureConn{Conn: sEnd}
		client := tls.Client(gate, &tls.Config{InsecureSkipVerify: true, MaxVersion: version}) //nolint:gosec // a test server
		server := tls.Server(capture, conf)
		errc := make(chan error, 1)
		go func() { errc <- server.Handshake() }()
		if err := client.Handshake(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		gate.nonblocking, capture.capturing = true, true
		buf := make([]byte, 32<<10)
		for _, msg := range []string{"first record", strings.Repeat("x", 20000)} {
			if _, err := server.Write([]byte(msg)); err != nil {
				t.Fatal(err)
			}
			wire := capture.out
			capture.out = nil
			var got []byte
			eagain := 0
			for i := range wire {
				gate.pending = append(gate.pending, wire[i])
				for {
					n, err := client.Read(buf)
					got = append(got, buf[:n]...)
					if errors.Is(err, syscall.EAGAIN) {
						eagain++
						break
					}
					if err != nil {
						t.Fatalf("TLS %x, byte %d of %d: %v", version, i, len(wire), err)
					}
				}
			}
			if string(got) != msg {
				t.Errorf("TLS %x: decoded %d bytes, want %d", version, len(got), len(msg))
			}
			if eagain < len(wire) {
				t.Errorf("TLS %x: %d EAGAINs for %d bytes fed one by one", version, eagain, len(wire))
			}
		}
		cEnd.Close()
		sEnd.Close()
	}
}

// gateConn reads as a pipe does until nonblocking; then it reads only the
// bytes the test puts in pending, and says EAGAIN when there are none, as
// the loop's socket does.
type gateConn struct {
	net.Conn
	nonblocking bool
	pending     []byte
}

func (g *gateConn) Read(b []byte) (int, error) {
	if !g.nonblocking {
		return g.Conn.Read(b)
	}
	if len(g.pending) == 0 {
		return 0, syscall.EAGAIN
	}
	n := copy(b, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// captureConn writes to a pipe until capturing; then it keeps what is
// written.
type captureConn struct {
	net.Conn
	capturing bool
	out       []byte
}

func (c *captureConn) Write(b []byte) (int, error) {
	if !c.capturing {
		return c.Conn.Write(b)
	}
	c.out = append(c.out, b...)
	return len(b), nil
}

// step is one request of a loopScript, sent after a pause.
type step struct {
	r     *Request
	pause time.Duration
}

// runLoop runs vus exchanges on one loop, each sending the steps in turn,
// rounds times, and returns each exchange's results in order.
func runLoop(t *testing.T, c *Client, vus, rounds int, steps ...step) [][]Result {
	t.Helper()
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	return runOn(t, l, vus, rounds, steps...)
}

// runOn is runLoop on a loop made beforehand.
func runOn(t *testing.T, l *Loop, vus, rounds int, steps ...step) [][]Result {
	t.Helper()
	results := make([][]Result, vus)
	left := vus
	for v := range vus {
		x := l.NewExchange()
		vars := testenv.Vars{"vu": strconv.Itoa(v + 1)}
		var s Scratch
		i := 0
		var send func()
		tm := l.NewTimer(func() { send() })
		next := func() {
			if i == rounds*len(steps) {
				if left--; left == 0 {
					l.Stop()
				}
				return
			}
			if p := steps[i%len(steps)].pause; p > 0 {
				l.Schedule(tm, p)
				return
			}
			send()
		}
		send = func() {
			r := steps[i%len(steps)].r
			i++
			x.Send(r, vars, &s, func(res Result) {
				results[v] = append(results[v], res)
				next()
			})
		}
		l.Post(next)
	}
	waitLoop(t, l, 60*time.Second, "the loop did not finish")
	return results
}

// get compiles a GET of url (timeout 0: 10 s).
func get(t *testing.T, url string, timeout time.Duration, check *plan.Check) *Request {
	t.Helper()
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	r, err := Compile(nil, nil, &plan.Step{Name: url, Method: "GET", URL: text(url), Check: check}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tlsServer is an httptest TLS server that counts what it sees.
type tlsServer struct {
	*httptest.Server
	requests, conns, resumed atomic.Int64
	mu                       sync.Mutex
	alpn, sni                map[string]int
}

// newTLSServer starts a server with h; configure, if not nil, sees it
// before it starts.
func newTLSServer(t *testing.T, h nethttp.HandlerFunc, configure ...func(*nethttp.Server)) *tlsServer {
	s := &tlsServer{alpn: map[string]int{}, sni: map[string]int{}}
	s.Server = httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		s.alpn[r.TLS.NegotiatedProtocol]++
		s.mu.Unlock()
		if r.TLS.DidResume {
			s.resumed.Add(1)
		}
		if h != nil {
			h(w, r)
		}
	}))
	s.Config.ConnState = func(c net.Conn, st nethttp.ConnState) {
		if st == nethttp.StateNew {
			s.conns.Add(1)
		}
	}
	s.TLS = &tls.Config{GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
		s.mu.Lock()
		s.sni[hello.ServerName]++
		s.mu.Unlock()
		return nil, nil
	}}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes that fail on purpose
	for _, f := range configure {
		f(s.Config)
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// seen returns how many requests negotiated an ALPN protocol and how many
// handshakes sent a server name.
func (s *tlsServer) seen(alpn, sni string) (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.alpn[alpn], s.sni[sni]
}

func (s *tlsServer) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.Certificate())
	return p
}

func checkOK(t *testing.T, results [][]Result, want int) {
	t.Helper()
	n := 0
	for v, rs := range results {
		for i, r := range rs {
			n++
			if r.Err != metrics.OK || r.Status != 200 {
				t.Errorf("exchange %d, request %d: %v %d %s", v, i, r.Err, r.Status, r.Detail)
			}
		}
	}
	if n != want {
		t.Errorf("%d results, want %d", n, want)
	}
}

// Every request over https counted once, each VU on one kept-alive
// connection, ALPN http/1.1.
func TestLoopHTTPSKeepAlive(t *testing.T) {
	s := newTLSServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "ok") })
	c := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: true, RootCAs: s.pool()})
	results := runLoop(t, c, 5, 20, step{r: get(t, s.URL+"/?vu=${vu}", 0, nil)})
	checkOK(t, results, 100)
	if n := s.requests.Load(); n != 100 {
		t.Errorf("server served %d requests, want 100", n)
	}
	if n := s.conns.Load(); n != 5 {
		t.Errorf("server saw %d connections, want 5 (one per VU, kept alive)", n)
	}
	if alpn, noSNI := s.seen("http/1.1", ""); alpn != 100 || noSNI != 5 {
		t.Errorf("%d requests on ALPN http/1.1, %d handshakes without SNI (an IP address); want 100 and 5", alpn, noSNI)
	}
}

// Bodies longer than a TLS record (16 KB), by Content-Length and chunked,
// and request bodies of several records, one to a server that waits before
// it reads (the socket takes only part: the rest is written on EPOLLOUT).
func TestLoopHTTPSLargeBodies(t *testing.T) {
	body := func(n int) string { // ends with a marker the check looks for
		end := "END-" + strconv.Itoa(n)
		return strings.Repeat("0123456789abcdef", n/16)[:n-len(end)] + end
	}
	s := newTLSServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.Method == "POST" {
			if r.URL.Path == "/slow" {
				time.Sleep(100 * time.Millisecond)
			}
			b, _ := io.ReadAll(r.Body)
			n = len(b)
			io.WriteString(w, "got "+strconv.Itoa(n))
			return
		}
		b := body(n)
		if r.URL.Path == "/chunked" {
			for len(b) > 0 { // flushed in parts: chunked
				k := min(len(b), 5000)
				io.WriteString(w, b[:k])
				w.(nethttp.Flusher).Flush()
				b = b[k:]
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		io.WriteString(w, b)
	})
	c := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: true, RootCAs: s.pool()})
	var steps []step
	sizes := []int{20000, 1 << 20}
	for _, n := range sizes {
		for _, path := range []string{"/length", "/chunked"} {
			steps = append(steps, step{r: get(t, s.URL+path+"?n="+strconv.Itoa(n), 0, &plan.Check{BodyContains: []string{"END-" + strconv.Itoa(n)}})})
		}
	}
	post, err := Compile(nil, nil, &plan.Step{Name: "post", Method: "POST", URL: text(s.URL + "/post"),
		Body: text(strings.Repeat("p", 100000)), Check: &plan.Check{BodyContains: []string{"got 100000"}}}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := Compile(nil, nil, &plan.Step{Name: "slow", Method: "POST", URL: text(s.URL + "/slow"),
		Body: text(strings.Repeat("s", 8<<20)), Check: &plan.Check{BodyContains: []string{"got 8388608"}}}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	steps = append(steps, step{r: post}, step{r: slow})
	results := runLoop(t, c, 2, 3, steps...)
	checkOK(t, results, 2*3*len(steps))
	for _, rs := range results {
		for i, r := range rs[:len(steps)-2] {
			if want := sizes[i/2]; r.Bytes != want {
				t.Errorf("request %d: %d bytes, want %d", i, r.Bytes, want)
			}
		}
	}
	if n := s.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// A server that closes idle connections: the next request reconnects and
// resumes the TLS session (an abbreviated handshake).
func TestLoopHTTPSReconnectsAndResumes(t *testing.T) {
	s := newTLSServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "ok") },
		func(srv *nethttp.Server) { srv.IdleTimeout = 50 * time.Millisecond })
	c := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: true, RootCAs: s.pool()})
	results := runLoop(t, c, 2, 4, step{r: get(t, s.URL+"/", 0, nil), pause: 300 * time.Millisecond})
	checkOK(t, results, 8)
	if n := s.conns.Load(); n != 8 {
		t.Errorf("%d connections, want 8 (the server closed each when idle)", n)
	}
	if n := s.requests.Load(); n != 8 {
		t.Errorf("%d requests served, want 8", n)
	}
	// Only the first connections (one per VU, at once) need a full
	// handshake.
	t.Logf("resumed %d", s.resumed.Load())
	if n := s.resumed.Load(); n < 6 {
		t.Errorf("%d of 8 connections resumed a session, want at least 6", n)
	}
}

// A certificate that does not verify fails as kind tls before any request
// reaches the server; the plan's certificate authorities or
// insecure_skip_verify make it pass. The server name sent (SNI) and
// verified is the URL's host.
func TestLoopHTTPSCertificates(t *testing.T) {
	s := newTLSServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "ok") })
	byName := strings.Replace(s.URL, "127.0.0.1", "localhost", 1) // the certificate has no such name
	cases := []struct {
		name string
		opts Options
		url  string
		kind metrics.ErrKind
	}{
		{"system roots", Options{}, s.URL, metrics.TLS},
		{"ca_file", Options{RootCAs: s.pool()}, s.URL, metrics.OK},
		{"insecure_skip_verify", Options{InsecureSkipVerify: true}, s.URL, metrics.OK},
		{"wrong name", Options{RootCAs: s.pool()}, byName, metrics.TLS},
		{"insecure_skip_verify, wrong name", Options{InsecureSkipVerify: true}, byName, metrics.OK},
	}
	for _, tc := range cases {
		before := s.requests.Load()
		tc.opts.Timeout, tc.opts.KeepAlive = 10*time.Second, true
		results := runLoop(t, NewClient(tc.opts), 2, 3, step{r: get(t, tc.url+"/", 0, nil)})
		for _, r := range append(results[0], results[1]...) {
			if r.Err != tc.kind {
				t.Errorf("%s: %v (%s), want %v", tc.name, r.Err, r.Detail, tc.kind)
			}
		}
		served := s.requests.Load() - before
		if tc.kind != metrics.OK && served != 0 {
			t.Errorf("%s: the server was sent %d requests, want none", tc.name, served)
		}
		if tc.kind == metrics.OK && served != 6 {
			t.Errorf("%s: the server was sent %d requests, want 6", tc.name, served)
		}
	}
	if _, n := s.seen("", "localhost"); n == 0 {
		t.Error("SNI: localhost never sent")
	}
}

// A server that accepts TCP and never answers the handshake: the request
// times out at its deadline (as with the pooled client, the timeout covers
// connect, handshake and exchange; connect_timeout the connect only), and
// the handshake's goroutine ends. Servers that close at once, or answer
// in plain HTTP, fail the handshake as connection_reset and tls.
func TestLoopHTTPSHandshakeFailures(t *testing.T) {
	hang := listen(t, func(c net.Conn) {})
	closing := listen(t, func(c net.Conn) { c.Close() })
	plain := listen(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	})
	c := NewClient(Options{Timeout: 10 * time.Second, ConnectTimeout: 100 * time.Millisecond, KeepAlive: true})
	const short = 300 * time.Millisecond
	cases := []struct {
		addr    string
		timeout time.Duration
		kind    metrics.ErrKind
	}{{hang, short, metrics.Timeout}, {closing, 10 * time.Second, metrics.ConnReset}, {plain, 10 * time.Second, metrics.TLS}}
	for _, tc := range cases {
		start := time.Now()
		results := runLoop(t, c, 2, 2, step{r: get(t, "https://"+tc.addr+"/", tc.timeout, nil)})
		took := time.Since(start)
		for _, r := range append(results[0], results[1]...) {
			if r.Err != tc.kind {
				t.Errorf("%s: %v (%s), want %v", tc.addr, r.Err, r.Detail, tc.kind)
			}
			if tc.kind == metrics.Timeout && (r.Latency < short || r.Latency > short+3*time.Second) {
				t.Errorf("timed out after %v, want %v (+ a loaded machine's delay)", r.Latency, short)
			}
		}
		if tc.kind == metrics.Timeout && took < 2*short {
			t.Errorf("two timeouts in a row took %v", took)
		}
	}
	waitHandshakes(t)
}

// A loop stopped with handshakes in flight ends them.
func TestLoopStopsDuringHandshakes(t *testing.T) {
	hang := listen(t, func(c net.Conn) {})
	c := NewClient(Options{Timeout: 30 * time.Second, KeepAlive: true})
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, "https://"+hang+"/", 0, nil)
	for range 3 {
		x := l.NewExchange()
		l.Post(func() { x.Send(r, testenv.Vars{}, &Scratch{}, func(Result) { t.Error("a result after Stop") }) })
	}
	stop := l.NewTimer(l.Stop)
	l.Post(func() { l.Schedule(stop, 200*time.Millisecond) })
	waitLoop(t, l, 10*time.Second, "the loop did not stop")
	waitHandshakes(t)
}

func waitHandshakes(t *testing.T) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); handshakes.Load() != 0; {
		if time.Now().After(end) {
			t.Fatalf("%d handshake goroutines still running", handshakes.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A server whose bytes, handshake and records, arrive a few at a time:
// records split across many reads of the loop decode, on kept-alive
// connections.
func TestLoopHTTPSRecordsSplitAcrossReads(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS() // for its certificate
	conf := srv.TLS.Clone()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	srv.Close()
	var served atomic.Int64
	body := strings.Repeat("0123456789", 2000) + "END"
	addr := listen(t, func(c net.Conn) {
		tc := tls.Server(trickleConn{c}, conf)
		br := bufio.NewReader(tc)
		for {
			req, err := nethttp.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			served.Add(1)
			io.WriteString(tc, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
		}
	})
	c := NewClient(Options{Timeout: 20 * time.Second, KeepAlive: true, RootCAs: pool})
	results := runLoop(t, c, 2, 3, step{r: get(t, "https://"+addr+"/", 0, &plan.Check{BodyContains: []string{"9END"}})})
	checkOK(t, results, 6)
	for _, rs := range results {
		for _, r := range rs {
			if r.Bytes != len(body) {
				t.Errorf("%d bytes, want %d", r.Bytes, len(body))
			}
		}
	}
	if served.Load() != 6 {
		t.Errorf("served %d, want 6", served.Load())
	}
}

// trickleConn writes 61 bytes at a time, 200 µs apart.
type trickleConn struct{ net.Conn }

func (c trickleConn) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Conn.Write(b[n:min(n+61, len(b))])
		n += k
		if err != nil {
			return n, err
		}
		time.Sleep(200 * time.Microsecond)
	}
	return n, nil
}

// One VU's steps alternate between an http and an https URL (absolute
// URLs, whatever the target): each change of scheme is a new connection.
func TestLoopMixesHTTPAndHTTPS(t *testing.T) {
	s := newTLSServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "tls") })
	var plainConns atomic.Int64
	p := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "plain") }))
	p.Config.ConnState = func(c net.Conn, st nethttp.ConnState) {
		if st == nethttp.StateNew {
			plainConns.Add(1)
		}
	}
	p.Start()
	defer p.Close()
	c := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: true, RootCAs: s.pool()})
	results := runLoop(t, c, 1, 3,
		step{r: get(t, p.URL+"/", 0, &plan.Check{BodyContains: []string{"plain"}})},
		step{r: get(t, s.URL+"/", 0, &plan.Check{BodyContains: []string{"tls"}})},
		step{r: get(t, s.URL+"/again", 0, &plan.Check{BodyContains: []string{"tls"}})})
	checkOK(t, results, 9)
	if s.conns.Load() != 3 || plainConns.Load() != 3 || s.requests.Load() != 6 {
		t.Errorf("connections: %d https, %d http; %d https requests; want 3, 3, 6", s.conns.Load(), plainConns.Load(), s.requests.Load())
	}
}
