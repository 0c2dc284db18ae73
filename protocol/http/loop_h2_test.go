//go:build linux

package http

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// h2Server is an HTTP/2 server of Go's (h2c through x/net/http2/h2c, or
// TLS with ALPN) that counts its requests by path, its connections, and
// any request that did not come over HTTP/2.
type h2Server struct {
	*httptest.Server
	conns, notH2 atomic.Int64
	mu           sync.Mutex
	counts       map[string]int
}

// newH2Server starts a server for h; with tls it negotiates h2 by ALPN,
// else it takes h2c with prior knowledge, configured by conf.
func newH2Server(t *testing.T, tls bool, conf *http2.Server, h nethttp.HandlerFunc) *h2Server {
	s := &h2Server{counts: map[string]int{}}
	count := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.ProtoMajor != 2 {
			s.notH2.Add(1)
		}
		s.mu.Lock()
		s.counts[r.URL.Path]++
		s.mu.Unlock()
		h(w, r)
	})
	if conf == nil {
		conf = &http2.Server{}
	}
	if tls {
		s.Server = httptest.NewUnstartedServer(count)
		s.EnableHTTP2 = true
	} else {
		s.Server = httptest.NewUnstartedServer(h2c.NewHandler(count, conf))
	}
	s.Config.ConnState = func(c net.Conn, st nethttp.ConnState) {
		if st == nethttp.StateNew {
			s.conns.Add(1)
		}
	}
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes that fail on purpose
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func (s *h2Server) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

// h2Client is a client of http.version 2 for s (nil: any h2c server),
// trusting its certificate.
func h2Client(s *httptest.Server) *Client {
	o := Options{Timeout: 10 * time.Second, KeepAlive: true, HTTP2: true}
	if s != nil && s.TLS != nil {
		o.RootCAs = x509.NewCertPool()
		o.RootCAs.AddCert(s.Certificate())
	}
	return NewClient(o)
}

// step compiles a step of the tests' plans.
func h2Step(t *testing.T, st *plan.Step) step {
	t.Helper()
	r, err := Compile(nil, nil, st, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return step{r: r}
}

// Each VU on a connection of its own (h2c, prior knowledge), every
// request counted once by the server and over HTTP/2; status and body
// checks pass and fail as they do on HTTP/1.1.
func TestLoopH2cCountsAndChecks(t *testing.T) {
	s := newH2Server(t, false, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/missing" {
			nethttp.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok "+r.URL.Query().Get("vu"))
	})
	results := runLoop(t, h2Client(nil), 4, 25,
		h2Step(t, &plan.Step{Name: "ok", Method: "GET", URL: text(s.URL + "/ok?vu=${vu}"), Check: &plan.Check{Status: []int{200}, BodyContains: []string{"ok "}}}),
		h2Step(t, &plan.Step{Name: "missing", Method: "GET", URL: text(s.URL + "/missing")}),
		h2Step(t, &plan.Step{Name: "nope", Method: "GET", URL: text(s.URL + "/nope"), Check: &plan.Check{BodyContains: []string{"nope"}}}))
	for v, rs := range results {
		if len(rs) != 75 {
			t.Fatalf("VU %d: %d results, want 75", v, len(rs))
		}
		for i, r := range rs {
			var want metrics.ErrKind
			status := 200
			switch i % 3 {
			case 1:
				want, status = metrics.HTTP4xx, 404
			case 2:
				want = metrics.CheckFailed
			}
			if r.Err != want || r.Status != status {
				t.Errorf("VU %d, request %d: %v %d (%s), want %v %d", v, i, r.Err, r.Status, r.Detail, want, status)
			}
		}
	}
	for _, p := range []string{"/ok", "/missing", "/nope"} {
		if n := s.count(p); n != 100 {
			t.Errorf("server served %s %d times, want 100", p, n)
		}
	}
	if n := s.conns.Load(); n != 4 {
		t.Errorf("server saw %d connections, want 4 (one per VU)", n)
	}
	if n := s.notH2.Load(); n != 0 {
		t.Errorf("%d requests came over HTTP/1", n)
	}
}

