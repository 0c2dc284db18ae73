package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// accuracy is what a run of timedServer's load measured: perflab's
// latencies of the step and the server's own times of the same requests.
type accuracy struct {
	vus                   int
	sent                  int64 // requests perflab counted
	served                int64 // requests the server timed
	perflab, server       *metrics.Stats
	minDiff, p10Diff, p50 float64 // perflab's minus the server's, ms
}

// measureAccuracy runs vus VUs against a server with a fixed 10 ms service
// time that times each request by its own clock, from the handler's start
// to the response flushed to the socket, and returns both sides' figures.
// The VUs think between requests, at random so as not to fire in
// synchronised bursts (which would queue in the server and be real
// latency): about 2,000 requests/s at 500 VUs, which leaves room on the
// two cores of a test machine.
func measureAccuracy(t testing.TB, vus int) accuracy {
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
	think := "{min: 0s, max: 0s}"
	if vus > 1 {
		think = fmt.Sprintf("{min: %dms, max: %dms}", vus/5, vus*3/5)
	}
	iters := max(300/vus, 5)
	p := load(t, srv.URL, fmt.Sprintf("target: TARGET\nscenarios:\n  - {name: s, vus: %d, iterations: %d, ramp_up: 500ms, think: %s, flow: [{name: a, url: /a}]}\n", vus, iters, think), nil)
	r := run(t, p)
	srv.Close() // waits for the handlers: the server's figures are complete
	a := accuracy{vus: vus, perflab: op(t, r.Stages[0], "a"), server: server}
	a.sent, a.served = a.perflab.Count, server.Count
	if a.perflab.OK.N > 0 && server.OK.N > 0 {
		ms := func(us int64) float64 { return float64(us) / 1e3 }
		a.minDiff = float64(a.perflab.OK.Min-server.OK.Min) / 1e6
		a.p10Diff = ms(a.perflab.Hist.ValueAtPercentile(10)) - ms(server.Hist.ValueAtPercentile(10))
		a.p50 = ms(a.perflab.Hist.ValueAtPercentile(50)) - ms(server.Hist.ValueAtPercentile(50))
	}
	pl, sv := a.perflab.Summarize(time.Second).Latency, server.Summarize(time.Second).Latency
	t.Logf("%3d VUs: perflab min %.3f p50 %.3f p90 %.3f ms, server min %.3f p50 %.3f p90 %.3f ms; difference min %.3f p10 %.3f p50 %.3f ms",
		vus, pl.Min, pl.P50, pl.P90, sv.Min, sv.P50, sv.P90, a.minDiff, a.p10Diff, a.p50)
	return a
}

// perflab's latency of a request encloses the server's time for it, by a
// margin that is small on an idle machine and grows with its load: this
// test checks what holds on any machine, against the server's own clock,
// and BenchmarkLatencyAccuracy measures the margin.
func TestLatencyMatchesServerTime(t *testing.T) {
	for _, vus := range []int{1, 50, 500} {
		a := measureAccuracy(t, vus)
		want := int64(vus * max(300/vus, 5))
		// Every request counted once, and each one the server served.
		if a.sent != want || a.served != want || a.perflab.ErrorCount() != 0 {
			t.Errorf("%d VUs: perflab counted %d requests (%d failed), the server %d; want %d", vus, a.sent, a.perflab.ErrorCount(), a.served, want)
			continue
		}
		// Each latency is at least the server's time of the same request,
		// so each order statistic is too: a client that starts its clock
		// late or stops it early shows here.
		if a.perflab.OK.Min < a.server.OK.Min || a.p50 < 0 {
			t.Errorf("%d VUs: perflab's min and p50 are below the server's by %.3f and %.3f ms", vus, -a.minDiff, -a.p50)
		}
		// The fastest request carries perflab's least overhead, tens of
		// microseconds: a stray millisecond added to every latency (or any
		// constant error of that size) makes the fastest at least a
		// millisecond slower than the server's fastest, however idle or
		// busy the machine.
		if a.minDiff >= 0.8 {
			t.Errorf("%d VUs: perflab's fastest request took %.3f ms longer than the server's fastest", vus, a.minDiff)
		}
	}
}

// BenchmarkLatencyAccuracy is the figure behind TestLatencyMatchesServerTime:
// how far perflab's latencies lie above the server's own times of the same
// requests, at the minimum, p10 and p50 (ms), at 1, 50 and 500 VUs; run it
// on an otherwise idle machine (bench/README.md):
//
//	go test -run '^$' -bench LatencyAccuracy -benchtime 3x ./engine
func BenchmarkLatencyAccuracy(b *testing.B) {
	eachEngine(b, func(b *testing.B) {
		for _, vus := range []int{1, 50, 500} {
			b.Run(fmt.Sprintf("vus=%d", vus), func(b *testing.B) {
				var minDiff, p10, p50 float64
				for range b.N {
					a := measureAccuracy(b, vus)
					minDiff, p10, p50 = minDiff+a.minDiff, p10+a.p10Diff, p50+a.p50
				}
				n := float64(b.N)
				b.ReportMetric(minDiff/n, "min-diff-ms")
				b.ReportMetric(p10/n, "p10-diff-ms")
				b.ReportMetric(p50/n, "p50-diff-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	})
}
