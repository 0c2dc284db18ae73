package exporter

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/prometheus/prompb"

	"github.com/perflab/perflab/metrics"
)

// Each latency counts in the first bucket whose bound it does not exceed,
// as a Prometheus histogram's observe would put it, and the counts are
// cumulative; what is beyond the last bound is only in +Inf (the count).
// Below 2.048 ms HdrHistogram's buckets are single microseconds: exact.
// Above, a value that shares its HDR bucket (3 significant digits) with a
// bound counts above it: 30 s exactly is in the 60 s bucket.
func TestHistogramOf(t *testing.T) {
	h := metrics.NewHistogram()
	for _, us := range []int64{300, 500, 501, 999, 1000, 7000, 29_000_000, 30_000_000, 90_000_000} {
		h.RecordValue(us)
	}
	got := histogramOf(1.5, h)
	want := map[float64]uint64{0.0005: 2, 0.001: 5, 0.0025: 5, 0.005: 5, 0.01: 6, 30: 7, 60: 8}
	for i, le := range Buckets {
		if w, ok := want[le]; ok && got.buckets[i] != w {
			t.Errorf("le %g: %d, want %d", le, got.buckets[i], w)
		}
	}
	if got.count != 9 || got.sum != 1.5 {
		t.Errorf("count %d sum %g", got.count, got.sum)
	}
}

// A tick's figures become the metrics a scrape gets, with the run's labels.
func TestCollect(t *testing.T) {
	e := New("shop", map[string]string{"release": "R1", "team-name": "x"})
	e.SetRun("r1")
	ops := []metrics.Op{{Name: "buy", Kind: metrics.KindStep, Scenario: "s"}, {Name: "s", Kind: metrics.KindScenario, Scenario: "s"}}
	tot, cur := []*metrics.Stats{metrics.NewStats(), metrics.NewStats()}, []*metrics.Stats{metrics.NewStats(), metrics.NewStats()}
	tot[0].Add(2_000_000, 2_000_000, metrics.OK, 0)
	cur[0].Add(3_000_000, 3_000_000, metrics.OK, 0)
	cur[0].Add(1_000_000, 1_000_000, metrics.HTTP5xx, 0)
	ph := &metrics.Phase{Index: 1, Name: "users=2", Load: []metrics.Load{{Scenario: "s", VUs: 2}}}
	e.Tick(ph, &metrics.Tick{Ops: ops, Total: tot, Cur: cur, Final: true})
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	const want = `
# HELP perflab_requests_total Operations made (requests, transactions, iterations), failed ones included.
# TYPE perflab_requests_total counter
perflab_requests_total{kind="scenario",label_release="R1",label_team_name="x",operation="s",plan="shop",run_id="r1",scenario="s",stage="users=2"} 0
perflab_requests_total{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2"} 3
# HELP perflab_errors_total Failed operations, by error kind.
# TYPE perflab_errors_total counter
perflab_errors_total{error="http_5xx",kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2"} 1
# HELP perflab_vus VUs of the scenario in the stage (the most, in an open model).
# TYPE perflab_vus gauge
perflab_vus{label_release="R1",label_team_name="x",plan="shop",run_id="r1",scenario="s",stage="users=2"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "perflab_requests_total", "perflab_errors_total", "perflab_vus"); err != nil {
		t.Error(err)
	}
	// The failed request's 1 ms, apart from the successful ones'.
	const wantFailed = `
# HELP perflab_failed_latency_seconds Latency of the failed operations that were sent (from the due time in open models).
# TYPE perflab_failed_latency_seconds histogram
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.0005"} 0
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.001"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.0025"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.005"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.01"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.025"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.05"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.1"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.25"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="0.5"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="1"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="2.5"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="5"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="10"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="30"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="60"} 1
perflab_failed_latency_seconds_bucket{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2",le="+Inf"} 1
perflab_failed_latency_seconds_sum{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2"} 0.001
perflab_failed_latency_seconds_count{kind="step",label_release="R1",label_team_name="x",operation="buy",plan="shop",run_id="r1",scenario="s",stage="users=2"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantFailed), "perflab_failed_latency_seconds"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ts := TimeSeries(mfs, 1000)
	var names []string
	for _, s := range ts {
		if !slices.IsSortedFunc(s.Labels, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) }) {
			t.Errorf("labels not sorted: %v", s.Labels)
		}
		for _, l := range s.Labels {
			if l.Name == "__name__" {
				names = append(names, l.Value)
			}
		}
	}
	for _, n := range []string{"perflab_latency_seconds_bucket", "perflab_latency_seconds_sum", "perflab_latency_seconds_count", "perflab_requests_total", "perflab_run_info"} {
		if !slices.Contains(names, n) {
			t.Errorf("no %s series in %v", n, names)
		}
	}
}
