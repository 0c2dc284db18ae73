//go:build linux

package http

import (
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
)

// BenchmarkLoopJudged: requests one after another on one connection of
// the event loop, with and without extraction and checks.
func BenchmarkLoopJudged(b *testing.B) {
	benchEachStep(b, func(b *testing.B, r *Request) {
		benchLoop(b, NewClient(Options{KeepAlive: true, Timeout: 5 * time.Second}), r)
	})
}

// benchLoop sends r b.N times, one after another, on one exchange of a
// loop of c.
func benchLoop(b *testing.B, c *Client, r *Request) {
	l, err := c.NewLoop()
	if err != nil {
		b.Fatal(err)
	}
	x := l.NewExchange()
	vars := testenv.Vars{"vu": "1"}
	var s Scratch
	left := b.N
	var failed Result
	var done func(Result)
	done = func(res Result) {
		if res.Err != metrics.OK {
			failed = res
			l.Stop()
			return
		}
		if left--; left == 0 {
			l.Stop()
			return
		}
		x.Send(r, vars, &s, done)
	}
	b.ReportAllocs()
	b.ResetTimer()
	l.Post(func() { x.Send(r, vars, &s, done) })
	l.Run()
	b.StopTimer()
	x.Close()
	if failed.Err != metrics.OK {
		b.Fatal(failed.Detail)
	}
}
