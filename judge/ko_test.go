package judge

import (
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// A latency threshold judges the successful operations' times, or those
// it names: the failed ones' (ko) or all of them (all). An operation with
// none of the times named says so: it fails a threshold of OK times, and
// passes one of KO times (no failure was slow).
func TestThresholdTimes(t *testing.T) {
	mixed, okOnly, koOnly := metrics.NewStats(), metrics.NewStats(), metrics.NewStats()
	for i := range 10 {
		mixed.Add(2*time.Millisecond, 0, metrics.OK, 0)
		mixed.Add(time.Duration(20+i)*time.Millisecond, 0, metrics.HTTP5xx, 0)
		okOnly.Add(2*time.Millisecond, 0, metrics.OK, 0)
		koOnly.Add(30*time.Millisecond, 0, metrics.Timeout, 0)
	}
	op := func(name string, s *metrics.Stats) results.Operation {
		return results.Operation{Name: name, Kind: metrics.KindStep, Summary: s.Summarize(time.Second)}
	}
	ops := []results.Operation{op("mixed", mixed), op("ok", okOnly), op("ko", koOnly)}
	type want struct {
		actual float64
		pass   bool
		note   string
	}
	// mixed: 10 OK at 2 ms, 10 KO at 20 ... 29 ms.
	for src, ws := range map[string][3]want{
		"p50 < 10ms":      {{2, true, ""}, {2, true, ""}, {0, false, "no successful operation to measure"}},
		"p50(ok) < 10ms":  {{2, true, ""}, {2, true, ""}, {0, false, "no successful operation to measure"}},
		"min(ko) >= 20ms": {{20, true, ""}, {0, true, "no failed operation to measure"}, {30, true, ""}},
		"max(ko) < 25ms":  {{29, false, ""}, {0, true, "no failed operation to measure"}, {30, false, ""}},
		"p95(all) < 10ms": {{28, false, ""}, {2, true, ""}, {30, false, ""}},
		"p50(all) <= 2ms": {{2, true, ""}, {2, true, ""}, {30, false, ""}},
	} {
		th, err := plan.ParseThreshold(src)
		if err != nil {
			t.Fatal(err)
		}
		rs := checkStage(th, "all", nil, ops, 1)
		for i, w := range ws {
			// Percentiles within the histograms' 0.1%.
			if r := rs[i]; r.Actual < w.actual || r.Actual > w.actual*1.001 || r.Pass != w.pass || r.Note != w.note {
				t.Errorf("%s on %s: %+v, want %+v", src, r.Operation, r, w)
			}
		}
	}
}
