package http

import (
	"bufio"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// wireServer is a raw HTTP/1.1 server on 127.0.0.1 that keeps the request
// line and headers of every request it reads, as they came, and answers
// each with an empty 200, closing the connection.
type wireServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	heads []string
}

func newWireServer(t *testing.T) *wireServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &wireServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				var head strings.Builder
				for {
					line, err := br.ReadString('\n')
					head.WriteString(line)
					if err != nil || line == "\r\n" {
						break
					}
				}
				if head.Len() > 0 {
					s.mu.Lock()
					s.heads = append(s.heads, head.String())
					s.mu.Unlock()
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	return s
}

// close stops the server once every connection it accepted has ended, and
// returns the heads it read.
func (s *wireServer) close() []string {
	s.ln.Close()
	s.wg.Wait()
	return s.heads
}

// senders are the three ways a request is sent: the event loop, the pooled
// HTTP/1.1 client (fasthttp), and the HTTP/2 client.
var senders = []struct {
	name  string
	http2 bool
	send  func(t *testing.T, c *Client, r *Request, vars Vars) Result
}{
	{name: "event loop", send: sendOnLoop},
	{name: "pooled", send: func(_ *testing.T, c *Client, r *Request, vars Vars) Result { return c.Do(r, vars, &Scratch{}) }},
	{name: "http2", http2: true, send: func(_ *testing.T, c *Client, r *Request, vars Vars) Result { return c.Do(r, vars, &Scratch{}) }},
}

// sendOnLoop sends one request on an event loop of c's.
func sendOnLoop(t *testing.T, c *Client, r *Request, vars Vars) Result {
	if runtime.GOOS != "linux" {
		t.Skip("the event loop needs Linux")
	}
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var res Result
	x := l.NewExchange()
	l.Post(func() {
		x.Send(r, vars, &Scratch{}, func(rr Result) {
			res = rr
			l.Stop()
		})
	})
	l.Run()
	return res
}

// A value that would split the request (a CR or LF in the URL from a
// ${raw:...} placeholder, in a header's value, a response's value
// extracted into either) or a header name that is not a token fails the
// step as invalid_request on every way of sending, and not a byte of it
// reaches the server: a raw server sees only the valid request sent after
// them.
func TestInvalidRequestsAreNotSent(t *testing.T) {
	for _, sd := range senders {
		t.Run(sd.name, func(t *testing.T) {
			srv := newWireServer(t)
			target := text("http://" + srv.ln.Addr().String())
			c := NewClient(Options{Timeout: 5 * time.Second, HTTP2: sd.http2})
			bad := []struct {
				name string
				step *plan.Step
				vars testenv.Vars
			}{
				{"CRLF in a raw URL value", &plan.Step{Method: "GET", URL: text("/x${raw:p}")}, testenv.Vars{"p": " HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET /smuggled"}},
				{"LF in a raw query value", &plan.Step{Method: "GET", URL: text("/x?a=${raw:p}")}, testenv.Vars{"p": "1\nX-Injected: 1"}},
				{"NUL in a raw URL value", &plan.Step{Method: "GET", URL: text("/x${raw:p}")}, testenv.Vars{"p": "\x00"}},
				{"CRLF in a header value", &plan.Step{Method: "GET", URL: text("/x"), Headers: []plan.Pair{{Name: "X-Token", Value: text("${tok}")}}}, testenv.Vars{"tok": "a\r\nX-Injected: 1"}},
				{"a space in a header name", &plan.Step{Method: "GET", URL: text("/x"), Headers: []plan.Pair{{Name: "X Bad", Value: text("1")}}}, testenv.Vars{}},
				{"a Host that is no host", &plan.Step{Method: "GET", URL: text("/x"), Headers: []plan.Pair{{Name: "Host", Value: text("${h}")}}}, testenv.Vars{"h": "a b/c"}},
				{"a space in the URL's host", &plan.Step{Method: "GET", URL: text("http://${raw:h}/x")}, testenv.Vars{"h": "a b"}},
				{"a % that starts no escape", &plan.Step{Method: "GET", URL: text("/x/${raw:p}")}, testenv.Vars{"p": "100%zz"}},
			}
			for _, b := range bad {
				b.step.Name = b.name
				r, err := Compile(target, nil, b.step, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if res := sd.send(t, c, r, b.vars); res.Err != metrics.InvalidRequest || !res.Start.IsZero() {
					t.Errorf("%s: %v (%s), sent at %v; want invalid_request, not sent", b.name, res.Err, res.Detail, res.Start)
				}
			}
			if sd.http2 {
				srv.close()
				return // the raw server speaks HTTP/1.1: TestURLsAreEncoded sends HTTP/2
			}
			ok, _ := Compile(target, nil, &plan.Step{Name: "ok", Method: "GET", URL: text("/ok")}, 5*time.Second)
			if res := sd.send(t, c, ok, testenv.Vars{}); res.Err != metrics.OK {
				t.Fatalf("the valid request: %v %s", res.Err, res.Detail)
			}
			heads := srv.close()
			if len(heads) != 1 || !strings.HasPrefix(heads[0], "GET /ok HTTP/1.1\r\n") {
				t.Errorf("the server read %q; want the valid request alone", heads)
			}
		})
	}
}

// A URL whose values (or literal text) hold spaces, UTF-8 or a Unicode
// host goes on the wire encoded as net/url encodes it, the same on every
// way of sending.
func TestURLsAreEncoded(t *testing.T) {
	const wantURI = "/caf%C3%A9%20au%20lait/a%20b?q=x%20y%C3%A9&r=%22%3C%3E&ok=%20"
	for _, sd := range senders {
		t.Run(sd.name, func(t *testing.T) {
			var got string
			var host string
			var addr string
			var closeSrv func() []string
			if sd.http2 {
				hs := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
					got, host = r.RequestURI, r.Host
				}))
				hs.Config.Protocols = new(nethttp.Protocols)
				hs.Config.Protocols.SetUnencryptedHTTP2(true)
				hs.Start()
				defer hs.Close()
				addr = hs.Listener.Addr().String()
			} else {
				srv := newWireServer(t)
				addr, closeSrv = srv.ln.Addr().String(), srv.close
			}
			c := NewClient(Options{Timeout: 5 * time.Second, HTTP2: sd.http2})
			st := &plan.Step{Name: "enc", Method: "GET", URL: text("/café au lait/${raw:p}?q=${raw:q}é&r=\"<>&ok=%20#frag ment")}
			r, err := Compile(text("http://"+addr), nil, st, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res := sd.send(t, c, r, testenv.Vars{"p": "a b", "q": "x y"}); res.Err != metrics.OK {
				t.Fatalf("%v %s", res.Err, res.Detail)
			}
			if closeSrv != nil {
				heads := closeSrv()
				if len(heads) != 1 {
					t.Fatalf("heads %q", heads)
				}
				got, _, _ = strings.Cut(strings.TrimPrefix(heads[0], "GET "), " HTTP/1.1\r\n")
				host = addr
			}
			if got != wantURI || host != addr {
				t.Errorf("sent %q to %q, want %q to %q", got, host, wantURI, addr)
			}
		})
	}
}

func TestWireURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/a/b?c=d":               "http://h/a/b?c=d", // nothing to encode: as it is
		"http://h/a(b)!*'/%20?x=%zz":     "http://h/a(b)!*'/%20?x=%zz",
		"http://h/a b":                   "http://h/a%20b",
		"http://h/%2C%2C/ ?r= ":          "http://h/,,/%20?r=%20",  // shorter path, longer query: encoded all the same
		"http://h/é(x)":                  "http://h/%C3%A9%28x%29", // as net/url: a path it escapes is escaped whole
		"http://h/?a b":                  "http://h/?a%20b",
		"http://h/p#frag ment":           "http://h/p", // the fragment is not sent
		"http://bücher.example:8080/x y": "http://xn--bcher-kva.example:8080/x%20y",
		"http://[::1]:80/a b":            "http://[::1]:80/a%20b",
		"HTTPS://H/ä":                    "HTTPS://H/%C3%A4",
	} {
		got, _, userinfo, err := wireURL([]byte(in))
		if err != nil || string(got) != want || userinfo != "" {
			t.Errorf("wireURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"http://h/a\r\nb", "http://h/\x00", "http://h/?a=\n", "http://h/#\r", "http://h/a\tb", "http://h/\x7f",
		"http://a b/", "http://h/%zz", "http://h/%", "http://h/é%2", "http://h@/x", "http://u:p@a b/"} {
		if got, _, _, err := wireURL([]byte(in)); err == nil {
			t.Errorf("wireURL(%q) = %q, want an error", in, got)
		} else if notSentKind(err) != metrics.InvalidRequest {
			t.Errorf("wireURL(%q): %v is not an invalid request", in, err)
		}
	}
	// The userinfo is not sent: it is the Authorization's.
	for in, want := range map[string][2]string{
		"http://h@x/ä":                {"http://x/%C3%A4", "h"},
		"http://al%40ice:p%3A@h:81/a": {"http://h:81/a", "al%40ice:p%3A"},
		"https://u:p:q@h":             {"https://h", "u:p:q"},
		"http://u@v@h/?a=b":           {"http://h/?a=b", "u@v"},
	} {
		got, _, userinfo, err := wireURL([]byte(in))
		if err != nil || string(got) != want[0] || userinfo != want[1] {
			t.Errorf("wireURL(%q) = %q, userinfo %q, %v; want %q, %q", in, got, userinfo, err, want[0], want[1])
		}
	}
	for _, in := range []string{"ftp://h/a b", "/a?next=http://b", ""} { // not sent, as a request that has no URL
		if got, _, _, err := wireURL([]byte(in)); err == nil || notSentKind(err) != metrics.NotSent {
			t.Errorf("wireURL(%q) = %q, %v; want not_sent", in, got, err)
		}
	}
}
