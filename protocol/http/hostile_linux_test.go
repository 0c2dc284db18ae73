//go:build linux

package http

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// hostile serves every request on a connection with a response that
// begins with head and goes on with body(w) (which may never end).
func hostile(t *testing.T, head string, body func(w *bufio.Writer) error) string {
	return listen(t, func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		w := bufio.NewWriterSize(c, 64<<10)
		for {
			for { // the request's header; the tests send no body
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			w.WriteString(head)
			if body != nil && body(w) != nil {
				return
			}
			if w.Flush() != nil {
				return
			}
		}
	})
}

var block = []byte(strings.Repeat("x", 64<<10))

// endless writes the same bytes until the client goes away.
func endless(b []byte) func(*bufio.Writer) error {
	return func(w *bufio.Writer) error {
		for {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
	}
}

// sized writes n bytes.
func sized(n int) func(*bufio.Writer) error {
	return func(w *bufio.Writer) error {
		for left := n; left > 0; left -= len(block) {
			if _, err := w.Write(block[:min(left, len(block))]); err != nil {
				return err
			}
		}
		return nil
	}
}

// bothEngines sends r from vus VUs once on each engine, a goroutine per VU
// (Client.Do) and the event loop, and returns each engine's results.
func bothEngines(t *testing.T, c *Client, vus int, r *Request) map[string][]Result {
	t.Helper()
	out := map[string][]Result{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range vus {
		wg.Go(func() {
			var s Scratch
			res := c.Do(r, testenv.Vars{}, &s)
			mu.Lock()
			out["goroutines"] = append(out["goroutines"], res)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, rs := range runLoop(t, c, vus, 1, step{r: r}) {
		out["event loop"] = append(out["event loop"], rs...)
	}
	return out
}

// peakHeap runs f and returns by how much the heap in use grew at most
// while it ran, sampled every 10 ms.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
				peak.Store(ms.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	<-sampled
	return peak.Load()
}

// A server that sends a huge body, an endless one, endless headers or an
// absurd chunk size costs the generator bounded memory on both engines,
// and each ends as it should: counted in full, a timeout, or a read error.
func TestHostileServersCostBoundedMemory(t *testing.T) {
	const big = 128 << 20
	chunk := func(size string) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + "\r\n"
	}
	cases := []struct {
		name  string
		head  string
		body  func(*bufio.Writer) error
		want  metrics.ErrKind
		bytes int // for want OK
	}{
		{"128 MB body", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", big), sized(big), metrics.OK, big},
		{"128 MB chunked body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", func(w *bufio.Writer) error {
			for n := 0; n < big; n += len(block) {
				fmt.Fprintf(w, "%x\r\n", len(block))
				w.Write(block)
				w.WriteString("\r\n")
			}
			_, err := w.WriteString("0\r\n\r\n")
			return err
		}, metrics.OK, big},
		{"endless body", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", endless(block), metrics.Timeout, 0},
		{"endless chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", endless([]byte("10000\r\n" + string(block) + "\r\n")), metrics.Timeout, 0},
		{"a 1 TB chunk", chunk("10000000000"), endless(block), metrics.Timeout, 0},
		{"a chunk of 2^63 bytes", chunk("8000000000000000"), endless(block), metrics.Read, 0},
		{"an endless chunk-size line", chunk("1"), endless([]byte("111111111111")), metrics.Read, 0},
		{"endless headers", "HTTP/1.1 200 OK\r\n", endless([]byte("X-Endless: yes\r\n")), metrics.Read, 0},
		{"an endless header line", "HTTP/1.1 200 OK\r\nX-Long: ", endless(block), metrics.Read, 0},
		{"endless trailers", chunk("0"), endless([]byte("X-Trailer: yes\r\n")), metrics.Read, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := "http://" + hostile(t, c.head, c.body) + "/x"
			cl := NewClient(Options{KeepAlive: true})
			timeout := 2 * time.Second // for the endless responses
			if c.want == metrics.OK {
				timeout = time.Minute // 2 x 128 MB on each engine, on a busy machine
			}
			r := get(t, url, timeout, &plan.Check{BodyContains: []string{"x"}})
			var results map[string][]Result
			grew := peakHeap(func() { results = bothEngines(t, cl, 2, r) })
			for engine, rs := range results {
				for _, res := range rs {
					wantErr := c.want
					if wantErr == metrics.OK {
						wantErr = metrics.CheckFailed // the check reads the body, which is over the limit
					}
					if res.Err != wantErr {
						t.Errorf("%s: %v (%s), want %v", engine, res.Err, res.Detail, wantErr)
					}
					if c.want == metrics.OK && res.Bytes != c.bytes {
						t.Errorf("%s: %d bytes, want %d", engine, res.Bytes, c.bytes)
					}
					if c.want == metrics.OK && !strings.Contains(res.Detail, "exceeds body_limit 4 MiB; raise body_limit to check it") {
						t.Errorf("%s: detail %q does not say the body is over the limit", engine, res.Detail)
					}
				}
			}
			// 2 VUs on each engine keep 4 MiB each at most; the rest is
			// buffers. Before the limit, the 128 MB body took over 256 MB.
			if grew > 64<<20 {
				t.Errorf("the heap grew by %d MB", grew>>20)
			}
			t.Logf("the heap grew by %.1f MB", float64(grew)/(1<<20))
		})
	}
}

// A timeout ends a request whose body never ends on time, on both
// engines, while other VUs' bodies stream on the same loop.
func TestTimeoutEndsAnEndlessBody(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		head, body := "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", endless(block)
		if chunked {
			head, body = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", endless([]byte("10000\r\n"+string(block)+"\r\n"))
		}
		url := "http://" + hostile(t, head, body) + "/x"
		r := get(t, url, time.Second, nil)
		start := time.Now()
		results := bothEngines(t, NewClient(Options{KeepAlive: true}), 3, r)
		for engine, rs := range results {
			for _, res := range rs {
				// Generous: a busy 2-core machine is slow, but the old loop
				// read an endless body for up to twice its timeout.
				if res.Err != metrics.Timeout || res.Latency < time.Second || res.Latency > 4*time.Second {
					t.Errorf("chunked %v, %s: %v (%s) after %v, want a timeout after 1 s", chunked, engine, res.Err, res.Detail, res.Latency)
				}
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("chunked %v: both engines took %v for a 1 s timeout each", chunked, d)
		}
	}
}

// A body over the limit is counted in full and fails only the checks and
// extractions that read it, saying so; a step's body_limit overrides the
// client's.
func TestBodyLimit(t *testing.T) {
	body := strings.Repeat("a", 100<<10) + "needle"
	url := "http://" + hostile(t, fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body)), func(w *bufio.Writer) error {
		_, err := w.WriteString(body)
		return err
	}) + "/x"
	cl := NewClient(Options{KeepAlive: true, BodyLimit: 64 << 10})
	compile := func(st *plan.Step) *Request {
		st.Name, st.Method, st.URL = "s", "GET", text(url)
		r, err := Compile(nil, nil, st, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name   string
		st     *plan.Step
		want   metrics.ErrKind
		detail string
	}{
		{"no check", &plan.Step{}, metrics.OK, ""},
		{"status check", &plan.Step{Check: &plan.Check{Status: []int{200}}}, metrics.OK, ""},
		{"header extraction", &plan.Step{Extract: []*plan.Extract{{Name: "h", Header: "Content-Length"}}}, metrics.OK, ""},
		{"body check", &plan.Step{Check: &plan.Check{BodyContains: []string{"needle"}}}, metrics.CheckFailed,
			"body of 102406 bytes exceeds body_limit 64 KiB; raise body_limit to check it"},
		{"regex extraction", &plan.Step{Extract: []*plan.Extract{{Name: "n", Regex: "need(le)"}}}, metrics.ExtractFailed,
			"body of 102406 bytes exceeds body_limit 64 KiB; raise body_limit to extract from it"},
		{"the step's own limit", &plan.Step{BodyLimit: plan.Size{N: 1 << 20}, Check: &plan.Check{BodyContains: []string{"needle"}}}, metrics.OK, ""},
	}
	for _, c := range cases {
		for engine, rs := range bothEngines(t, cl, 1, compile(c.st)) {
			res := rs[0]
			if res.Err != c.want || res.Detail != c.detail || res.Bytes != len(body) {
				t.Errorf("%s, %s: %v %q, %d bytes; want %v %q, %d bytes", c.name, engine, res.Err, res.Detail, res.Bytes, c.want, c.detail, len(body))
			}
		}
	}
}

// Values substituted into a URL are escaped where they land, on the wire
// of both engines: path-segment escaping in the path, query escaping in
// the query; a base URL and ${raw:...} go as they are.
func TestURLValuesAreEscapedOnTheWire(t *testing.T) {
	lines := make(chan string, 16)
	addr := listen(t, func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			lines <- strings.TrimSuffix(line, "\r\n")
			for line != "\r\n" {
				if line, err = r.ReadString('\n'); err != nil {
					return
				}
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}
	})
	vars := testenv.Vars{"base": "http://" + addr, "v": `a b"c<d>%#?/é&=+`, "raw": "x%41/y?z=1"}
	st := &plan.Step{Name: "s", Method: "GET", URL: text("/p/${v}/lit%20eral?q=${v}&r=${raw:raw}#${v}"),
		Query: []plan.Pair{{Name: "k", Value: text("${v}")}}}
	r, err := Compile(text("${base}/api"), nil, st, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := `GET /api/p/a%20b%22c%3Cd%3E%25%23%3F%2F%C3%A9&=+/lit%20eral?q=a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9%26%3D%2B&r=x%41/y?z=1&k=a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9%26%3D%2B HTTP/1.1`
	c := NewClient(Options{KeepAlive: true})
	var s Scratch
	if res := c.Do(r, vars, &s); res.Err != metrics.OK {
		t.Fatalf("goroutines: %v %s", res.Err, res.Detail)
	}
	if got := <-lines; got != want {
		t.Errorf("goroutines sent\n%s\nwant\n%s", got, want)
	}
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	x := l.NewExchange()
	l.Post(func() {
		x.Send(r, vars, &s, func(res Result) {
			if res.Err != metrics.OK {
				t.Errorf("event loop: %v %s", res.Err, res.Detail)
			}
			l.Stop()
		})
	})
	l.Run()
	if got := <-lines; got != want {
		t.Errorf("the event loop sent\n%s\nwant\n%s", got, want)
	}
}