// Over TLS the loop offers ALPN h2 alone: a server that takes it serves
// every request over HTTP/2, a VU a connection; one that does not (HTTP/1.1
// only) fails each request as tls, without serving it.
func TestLoopH2TLS(t *testing.T) {
	s := newH2Server(t, true, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.TLS == nil || r.TLS.NegotiatedProtocol != "h2" {
			w.WriteHeader(500)
		}
		io.WriteString(w, "ok")
	})
	results := runLoop(t, h2Client(s.Server), 3, 20, h2Step(t, &plan.Step{Name: "tls", Method: "GET", URL: text(s.URL + "/tls?vu=${vu}")}))
	checkOK(t, results, 60)
	if n, c := s.count("/tls"), s.conns.Load(); n != 60 || c != 3 {
		t.Errorf("server served %d requests on %d connections, want 60 on 3", n, c)
	}

	// Go's server refuses a client whose protocols it has none of (an
	// alert); a server that ignores ALPN leaves the loop to refuse it.
	h1 := newH2Server(t, true, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) {})
	h1.TLS.NextProtos = []string{"http/1.1"}
	results = runLoop(t, h2Client(h1.Server), 1, 2, h2Step(t, &plan.Step{Name: "h1", Method: "GET", URL: text(h1.URL + "/h1")}))
	for _, r := range results[0] {
		if r.Err != metrics.TLS || !strings.Contains(r.Detail, "no application protocol") {
			t.Errorf("a server without h2: %v %q, want tls, no application protocol", r.Err, r.Detail)
		}
	}
	if n := h1.count("/h1"); n != 0 {
		t.Errorf("the HTTP/1.1 server served %d requests, want 0", n)
	}
	cfg := &tls.Config{Certificates: s.TLS.Certificates} // no NextProtos: ALPN ignored
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }() // handshakes, reads until perflab closes
		}
	}()
	results = runLoop(t, h2Client(s.Server), 1, 2, h2Step(t, &plan.Step{Name: "none", Method: "GET", URL: text("https://" + ln.Addr().String() + "/")}))
	for _, r := range results[0] {
		if r.Err != metrics.TLS || r.Detail != "tls: the server did not negotiate HTTP/2 (ALPN h2)" {
			t.Errorf("a server that ignores ALPN: %v %q, want tls saying so", r.Err, r.Detail)
		}
	}
}

// A flow over HTTP/2 on the loop: a login that sets a cookie and
// redirects, a page that needs the cookie and gives a token (extracted
// from its JSON and a header), an API call that needs both. The server
// counts each request; the redirect is a hop of the login's result.
func TestLoopH2ExtractRedirectCookies(t *testing.T) {
	var bad atomic.Int64
	s := newH2Server(t, false, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		vu := r.URL.Query().Get("vu")
		switch r.URL.Path {
		case "/login":
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "sid", Value: "s-" + vu, Path: "/"})
			nethttp.Redirect(w, r, "/home?vu="+vu, nethttp.StatusFound)
		case "/home":
			if c, err := r.Cookie("sid"); err != nil || c.Value != "s-"+vu {
				bad.Add(1)
				w.WriteHeader(403)
				return
			}
			w.Header().Set("X-Token", "h-"+vu)
			io.WriteString(w, `{"token": "t-`+vu+`"}`)
		case "/api":
			c, err := r.Cookie("sid")
			if err != nil || c.Value != "s-"+vu || r.URL.Query().Get("token") != "t-"+vu || r.Header.Get("X-Token") != "h-"+vu {
				bad.Add(1)
				w.WriteHeader(403)
				return
			}
			io.WriteString(w, "done "+vu)
		}
	})
	login := h2Step(t, &plan.Step{Name: "login", Method: "GET", URL: text(s.URL + "/login?vu=${vu}"),
		Extract: []*plan.Extract{{Name: "token", JSON: "$.token"}, {Name: "htoken", Header: "X-Token"}}})
	api := h2Step(t, &plan.Step{Name: "api", Method: "GET", URL: text(s.URL + "/api?vu=${vu}&token=${token}"),
		Headers: []plan.Pair{{Name: "X-Token", Value: text("${htoken}")}}, Check: &plan.Check{BodyContains: []string{"done"}}})
	results := runLoop(t, h2Client(nil), 3, 10, login, api)
	for v, rs := range results {
		for i, r := range rs {
			if r.Err != metrics.OK || r.Status != 200 {
				t.Errorf("VU %d, request %d: %v %d %s", v, i, r.Err, r.Status, r.Detail)
			}
			if want := 1 - i%2; len(r.Hops) != want {
				t.Errorf("VU %d, request %d: %d hops, want %d", v, i, len(r.Hops), want)
			}
		}
	}
	for _, p := range []string{"/login", "/home", "/api"} {
		if n := s.count(p); n != 30 {
			t.Errorf("server served %s %d times, want 30", p, n)
		}
	}
	if n := bad.Load(); n != 0 {
		t.Errorf("%d requests came without their cookie or token", n)
	}
}

