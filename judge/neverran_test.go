package judge

import (
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// An operation that never ran in a stage (a step under an if that never
// held, a branch of a choice never taken) has nothing to measure: a
// threshold of its times or errors passes, saying so, where "p95 < 500ms"
// failed it as "no successful operation to measure". One that ran and
// always failed still fails: it has nothing successful to measure. A
// count (count > 0) or a rate (rps > 0) is judged as what it is, 0: that
// is how a plan asks that an operation run.
func TestThresholdOfAnOperationThatNeverRan(t *testing.T) {
	taken, failing := metrics.NewStats(), metrics.NewStats()
	for range 10 {
		taken.Add(2*time.Millisecond, 0, metrics.OK, 0)
		failing.Add(30*time.Millisecond, 0, metrics.HTTP5xx, 0)
	}
	op := func(name string, s *metrics.Stats) results.Operation {
		return results.Operation{Name: name, Kind: metrics.KindStep, Summary: s.Summarize(time.Second)}
	}
	ops := []results.Operation{op("taken", taken), op("untaken", metrics.NewStats()), op("failing", failing)}
	type want struct {
		actual float64
		pass   bool
		note   string
	}
	noOK, noKO := "no successful operation to measure", "no failed operation to measure"
	for src, ws := range map[string][]want{
		"p95 < 500ms":         {{2, true, ""}, {0, true, NeverRan}, {0, false, noOK}},
		"max(ko) < 2s":        {{0, true, noKO}, {0, true, NeverRan}, {30, true, ""}},
		"p50(all) < 10ms":     {{2, true, ""}, {0, true, NeverRan}, {30, false, ""}},
		"errors < 1%":         {{0, true, ""}, {0, true, NeverRan}, {1, false, ""}},
		"rps > 0":             {{10, true, ""}, {0, false, ""}, {10, true, ""}},
		"count > 0":           {{10, true, ""}, {0, false, ""}, {10, true, ""}},
		"count >= 10":         {{10, true, ""}, {0, false, ""}, {10, true, ""}},
		"untaken: count == 0": {{0, true, ""}},
		"total: count == 20":  {{20, true, ""}},
	} {
		th, err := plan.ParseThreshold(src)
		if err != nil {
			t.Fatal(err)
		}
		rs := checkStage(th, "all", nil, ops, 1)
		if len(rs) != len(ws) {
			t.Errorf("%s: %+v, want %d results", src, rs, len(ws))
			continue
		}
		for i, w := range ws {
			// Percentiles within the histograms' 0.1%.
			if r := rs[i]; r.Actual < w.actual || r.Actual > w.actual*1.001 || r.Pass != w.pass || r.Note != w.note {
				t.Errorf("%s on %s: %+v, want %+v", src, r.Operation, r, w)
			}
		}
	}
}
