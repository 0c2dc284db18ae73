package http

import (
	"bytes"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/tmpl"
)

func text(s string) *plan.Text { return &plan.Text{T: tmpl.MustParse(s)} }

func TestCompileJoinsURLs(t *testing.T) {
	cases := []struct{ target, url, want string }{
		{"http://h/api", "/x", "http://h/api/x"},
		{"http://h/api/", "/x", "http://h/api/x"},
		{"http://h/api", "x", "http://h/api/x"},
		{"http://h/api", "?q=1", "http://h/api?q=1"},
		{"http://h/api", "http://other/y", "http://other/y"},
	}
	for _, c := range cases {
		r, err := Compile(text(c.target), nil, &plan.Step{Name: "s", Method: "GET", URL: text(c.url)}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.url.Source(); got != c.want {
			t.Errorf("%s + %s = %s, want %s", c.target, c.url, got, c.want)
		}
	}
	// A URL that is a value joins the target with one / whether the
	// value begins with one or not (as JMeter's path from a variable).
	for path, want := range map[string]string{"/users": "http://h/api/users", "users": "http://h/api/users", "/": "http://h/api/"} {
		r, err := Compile(text("http://h/api"), nil, &plan.Step{Name: "s", Method: "GET", URL: text("${raw:p}?x=1")}, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := r.appendURL(nil, testenv.Vars{"p": path})
		if err != nil || string(b) != want+"?x=1" {
			t.Errorf("${raw:p} = %q: %q, %v; want %s?x=1", path, b, err, want)
		}
	}
}

func TestDoSendsWhatThePlanSays(t *testing.T) {
	var got struct {
		method, uri, ua, auth, ctype, conn, body string
	}
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.uri, got.ua = r.Method, r.URL.RequestURI(), r.UserAgent()
		got.auth, got.ctype, got.body = r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)
		got.conn = r.Header.Get("Connection")
		w.Header().Set("X-Id", "abc")
		io.WriteString(w, `{"data":{"items":[{"id":7}]},"token":"tok=zz9"}`)
	}))
	defer srv.Close()
	st := &plan.Step{
		Name: "create", Method: "POST", URL: text("/things/${vu}"),
		Headers: []plan.Pair{{Name: "authorization", Value: text("Bearer ${tok}")}},
		Query:   []plan.Pair{{Name: "name", Value: text("a b&c")}, {Name: "n", Value: text("${vu}")}},
		JSON:    &plan.JSONDoc{Text: text(`{"vu":"${vu}"}`)},
		Extract: []*plan.Extract{{Name: "id", JSON: "$.data.items[0].id"}, {Name: "hdr", Header: "X-Id"}, {Name: "re", Regex: `tok=(\w+)`}},
	}
	defaults := []plan.Pair{{Name: "Authorization", Value: text("Basic xyz")}, {Name: "X-Team", Value: text("perf")}}
	r, err := Compile(text(srv.URL), defaults, st, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{Timeout: time.Second, KeepAlive: false})
	vars := testenv.Vars{"vu": "3", "tok": "t1"}
	res := c.Do(r, vars, &Scratch{})
	if res.Err != metrics.OK || res.Status != 200 {
		t.Fatalf("result %+v", res)
	}
	if got.method != "POST" || got.uri != "/things/3?name=a+b%26c&n=3" || got.body != `{"vu":"3"}` || got.ctype != "application/json" {
		t.Errorf("sent %+v", got)
	}
	if got.auth != "Bearer t1" {
		t.Errorf("a step's header must override the plan's: %q", got.auth)
	}
	if got.ua != "perflab" || got.conn != "close" {
		t.Errorf("user agent %q, connection %q", got.ua, got.conn)
	}
	if vars["id"] != "7" || vars["hdr"] != "abc" || vars["re"] != "zz9" {
		t.Errorf("extracted %v", vars)
	}
	if res.Bytes != len(`{"data":{"items":[{"id":7}]},"token":"tok=zz9"}`) {
		t.Errorf("bytes %d", res.Bytes)
	}
}

// Requests are never retried, so perflab's count is the server's.
func TestNoRetries(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		n.Add(1)
		conn, _, _ := w.(nethttp.Hijacker).Hijack()
		conn.Close() // close before any response byte: fasthttp would retry a GET
	}))
	defer srv.Close()
	r, _ := Compile(nil, nil, &plan.Step{Name: "g", Method: "GET", URL: text(srv.URL + "/")}, time.Second)
	res := NewClient(Options{KeepAlive: true}).Do(r, testenv.Vars{}, &Scratch{})
	if res.Err != metrics.ConnReset || n.Load() != 1 {
		t.Errorf("err %v after %d server requests; want connection_reset after exactly 1", res.Err, n.Load())
	}
}

