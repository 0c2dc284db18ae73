package engine

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// A server with a fixed 10 ms service time, timed by itself: perflab's p50
// must match the server's own p50 within 0.3 ms at 1, 50 and 500 VUs. The
// VUs think between requests so that the two cores of a test machine are
// not saturated by the load itself.
func TestP50MatchesServerTime(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test")
	}
	for _, vus := range []int{1, 50, 500} {
		var mu sync.Mutex
		server := metrics.NewStats()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t0 := time.Now()
			time.Sleep(10 * time.Millisecond)
			w.Write([]byte("ok"))
			w.(http.Flusher).Flush() // the response is on its way: the server's time ends here
			d := time.Since(t0)
			mu.Lock()
			server.Add(d, d, metrics.OK, 0)
			mu.Unlock()
		}))
		// Random think times keep the VUs from firing in synchronised
		// bursts (which would queue in the server and be real latency);
		// about 2,000 requests/s at 500 VUs.
		think := "{min: 0s, max: 0s}"
		if vus > 1 {
			think = fmt.Sprintf("{min: %dms, max: %dms}", vus/5, vus*3/5)
		}
		iters := max(300/vus, 5)
		p := load(t, srv.URL, fmt.Sprintf("target: TARGET\nscenarios:\n  - {name: s, vus: %d, iterations: %d, ramp_up: 500ms, think: %s, flow: [{name: a, url: /a}]}\n", vus, iters, think), nil)
		r := run(t, p)
		srv.Close()
		got := op(t, r.Stages[0], "a").Summarize(time.Second).Latency
		mu.Lock()
		want := server.Summarize(time.Second).Latency
		mu.Unlock()
		t.Logf("%3d VUs: perflab p50 %.3f ms, server p50 %.3f ms (difference %.3f ms)", vus, got.P50, want.P50, got.P50-want.P50)
		if diff := got.P50 - want.P50; diff < 0 || diff > 0.3 {
			t.Errorf("%d VUs: perflab p50 %.3f ms vs server %.3f ms: off by %.3f ms", vus, got.P50, want.P50, diff)
		}
		if math.Abs(got.P50-10) > 1.5 {
			t.Errorf("%d VUs: p50 %.3f ms is far from the 10 ms service time", vus, got.P50)
		}
	}
}