// Large bodies both ways through tiny flow-control windows: the server
// lets 1000 bytes of a stream in at a time, perflab 1000 bytes out. Each
// body arrives whole and byte-exact, and the connection goes on.
func TestLoopH2FlowControl(t *testing.T) {
	was := h2Window
	h2Window = 1000
	t.Cleanup(func() { h2Window = was })
	body := func(n int, seed string) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(seed + strconv.Itoa(i) + ",")
		}
		return b.String()[:n-3] + "END"
	}
	up, down := body(300_000, "u"), body(500_000, "d")
	var upOK atomic.Int64
	s := newH2Server(t, false, &http2.Server{MaxUploadBufferPerStream: 1000, MaxUploadBufferPerConnection: 65535},
		func(w nethttp.ResponseWriter, r *nethttp.Request) {
			if r.Method == "POST" {
				got, _ := io.ReadAll(r.Body)
				if sha256.Sum256(got) == sha256.Sum256([]byte(up)) {
					upOK.Add(1)
				}
			}
			io.WriteString(w, down)
		})
	c := NewClient(Options{Timeout: 30 * time.Second, KeepAlive: true, HTTP2: true, BodyLimit: 1 << 20})
	v := newVU(t, Options{}, true)
	v.c = c
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	v.loop, v.x = l, l.NewExchange()
	stopped := make(chan struct{})
	go func() { l.Run(); close(stopped) }()
	t.Cleanup(func() { l.Post(l.Stop); <-stopped })
	post := compile(t, &plan.Step{Name: "up", Method: "POST", URL: text(s.URL + "/up"), Body: text(up), Check: &plan.Check{BodyContains: []string{"END"}}})
	get := compile(t, &plan.Step{Name: "down", Method: "GET", URL: text(s.URL + "/down"), Check: &plan.Check{BodyContains: []string{"END"}}})
	for i := range 3 {
		for _, r := range []*Request{post, get} {
			res := v.do(r, nil)
			if res.Err != metrics.OK || res.Bytes != len(down) {
				t.Fatalf("%s %d: %v %q, %d bytes; want OK, %d", r.Name, i, res.Err, res.Detail, res.Bytes, len(down))
			}
			got := make(chan []byte)
			l.Post(func() { got <- bytes.Clone(v.x.resp.body()) })
			if b := <-got; string(b) != down {
				t.Fatalf("%s %d: the body kept differs from the one sent (%d bytes, want %d)", r.Name, i, len(b), len(down))
			}
		}
	}
	if n := upOK.Load(); n != 3 {
		t.Errorf("the server got %d of 3 request bodies whole", n)
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// A server that takes one stream at a time (MAX_CONCURRENT_STREAMS 1)
// serves every VU's requests, each VU's one after another on its
// connection.
func TestLoopH2MaxConcurrentStreams(t *testing.T) {
	var mu sync.Mutex
	active := map[string]int{}
	var over atomic.Int64
	s := newH2Server(t, false, &http2.Server{MaxConcurrentStreams: 1}, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		active[r.RemoteAddr]++
		if active[r.RemoteAddr] > 1 {
			over.Add(1)
		}
		mu.Unlock()
		io.WriteString(w, "ok")
		mu.Lock()
		active[r.RemoteAddr]--
		mu.Unlock()
	})
	results := runLoop(t, h2Client(nil), 5, 40, h2Step(t, &plan.Step{Name: "one", Method: "GET", URL: text(s.URL + "/one")}))
	checkOK(t, results, 200)
	if n := s.count("/one"); n != 200 {
		t.Errorf("server served %d, want 200", n)
	}
	if n := over.Load(); n != 0 {
		t.Errorf("%d requests found another of their connection in flight", n)
	}
}

