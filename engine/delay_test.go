package engine

import (
	"net/http/httptest"
	"testing"
	"time"
)

// In an open model every operation that started from a due time has its
// start delay recorded, and latency = start delay + service time holds
// operation by operation (in sums, exactly); operations after the first of
// an iteration have none. A generator whose every wake-up comes 5 ms late
// (pacerLateness) has every start delay at 5 ms or more, and the latency
// carries it while the service time does not.
func TestStartDelayIsLatencyLessServiceTime(t *testing.T) {
	for _, late := range []time.Duration{0, 5 * time.Millisecond} {
		t.Run(late.String(), func(t *testing.T) {
			var c counter
			srv := httptest.NewServer(c.handler(nil))
			defer srv.Close()
			defer func(d time.Duration) { pacerLateness = d }(pacerLateness)
			pacerLateness = late
			p := load(t, srv.URL, `target: TARGET
scenarios:
  - {name: s, rate: 100, duration: 1s, vus: 4, max_vus: 20, flow: [{name: a, url: /a}, {name: b, url: /b}]}
`, nil)
			r := run(t, p)
			ph := r.Stages[0]
			a, b, s := op(t, ph, "a"), op(t, ph, "b"), op(t, ph, "s")
			if a.Count == 0 || a.Count+s.Dropped != 100 || int64(c.total()) != a.Count+b.Count {
				t.Fatalf("a %d, b %d, dropped %d, server %d: want 100 iterations scheduled, the server's count", a.Count, b.Count, s.Dropped, c.total())
			}
			for name, st := range map[string]*struct{ lat, svc, delay, n int64 }{
				"a": {a.OK.Sum, a.SvcOK.Sum, a.DelayAll.Sum, a.DelayAll.N},
				"s": {s.OK.Sum, s.SvcOK.Sum, s.DelayAll.Sum, s.DelayAll.N},
			} {
				if st.n != a.Count || st.lat != st.svc+st.delay {
					t.Errorf("%s: %d start delays of %d operations; latency %d ns != service time %d + start delay %d", name, st.n, a.Count, st.lat, st.svc, st.delay)
				}
			}
			if b.DelayAll.N != b.Count || b.DelayAll.Max != 0 || b.OK.Sum != b.SvcOK.Sum {
				t.Errorf("the second step: %d start delays, max %d ns, latency %d ns, service time %d ns: want no delay", b.DelayAll.N, b.DelayAll.Max, b.OK.Sum, b.SvcOK.Sum)
			}
			if late > 0 && (a.DelayAll.Min < int64(late) || s.DelayAll.Min < int64(late)) {
				t.Errorf("every wake-up %v late, yet the smallest start delays are %v and %v", late, time.Duration(a.DelayAll.Min), time.Duration(s.DelayAll.Min))
			}
			if a.Delay.TotalCount() != a.DelayAll.N {
				t.Errorf("start delay histogram holds %d values, want %d", a.Delay.TotalCount(), a.DelayAll.N)
			}
		})
	}
}
