//go:build linux

package http

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// The loop waits until the earliest deadline of the requests in flight,
// not on a short period: each request must still time out when due, also
// when it was sent after a request with a later deadline (which lowers the
// wait) and while the loop is parked with nothing else to do; both when it
// parks in the runtime's netpoller and when it blocks in epoll_pwait2 (the
// fallback where the netpoller refuses the epoll set).
func TestLoopTimesOutEachRequestWhenDue(t *testing.T) {
	for _, netpoller := range []bool{true, false} {
		name := "netpoller"
		if !netpoller {
			name = "epoll_pwait2"
		}
		t.Run(name, func(t *testing.T) { testLoopTimeouts(t, netpoller) })
	}
}

func testLoopTimeouts(t *testing.T, netpoller bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn // a server that reads and never answers
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()

	c := NewClient(Options{Timeout: 5 * time.Second})
	l, err := c.NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	if l.epc == nil {
		t.Error("the loop's epoll set is not in the runtime's netpoller")
	}
	if !netpoller {
		l.epc = nil // as NewLoop leaves a loop whose set the netpoller refused
	}
	target := text("http://" + ln.Addr().String())
	compile := func(timeout time.Duration) *Request {
		r, err := Compile(target, nil, &plan.Step{Name: "hang", Method: "GET", URL: text("/")}, timeout)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	type sent struct {
		name    string
		timeout time.Duration
		after   time.Duration // sent this long after the first
	}
	reqs := []sent{
		{"late", 600 * time.Millisecond, 0},
		{"early", 60 * time.Millisecond, 0},                                 // lowers the wait below late's
		{"sent while busy", 150 * time.Millisecond, 100 * time.Millisecond}, // due at 250 ms
	}
	type got struct {
		kind    metrics.ErrKind
		elapsed time.Duration
	}
	results := make([]got, len(reqs))
	left := len(reqs)
	start := time.Now()
	for i, s := range reqs {
		x, r := l.NewExchange(), compile(s.timeout)
		send := func() {
			sentAt := time.Now()
			x.Send(r, mapVars{}, &Scratch{}, func(res Result) {
				results[i] = got{res.Err, time.Since(sentAt)}
				if left--; left == 0 {
					l.Stop()
				}
			})
		}
		if s.after == 0 {
			l.Post(send)
			continue
		}
		tm := l.NewTimer(send)
		l.Post(func() { l.ScheduleAt(tm, start.Add(s.after)) })
	}
	done := make(chan struct{})
	go func() { l.Run(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not finish: a timeout was never reported")
	}
	// A timeout is reported after its deadline and at most the scan's
	// period late; 100 ms leaves room for a loaded machine and is still
	// far below what waiting for a later request's deadline would give.
	for i, s := range reqs {
		g := results[i]
		if g.kind != metrics.Timeout {
			t.Errorf("%s: error %q, want %q", s.name, g.kind, metrics.Timeout)
		}
		if g.elapsed < s.timeout || g.elapsed > s.timeout+100*time.Millisecond {
			t.Errorf("%s: timed out after %v, want %v (+ at most 100ms)", s.name, g.elapsed, s.timeout)
		}
	}
}