// A request that cannot be built fails as not_sent, and indeed is not sent.
func TestUndefinedVariableFailsTheRequest(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(nethttp.HandlerFunc(func(nethttp.ResponseWriter, *nethttp.Request) { n.Add(1) }))
	defer srv.Close()
	for _, opts := range []Options{{}, {HTTP2: true}} {
		r, _ := Compile(nil, nil, &plan.Step{Name: "g", Method: "GET", URL: text(srv.URL + "/${nope}")}, time.Second)
		res := NewClient(opts).Do(r, testenv.Vars{}, &Scratch{})
		if res.Err != metrics.NotSent || !strings.Contains(res.Detail, "nope") || n.Load() != 0 {
			t.Errorf("%+v; the server saw %d", res, n.Load())
		}
	}
}

// A server that accepts TCP and never answers the TLS handshake: the
// request times out within its timeout, which covers the handshake, on
// either pooled client.
func TestHandshakeTimesOut(t *testing.T) {
	addr := listen(t, func(net.Conn) {})
	const timeout = 300 * time.Millisecond
	for _, opts := range []Options{{ConnectTimeout: 100 * time.Millisecond}, {HTTP2: true}} {
		opts.KeepAlive = true
		r, _ := Compile(nil, nil, &plan.Step{Name: "g", Method: "GET", URL: text("https://" + addr + "/")}, timeout)
		done := make(chan Result, 1)
		go func() { done <- NewClient(opts).Do(r, testenv.Vars{}, &Scratch{}) }()
		select {
		case res := <-done:
			if res.Err != metrics.Timeout || res.Latency < timeout {
				t.Errorf("HTTP/2 %v: %v after %v (%s), want timeout after %v", opts.HTTP2, res.Err, res.Latency, res.Detail, timeout)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("HTTP/2 %v: the request still waits for the handshake after 10 s", opts.HTTP2)
		}
	}
}

// listen serves each connection with f (nil: reads nothing and never
// answers), and holds it open until the test ends.
func listen(t testing.TB, f func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
			if f != nil {
				go f(c)
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func BenchmarkDo(b *testing.B) {
	r, _ := Compile(text("http://"+answerOK(b)), nil, &plan.Step{Name: "g", Method: "GET", URL: text("/item/${vu}")}, time.Second)
	c := NewClient(Options{KeepAlive: true})
	vars := testenv.Vars{"vu": "1"}
	var s Scratch
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := c.Do(r, vars, &s); res.Err != metrics.OK {
			b.Fatal(res.Detail)
		}
	}
}

// answerOK serves requests without a body, each with a 200 of two bytes,
// allocating nothing per request: a benchmark's allocations are the
// client's.
func answerOK(t testing.TB) string {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	return listen(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		have := 0
		for {
			n, err := c.Read(buf[have:])
			if err != nil {
				return
			}
			have += n
			for {
				end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
				if end < 0 {
					break
				}
				if _, err := io.WriteString(c, ok); err != nil {
					return
				}
				have = copy(buf, buf[end+4:have])
			}
		}
	})
}

// A request's scheme and the address it dials are known from a stage's
// variables, or unknown when its URL begins with a VU's value (its
// address too when its host does).
func TestRequestScheme(t *testing.T) {
	vars := map[string]string{"base": "HTTPS://api.example", "path": "/x", "port": "8443"}
	for _, c := range []struct {
		target, url, want, addr string
	}{
		{"", "http://127.0.0.1/a", "http", "127.0.0.1:80"},
		{"http://127.0.0.1", "/a", "http", "127.0.0.1:80"},
		{"${base}", "${path}", "https", "api.example:443"},
		{"", "${base}/a", "https", "api.example:443"},
		{"http://127.0.0.1", "${base}/a?next=http://b", "https", "api.example:443"}, // the value is absolute: the target is not used
		{"http://127.0.0.1", "${path}?next=http://b", "http", "127.0.0.1:80"},       // the value is a path
		{"http://127.0.0.1", "${next}", "", ""},                                     // a VU's value: absolute or not
		{"http://127.0.0.1", "/a?next=https://b", "http", "127.0.0.1:80"},
		{"${host}", "/a", "", ""},            // a data row's or an extraction's value
		{"http://${host}", "/a", "http", ""}, // the host is a VU's, the scheme is not
		{"", "${scheme}://h/a", "", ""},
		{"https://api.example:${port}", "/users/${id}", "https", "api.example:8443"}, // the path is a VU's, the host is not
		{"http://u:p@[::1]:8080", "/a", "http", "[::1]:8080"},
		{"http://[::1]", "/a", "http", "[::1]:80"},
	} {
		st := &plan.Step{Name: "s", Method: "GET", URL: text(c.url)}
		var target *plan.Text
		if c.target != "" {
			target = text(c.target)
		}
		r, err := Compile(target, nil, st, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Scheme(vars); got != c.want {
			t.Errorf("target %q url %q: scheme %q, want %q", c.target, c.url, got, c.want)
		}
		if got := r.Address(vars); got != c.addr {
			t.Errorf("target %q url %q: address %q, want %q", c.target, c.url, got, c.addr)
		}
	}
}
