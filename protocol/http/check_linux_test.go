//go:build linux

package http

import (
	"testing"
	"time"
)

// The check tests send on the event loop too.
func init() {
	checkSenders = append(checkSenders, sender{"event loop", func(t *testing.T, c *Client, r *Request, vars Vars) Result {
		l, err := c.NewLoop()
		if err != nil {
			t.Fatal(err)
		}
		x := l.NewExchange()
		var res Result
		l.Post(func() {
			x.Send(r, vars, &Scratch{}, func(got Result) {
				res = got
				l.Stop()
			})
		})
		waitLoop(t, l, 10*time.Second, "the loop did not answer")
		x.Close()
		return res
	}})
}
