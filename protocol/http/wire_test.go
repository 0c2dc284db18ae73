package http

import (
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/plan"
)

// Every response is fed to the parser whole and also cut at every byte, as
// it may arrive from the network; it must frame and decode the same way.
func TestResponseFraming(t *testing.T) {
	cases := []struct {
		name, raw string
		head      bool
		status    int
		body      string
		close     bool
		untilEOF  bool
	}{
		{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello", status: 200, body: "hello"},
		{name: "lower-case names", raw: "HTTP/1.1 201 Created\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok", status: 201, body: "ok", close: true},
		{name: "chunked with extension and trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n", status: 200, body: "hello world"},
		{name: "chunked, no trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n", status: 200, body: "0123456789"},
		{name: "100 continue first", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x"},
		{name: "head", raw: "HTTP/1.1 200 OK\r\nContent-Length: 512\r\n\r\n", head: true, status: 200},
		{name: "204", raw: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "http/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "bare LF", raw: "HTTP/1.1 200 OK\nContent-Length: 3\nX-A: b\n\nabc", status: 200, body: "abc"},
		{name: "no reason phrase", raw: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "connection list", raw: "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "http/1.0 closes", raw: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200, close: true},
		{name: "until EOF", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nstream", status: 200, body: "stream", close: true, untilEOF: true},
	}
	for _, c := range cases {
		for cut := 0; cut <= len(c.raw); cut++ {
			var p response
			p.reset(c.head, 1<<20)
			var done bool
			var err error
			for _, part := range []string{c.raw[:cut], c.raw[cut:]} {
				if part == "" || done {
					continue
				}
				if done, err = p.feed([]byte(part)); err != nil {
					t.Fatalf("%s, cut at %d: %v", c.name, cut, err)
				}
			}
			if c.untilEOF {
				if done || !p.eof() {
					t.Fatalf("%s: want the body to end at EOF", c.name)
				}
				done = true
			}
			if !done {
				t.Fatalf("%s, cut at %d: not done", c.name, cut)
			}
			if p.status != c.status || string(p.body()) != c.body || p.close != c.close {
				t.Fatalf("%s, cut at %d: status %d body %q close %v, want %d %q %v", c.name, cut, p.status, p.body(), p.close, c.status, c.body, c.close)
			}
		}
	}
	var p response
	p.reset(false, 1<<20)
	if _, err := p.feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Trace: abc \r\n\r\nhello")); err != nil {
		t.Fatal(err)
	}
	if v, ok := p.header("x-trace"); !ok || string(v) != "abc" {
		t.Errorf("header x-trace = %q %v", v, ok)
	}
	if _, ok := p.header("X-Missing"); ok {
		t.Error("found a header that is not there")
	}
	p.reset(false, 1<<20)
	if done, err := p.feed([]byte("HTTP/1.1 200 OK\nX-Trace: lf\nContent-Length: 0\n\n")); !done || err != nil {
		t.Fatalf("bare LF: %v %v", done, err)
	}
	if v, ok := p.header("X-Trace"); !ok || string(v) != "lf" {
		t.Errorf("bare LF: header X-Trace = %q %v", v, ok)
	}
}

func TestResponseFramingErrors(t *testing.T) {
	for _, raw := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabc",                   // longer than its length
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",                      // bad length
		"SMTP ready\r\n\r\n",                                                // not HTTP
		"HTTP/1.1 2x0 OK\r\n\r\n",                                           // bad status
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",       // bad chunk size
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n", // chunk longer than its size
		"HTTP/1.1 204 No Content\r\n\r\nextra",                              // bytes after a body-less response
	} {
		var p response
		p.reset(false, 1<<20)
		if done, err := p.feed([]byte(raw)); err == nil {
			t.Errorf("%q: no error (done %v)", raw, done)
		}
	}
}

// The request the event loop writes says what fasthttp's would for the
// same step: the URL's path and query, its host, the step's headers (its
// own Host replacing the URL's), a body with its length, and Connection:
// close without keep-alive.
func TestAppendRequest(t *testing.T) {
	st := &plan.Step{Name: "s", Method: "POST", URL: text("/orders/${id}?q=1#frag"),
		Headers: []plan.Pair{{Name: "X-Id", Value: text("${id}")}, {Name: "Host", Value: text("virtual.test")}},
		JSON:    &plan.JSONDoc{Text: text(`{"id":"${id}"}`)}}
	r, err := Compile(text("http://127.0.0.1:8080/api"), []plan.Pair{{Name: "Content-Type", Value: text("text/plain")}}, st, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{KeepAlive: false})
	var s Scratch
	b, auth, err := c.appendRequest(nil, r, testenv.Vars{"id": "7"}, &s)
	if err != nil {
		t.Fatal(err)
	}
	want := "POST /api/orders/7?q=1 HTTP/1.1\r\nX-Id: 7\r\nHost: virtual.test\r\nUser-Agent: perflab\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{\"id\":\"7\"}"
	if string(b) != want {
		t.Errorf("request:\n%q\nwant\n%q", b, want)
	}
	if string(auth) != "http://127.0.0.1:8080" {
		t.Errorf("origin %q", auth)
	}
	get, _ := Compile(text("http://h"), nil, &plan.Step{Name: "g", Method: "GET", URL: text("?x=1")}, time.Second)
	b, _, err = NewClient(Options{KeepAlive: true}).appendRequest(nil, get, testenv.Vars{}, &s)
	if err != nil || string(b) != "GET /?x=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: perflab\r\n\r\n" {
		t.Errorf("GET: %q %v", b, err)
	}
	for in, want := range map[string]string{"h": "h:80", "h:81": "h:81", "[::1]": "[::1]:80", "http://h": "h:80",
		"HTTPS://h": "h:443", "https://h:8443": "h:8443", "https://[::1]": "[::1]:443"} {
		if got := hostPort(in); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
	// An https URL's request is the same; its origin names another
	// connection than http's to the same host and port.
	tls, _ := Compile(text("https://h"), nil, &plan.Step{Name: "t", Method: "GET", URL: text("/x")}, time.Second)
	b, auth, err = NewClient(Options{KeepAlive: true}).appendRequest(nil, tls, testenv.Vars{}, &s)
	if err != nil || string(b) != "GET /x HTTP/1.1\r\nHost: h\r\nUser-Agent: perflab\r\n\r\n" || string(auth) != "https://h" || !isHTTPS(auth) {
		t.Errorf("https: %q, origin %q, %v", b, auth, err)
	}
	ftp, _ := Compile(text("ftp://h"), nil, &plan.Step{Name: "f", Method: "GET", URL: text("/")}, time.Second)
	if _, _, err := c.appendRequest(nil, ftp, testenv.Vars{}, &s); err == nil || !strings.Contains(err.Error(), "not absolute http") {
		t.Errorf("ftp: %v", err)
	}
}

// Parsing a whole response allocates nothing: the event loop parses one
// per request.
func TestResponseParsingAllocatesNothing(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: 2\r\nConnection: keep-alive\r\nTransfer-Encoding: identity\r\n\r\nok")
	var p response
	p.reset(false, 1<<20)
	allocs := testing.AllocsPerRun(100, func() {
		p.reset(false, 1<<20)
		if done, err := p.feed(raw); !done || err != nil {
			t.Fatalf("done %v, %v", done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per response", allocs)
	}
}

// BenchmarkWire: what the event loop's own work on one request costs,
// without the network: writing the request (a URL and a header with
// placeholders), then framing a response of a typical header.
func BenchmarkWire(b *testing.B) {
	st := &plan.Step{Name: "g", Method: "GET", URL: text("/item/${vu}"), Headers: []plan.Pair{{Name: "X-Trace", Value: text("t-${vu}")}}}
	r, _ := Compile(text("http://127.0.0.1:8080"), nil, st, time.Second)
	c := NewClient(Options{KeepAlive: true})
	vars := testenv.Vars{"vu": "1"}
	var s Scratch
	var p response
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Thu, 26 Nov 2026 17:00:00 GMT\r\nContent-Type: application/json\r\nSet-Cookie-Not: x\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, _, err = c.appendRequest(buf[:0], r, vars, &s); err != nil {
			b.Fatal(err)
		}
		p.reset(false, 0)
		if done, err := p.feed(resp); !done || err != nil {
			b.Fatal(done, err)
		}
	}
}

// schemeLen knows http:// and https:// in any case, and nothing else.
func TestSchemeLen(t *testing.T) {
	for u, want := range map[string]int{
		"http://a": 7, "HTTP://a": 7, "hTtP://": 7, "https://a": 8, "HTTPS://a": 8, "HttpS://": 8,
		"http:/a": 0, "https:/a": 0, "httpx://a": 0, "http//a": 0, "ftp://a": 0, "": 0, "http": 0, "https:": 0, "/http://a": 0,
	} {
		if got := schemeLen(u); got != want {
			t.Errorf("schemeLen(%q) = %d, want %d", u, got, want)
		}
		if got := schemeLen([]byte(u)); got != want {
			t.Errorf("schemeLen([]byte(%q)) = %d, want %d", u, got, want)
		}
	}
}