// Requests whose header blocks span several frames (CONTINUATION) both
// ways: a 40 KB request header, and a response header as large, extracted.
func TestLoopH2LargeHeaders(t *testing.T) {
	big := strings.Repeat("0123456789", 4000)
	s := newH2Server(t, false, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.Header.Get("X-Big") != big {
			w.WriteHeader(400)
			return
		}
		w.Header().Set("X-Back", big+"!")
		io.WriteString(w, "ok")
	})
	st := &plan.Step{Name: "big", Method: "GET", URL: text(s.URL + "/big"), Headers: []plan.Pair{{Name: "X-Big", Value: text(big)}},
		Extract: []*plan.Extract{{Name: "back", Header: "X-Back"}}}
	var got string
	l, err := h2Client(nil).NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	x := l.NewExchange()
	vars := testenv.Vars{}
	var s0 Scratch
	l.Post(func() {
		x.Send(h2Step(t, st).r, vars, &s0, func(res Result) {
			if res.Err != metrics.OK {
				t.Errorf("%v %d %s", res.Err, res.Status, res.Detail)
			}
			got = vars["back"]
			l.Stop()
		})
	})
	waitLoop(t, l, 30*time.Second, "no result")
	if got != big+"!" {
		t.Errorf("extracted %d bytes of the response's header, want %d", len(got), len(big)+1)
	}
}

// rawH2 is an HTTP/2 server (h2c) written for the test with x/net/http2's
// Framer, for what Go's server does not do on demand: GOAWAY, RST_STREAM,
// PING and SETTINGS when the test says. serve runs for each connection,
// after the preface and the server's SETTINGS; then the connection is
// read until the client closes it (or the test ends: listen).
type rawH2 struct {
	addr  string
	conns atomic.Int64
}

// rawConn is a connection of a rawH2.
type rawConn struct {
	t      *testing.T
	c      net.Conn
	fr     *http2.Framer
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	dec    *hpack.Decoder
	fields map[string]string
	// acked counts the client's PING acks.
	acked int
}

func newRawH2(t *testing.T, settings []http2.Setting, serve func(c *rawConn)) *rawH2 {
	s := &rawH2{}
	s.addr = listen(t, func(c net.Conn) {
		s.conns.Add(1)
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
			t.Errorf("no client preface: %q %v", preface, err)
			return
		}
		rc := &rawConn{t: t, c: c, fr: http2.NewFramer(c, c)}
		rc.enc = hpack.NewEncoder(&rc.encBuf)
		rc.dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) { rc.fields[f.Name] = f.Value })
		rc.fr.WriteSettings(settings...)
		serve(rc)
		io.Copy(io.Discard, c) // until the client closes
	})
	return s
}

func (s *rawH2) url() string { return "http://" + s.addr }

// request reads frames until a request's header block is whole, taking
// the client's SETTINGS (acknowledged), PING acks and WINDOW_UPDATEs on
// the way; it returns the stream and its :path, or 0 when the client
// closed the connection.
func (c *rawConn) request() (uint32, string) {
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, syscall.ECONNRESET) {
				c.t.Errorf("server: %v", err)
			}
			return 0, ""
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if f.IsAck() {
				c.acked++
			}
		case *http2.HeadersFrame:
			c.fields = map[string]string{}
			if _, err := c.dec.Write(f.HeaderBlockFragment()); err != nil || !f.HeadersEnded() {
				c.t.Errorf("server: a header block in one frame expected: %v", err)
				return 0, ""
			}
			return f.StreamID, c.fields[":path"]
		}
	}
}

// await reads frames until the client acknowledges a PING, as request does.
func (c *rawConn) await(acks int) {
	for c.acked < acks {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Errorf("server: %v while waiting for a PING's ack", err)
			return
		}
		if p, ok := f.(*http2.PingFrame); ok && p.IsAck() {
			if p.Data != [8]byte{'p', 'e', 'r', 'f', 'l', 'a', 'b'} {
				c.t.Errorf("PING ack with %q, want the PING's data", p.Data)
			}
			c.acked++
		}
	}
}

// head writes a response's header block: status, and a content-length.
func (c *rawConn) head(sid uint32, status int, length int, end bool) {
	c.encBuf.Reset()
	c.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	c.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(length)})
	c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: sid, BlockFragment: c.encBuf.Bytes(), EndHeaders: true, EndStream: end})
}

