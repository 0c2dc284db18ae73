package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// runSegments runs a plan as count workers of one distributed run, at
// once, and returns their runs.
func runSegments(t *testing.T, p *plan.Plan, count int) []*metrics.Run {
	t.Helper()
	runs := make([]*metrics.Run, count)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i := range count {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i], errs[i] = Run(context.Background(), p, Options{RunID: "seg", Seed: 1, Segment: plan.Segment{Index: i, Count: count}})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	return runs
}

// The workers of a distributed run make, together, exactly the plan's
// load, on either engine: every VU number once with its own iterations,
// every shared iteration once, every arrival of the schedule once, every
// sequential row once; and their stages' loads add up to the plan's.
func TestSegmentsAddUpToThePlan(t *testing.T) {
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("event_loop=%v", loop), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[r.URL.Path]++
				mu.Unlock()
			}))
			defer srv.Close()
			var rows []string
			for i := range 30 {
				rows = append(rows, fmt.Sprintf("r%02d", i))
			}
			p := load(t, srv.URL, `
name: segments
target: TARGET
http: {event_loop: `+fmt.Sprint(loop)+`}
data:
  rows: {values: [`+strings.Join(rows, ", ")+`]}
scenarios:
  - name: closed
    vus: 10
    iterations: 3
    flow: [{name: c, url: "/c/${vu}/${iteration}"}]
  - name: shared
    vus: 7
    total_iterations: 1000
    flow: [{name: s, url: "/s/${iteration}"}]
  - name: open
    rate: 400
    duration: 1s
    vus: 5
    max_vus: 40
    flow: [{name: o, url: "/o/${iteration}"}]
  - name: rows
    vus: 6
    iterations: 5
    flow: [{name: d, url: "/d/${rows}"}]
`, nil)
			if errs, _ := p.CheckSegments(3); errs != nil {
				t.Fatalf("CheckSegments: %v", errs)
			}
			runs := runSegments(t, p, 3)
			mu.Lock()
			defer mu.Unlock()
			want := map[string]int{}
			for vu := 1; vu <= 10; vu++ {
				for it := range 3 {
					want[fmt.Sprintf("/c/%d/%d", vu, it)] = 1
				}
			}
			for it := range 1000 {
				want[fmt.Sprintf("/s/%d", it)] = 1
			}
			for _, r := range rows {
				want["/d/"+r] = 1
			}
			var dropped int64
			load := map[string]metrics.Load{}
			for _, r := range runs {
				ph := r.Stages[0]
				dropped += op(t, ph, "open").Dropped
				for _, l := range ph.Load {
					m := load[l.Scenario]
					m.VUs += l.VUs
					m.MaxVUs += l.MaxVUs
					m.TotalIterations += l.TotalIterations
					m.Rate += l.Rate
					load[l.Scenario] = m
				}
			}
			opened := 0
			for path, n := range seen {
				if strings.HasPrefix(path, "/o/") {
					var it int
					if _, err := fmt.Sscanf(path, "/o/%d", &it); err != nil || it < 0 || it >= 400 || n != 1 {
						t.Errorf("%s: %d requests, want arrivals 0 to 399 once each", path, n)
					}
					opened++
					continue
				}
				if want[path] != n {
					t.Errorf("%s: %d requests, want %d", path, n, want[path])
				}
			}
			for path := range want {
				if seen[path] == 0 {
					t.Errorf("%s: never requested", path)
				}
			}
			// The schedule's 400 arrivals: each sent once or dropped.
			if int64(opened)+dropped != 400 {
				t.Errorf("open model: %d sent + %d dropped, want the plan's 400 arrivals", opened, dropped)
			}
			if l := load["closed"]; l.VUs != 10 {
				t.Errorf("closed: the workers' VUs add up to %d, want 10", l.VUs)
			}
			if l := load["shared"]; l.VUs != 7 || l.TotalIterations != 1000 {
				t.Errorf("shared: %d VUs, %d iterations, want 7 and 1000", l.VUs, l.TotalIterations)
			}
			if l := load["open"]; l.VUs != 5 || l.MaxVUs != 40 || l.Rate < 399.999 || l.Rate > 400.001 {
				t.Errorf("open: %d-%d VUs at %g/s, want 5-40 at 400/s", l.VUs, l.MaxVUs, l.Rate)
			}
		})
	}
}

// A worker's share of an open model's schedule is every N-th arrival of
// the plan's, due when the plan has it due: the shares interleave into the
// plan's schedule, a ramp included.
func TestSegmentPacerInterleaves(t *testing.T) {
	plans := map[string]pacer{
		"constant": constantPacer{rate: 333, duration: 2 * time.Second},
		"ramp":     newRampPacer(10, []rampSegment{{Target: 500, Duration: time.Second}, {Target: 0, Duration: 700 * time.Millisecond}}),
	}
	for name, whole := range plans {
		var want, got []time.Duration
		for n := int64(0); ; n++ {
			d, ok := whole.Due(n)
			if !ok {
				break
			}
			want = append(want, d)
		}
		for i := range 4 {
			p := segmentPacer{p: whole, seg: plan.Segment{Index: i, Count: 4}}
			for n := int64(0); ; n++ {
				d, ok := p.Due(n)
				if !ok {
					break
				}
				got = append(got, d)
			}
		}
		sort.Slice(got, func(a, b int) bool { return got[a] < got[b] })
		if len(got) != len(want) {
			t.Fatalf("%s: the shares have %d arrivals, the plan %d", name, len(got), len(want))
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%s: arrival %d due at %v in the shares, at %v in the plan", name, k, got[k], want[k])
			}
		}
	}
}