// respond writes a whole response with body.
func (c *rawConn) respond(sid uint32, body string) {
	c.head(sid, 200, len(body), body == "")
	if body != "" {
		c.fr.WriteData(sid, true, []byte(body))
	}
}

// A server that sends GOAWAY after n requests on each connection, in
// each of the ways a server may: with the last request's response
// (graceful: the stream named last is the one served), before that
// response (the stream in flight, named last, still finishes), or only
// when the next request comes (naming the one before: the request was
// not taken, and is sent again on a new connection). Every request is
// served once and succeeds, each connection serves n.
func TestLoopH2GoAway(t *testing.T) {
	const vus, rounds, n = 3, 10, 4
	for _, mode := range []string{"after", "before", "refuse"} {
		t.Run(mode, func(t *testing.T) {
			var served atomic.Int64
			s := newRawH2(t, nil, func(c *rawConn) {
				var last uint32
				for i := 0; ; i++ {
					sid, path := c.request()
					if sid == 0 {
						return
					}
					if i == n && mode == "refuse" {
						c.fr.WriteGoAway(last, http2.ErrCodeNo, nil)
						return
					}
					if i == n-1 && mode == "before" {
						c.fr.WriteGoAway(sid, http2.ErrCodeNo, nil)
					}
					served.Add(1)
					c.respond(sid, "ok "+path)
					last = sid
					if i == n-1 && mode != "refuse" {
						if mode == "after" {
							c.fr.WriteGoAway(sid, http2.ErrCodeNo, nil)
						}
						return
					}
				}
			})
			results := runLoop(t, h2Client(nil), vus, rounds, h2Step(t, &plan.Step{Name: "g", Method: "GET", URL: text(s.url() + "/g?vu=${vu}"),
				Check: &plan.Check{BodyContains: []string{"ok /g?vu="}}}))
			checkOK(t, results, vus*rounds)
			if got := served.Load(); got != vus*rounds {
				t.Errorf("server served %d requests, want %d", got, vus*rounds)
			}
			if got, want := s.conns.Load(), int64(vus*((rounds+n-1)/n)); got != want {
				t.Errorf("%d connections, want %d (%d requests each)", got, want, n)
			}
		})
	}
}

// RST_STREAM fails the request it resets as a connection closed then
// fails one over HTTP/1.1 (connection_reset before the response, read in
// its middle), and the connection goes on: one connection serves all.
func TestLoopH2ResetStream(t *testing.T) {
	s := newRawH2(t, nil, func(c *rawConn) {
		for {
			sid, path := c.request()
			switch path {
			case "":
				return
			case "/before":
				c.fr.WriteRSTStream(sid, http2.ErrCodeInternal)
			case "/mid":
				c.head(sid, 200, 10, false)
				c.fr.WriteData(sid, false, []byte("abc"))
				c.fr.WriteRSTStream(sid, http2.ErrCodeCancel)
			default:
				c.respond(sid, "ok")
			}
		}
	})
	results := runLoop(t, h2Client(nil), 1, 5,
		h2Step(t, &plan.Step{Name: "before", Method: "GET", URL: text(s.url() + "/before")}),
		h2Step(t, &plan.Step{Name: "mid", Method: "GET", URL: text(s.url() + "/mid")}),
		h2Step(t, &plan.Step{Name: "ok", Method: "GET", URL: text(s.url() + "/ok")}))
	for i, r := range results[0] {
		want, detail := metrics.OK, ""
		switch i % 3 {
		case 0:
			want, detail = metrics.ConnReset, "the server reset the stream before responding: INTERNAL_ERROR"
		case 1:
			want, detail = metrics.Read, "the server reset the stream mid-response: CANCEL"
		}
		if r.Err != want || r.Detail != detail {
			t.Errorf("request %d: %v %q, want %v %q", i, r.Err, r.Detail, want, detail)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a reset stream leaves its connection open", n)
	}
}

// The server's PINGs are acknowledged with their data (the server
// answers only then), and its SETTINGS: a MAX_CONCURRENT_STREAMS of 0
// holds the request back, with the stream it had opened already refused
// (REFUSED_STREAM: sent again), until the server allows one.
func TestLoopH2PingAndSettings(t *testing.T) {
	var refused, served atomic.Int64
	s := newRawH2(t, nil, func(c *rawConn) {
		sid, _ := c.request()
		c.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 0})
		c.fr.WriteRSTStream(sid, http2.ErrCodeRefusedStream)
		refused.Add(1)
		c.fr.WritePing(false, [8]byte{'p', 'e', 'r', 'f', 'l', 'a', 'b'})
		c.await(1) // perflab has read the settings of 0 streams, which came before
		c.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
		for {
			sid, _ := c.request()
			if sid == 0 {
				return
			}
			c.fr.WritePing(false, [8]byte{'p', 'e', 'r', 'f', 'l', 'a', 'b'})
			c.await(c.acked + 1)
			served.Add(1)
			c.respond(sid, "ok")
		}
	})
	results := runLoop(t, h2Client(nil), 1, 5, h2Step(t, &plan.Step{Name: "p", Method: "GET", URL: text(s.url() + "/p")}))
	checkOK(t, results, 5)
	if r, n, c := refused.Load(), served.Load(), s.conns.Load(); r != 1 || n != 5 || c != 1 {
		t.Errorf("server refused %d and served %d streams on %d connections, want 1, 5, 1", r, n, c)
	}
}

// A literal request's header block is encoded once its fields are all in
// the encoder's table, then sent as it is (h2encode): the server decodes
// the same fields from it each time, and from the request with other
// values sent between.
func TestLoopH2LiteralHeaderBlock(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s := newRawH2(t, nil, func(c *rawConn) {
		for {
			sid, _ := c.request()
			if sid == 0 {
				return
			}
			f := []string{}
			for k, v := range c.fields {
				f = append(f, k+": "+v)
			}
			slices.Sort(f)
			mu.Lock()
			seen = append(seen, strings.Join(f, "\n"))
			mu.Unlock()
			c.respond(sid, "ok")
		}
	})
	lit := h2Step(t, &plan.Step{Name: "lit", Method: "GET", URL: text(s.url() + "/lit"), Headers: []plan.Pair{{Name: "X-A", Value: text("a")}}})
	vu := h2Step(t, &plan.Step{Name: "vu", Method: "GET", URL: text(s.url() + "/vu/${vu}"), Headers: []plan.Pair{{Name: "X-A", Value: text("${vu}")}}})
	l, err := h2Client(nil).NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	results := runOn(t, l, 1, 4, vu, lit, lit)
	checkOK(t, results, 12)
	lits := strings.Join([]string{":authority: " + s.addr, ":method: GET", ":path: /lit", ":scheme: http", "user-agent: perflab", "x-a: a"}, "\n")
	vus := strings.Replace(strings.Replace(lits, "/lit", "/vu/1", 1), "x-a: a", "x-a: 1", 1)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 12 {
		t.Fatalf("the server saw %d requests, want 12", len(seen))
	}
	for i, f := range seen {
		if want := map[bool]string{true: vus, false: lits}[i%3 == 0]; f != want {
			t.Errorf("request %d: the server decoded\n%s\nwant\n%s", i, f, want)
		}
	}
	if x := l.xs[0]; x.h2 == nil || x.h2.blkFor != lit.r {
		t.Error("the literal request's header block was not kept")
	}
}

// A stream the server never answers times out as on HTTP/1.1 (its
// connection is dropped, the next request opens another); without
// keep-alive every request has a connection of its own.
func TestLoopH2TimeoutAndNoKeepAlive(t *testing.T) {
	s := newRawH2(t, nil, func(c *rawConn) {
		for {
			sid, path := c.request()
			if sid == 0 {
				return
			}
			if path != "/hang" {
				c.respond(sid, "ok")
			}
		}
	})
	hang, err := Compile(nil, nil, &plan.Step{Name: "hang", Method: "GET", URL: text(s.url() + "/hang")}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	results := runLoop(t, h2Client(nil), 1, 3, step{r: hang}, h2Step(t, &plan.Step{Name: "ok", Method: "GET", URL: text(s.url() + "/ok")}))
	for i, r := range results[0] {
		want := map[bool]metrics.ErrKind{true: metrics.Timeout, false: metrics.OK}[i%2 == 0]
		if r.Err != want {
			t.Errorf("request %d: %v %q, want %v", i, r.Err, r.Detail, want)
		}
	}
	if n := s.conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4 (the first, and one after each of 3 timeouts)", n)
	}

	once := NewClient(Options{Timeout: 10 * time.Second, KeepAlive: false, HTTP2: true})
	s2 := newH2Server(t, false, nil, func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "ok") })
	checkOK(t, runLoop(t, once, 2, 5, h2Step(t, &plan.Step{Name: "k", Method: "GET", URL: text(s2.URL + "/k")})), 10)
	if n, c := s2.count("/k"), s2.conns.Load(); n != 10 || c != 10 {
		t.Errorf("server served %d requests on %d connections, want 10 on 10", n, c)
	}
}

// A response header block sent again and again, adding its fields to the
// table each time (as nginx sends its headers), is decoded h2MemoAfter
// times, then taken as it was; the table stays right: a block that then
// refers to the table's entries by index alone reads the values the
// repeated block added.
func TestLoopH2KeptHeaderBlock(t *testing.T) {
	// :status 200; x-abc: v-1 and content-length: 2, each added to the
	// table (literal with incremental indexing).
	same := []byte{0x88, 0x40, 5, 'x', '-', 'a', 'b', 'c', 3, 'v', '-', '1', 0x5c, 1, '2'}
	// :status 200; the table's oldest entries, by index: once the table
	// is full of the repeated block's (47 of each, 4,089 bytes), 155 is
	// x-abc, 154 content-length (0xff: 127 and more, then the rest). A
	// table that missed the block's last decodes would not have them.
	byIndex := []byte{0x88, 0xff, 155 - 127, 0xff, 154 - 127}
	ref := hpack.NewDecoder(4096, nil)
	for range 200 {
		ref.DecodeFull(same) //nolint:errcheck // checked below
	}
	if f, err := ref.DecodeFull(byIndex); err != nil || len(f) != 3 || f[1].Name != "x-abc" || f[1].Value != "v-1" || f[2].Name != "content-length" {
		t.Fatalf("the test's own block reads %v, %v", f, err)
	}
	var wrong atomic.Int64
	s := newRawH2(t, nil, func(c *rawConn) {
		for {
			sid, path := c.request()
			block := same
			switch {
			case sid == 0:
				return
			case path == "/ref":
				block = byIndex
			case strings.HasPrefix(path, "/verify/") && path != "/verify/v-1":
				wrong.Add(1)
			}
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: sid, BlockFragment: block, EndHeaders: true})
			c.fr.WriteData(sid, true, []byte("ok"))
		}
	})
	l, err := h2Client(nil).NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	x := l.NewExchange()
	vars := testenv.Vars{}
	var sc Scratch
	steps := []*Request{}
	for range 200 {
		steps = append(steps, h2Step(t, &plan.Step{Name: "same", Method: "GET", URL: text(s.url() + "/same")}).r)
	}
	steps = append(steps,
		h2Step(t, &plan.Step{Name: "ref", Method: "GET", URL: text(s.url() + "/ref"), Extract: []*plan.Extract{{Name: "abc", Header: "X-Abc"}}}).r,
		h2Step(t, &plan.Step{Name: "verify", Method: "GET", URL: text(s.url() + "/verify/${abc}")}).r)
	seen := 0
	var send func(i int)
	send = func(i int) {
		x.Send(steps[i], vars, &sc, func(res Result) {
			if res.Err != metrics.OK || res.Bytes != 2 {
				t.Errorf("request %d: %v %d %q, %d bytes", i, res.Err, res.Status, res.Detail, res.Bytes)
			}
			if i == 199 {
				seen = x.h2.memo.seen
			}
			if i+1 == len(steps) {
				l.Stop()
				return
			}
			send(i + 1)
		})
	}
	l.Post(func() { send(0) })
	waitLoop(t, l, 30*time.Second, "no result")
	if seen != h2MemoAfter {
		t.Errorf("the repeated block was decoded %d times in a row, want %d (then kept)", seen, h2MemoAfter)
	}
	if vars["abc"] != "v-1" || wrong.Load() != 0 {
		t.Errorf("the block by index read x-abc %q, want v-1", vars["abc"])
	}
	if n := s.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}
