package judge

import (
	"slices"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// Thresholds checks every threshold in every stage of a summary.
// Regression thresholds are left to Regression.
func Thresholds(ts []*plan.Threshold, s *results.Summary) []results.ThresholdResult {
	var out []results.ThresholdResult
	for _, ph := range s.Stages {
		for _, t := range ts {
			if !t.Regression() {
				out = append(out, checkStage(t, ph.Name, ph.Load, ph.Operations, ph.Duration)...)
			}
		}
	}
	return out
}

// Early judges the thresholds marked abort on a stage's data so far,
// once the stage's first interval has closed and EarlyAfter has passed,
// and returns the first that fails, or nil. An operation with nothing
// measured yet fails nothing.
func Early(ts []*plan.Threshold, ph *metrics.Phase, tk *metrics.Tick) *results.ThresholdResult {
	if tk.Intervals < 1 || tk.Elapsed < EarlyAfter {
		return nil
	}
	if !slices.ContainsFunc(ts, func(t *plan.Threshold) bool { return t.Abort }) {
		return nil
	}
	var ops []results.Operation
	for i, op := range tk.Ops {
		s := metrics.NewStats()
		s.Merge(tk.Total[i])
		s.Merge(tk.Cur[i])
		ops = append(ops, results.Operation{Name: op.Name, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction, Summary: s.Summarize(tk.Elapsed)})
	}
	return EarlyOps(ts, ph.Name, ph.Load, ops, tk.Elapsed)
}

// EarlyAfter is how long a stage runs before its abort thresholds are
// judged, besides its first interval: a short run's intervals are of
// 100 ms, whose few requests (the first connections' among them) are no
// verdict.
const EarlyAfter = time.Second

// EarlyOps is Early of a stage's operations so far, elapsed into it, the
// stage's load being loads: such as a distributed run's, merged from its
// workers' stored intervals. An open model's iterations still going are
// not counted yet: its share of dropped iterations so far is of those
// ended or dropped, at most its VUs fewer than were due.
func EarlyOps(ts []*plan.Threshold, stage string, loads []metrics.Load, ops []results.Operation, elapsed time.Duration) *results.ThresholdResult {
	for _, t := range ts {
		if !t.Abort {
			continue
		}
		for _, r := range checkStage(t, stage, loads, started(ops), elapsed.Seconds()) {
			if !r.Pass && r.Note == "" {
				return &r
			}
		}
	}
	return nil
}

// checkStage checks one threshold against the operations of one stage,
// whose load was loads and which lasted seconds.
func checkStage(t *plan.Threshold, stage string, loads []metrics.Load, ops []results.Operation, seconds float64) []results.ThresholdResult {
	if t.Metric == "dropped" {
		return checkDropped(t, stage, loads, ops)
	}
	if t.Operation == "total" {
		var count, errs int64
		for _, op := range ops {
			if op.Kind == metrics.KindStep {
				count += op.Count
				errs += op.Errors.Total
			}
		}
		// The stage's requests over its wall time: adding the operations'
		// rates would add rates over different spans (a scenario that ends
		// early has a high one).
		var actual float64
		switch {
		case t.Metric == "errors":
			actual = ratio(errs, count)
		case t.Metric == "count":
			actual = float64(count)
		case seconds > 0:
			actual = float64(count) / seconds
		}
		return []results.ThresholdResult{{Threshold: t.Source, Stage: stage, Operation: "total", Actual: actual, Pass: t.Holds(actual)}}
	}
	var out []results.ThresholdResult
	for _, op := range ops {
		if t.Operation == "" && op.Kind == metrics.KindScenario || t.Operation != "" && op.Name != t.Operation {
			continue
		}
		out = append(out, checkOp(t, stage, op))
	}
	return out
}

// NeverRan is the note of a threshold of an operation's times or errors
// when the operation never ran in the stage (a step under a condition that
// never held, a branch never taken): there is nothing to measure, and the
// threshold passes. A count or a rate is judged as it is, 0.
const NeverRan = "never ran: nothing to measure (count > 0 requires that it run)"

func checkOp(t *plan.Threshold, stage string, op results.Operation) results.ThresholdResult {
	r := results.ThresholdResult{Threshold: t.Source, Stage: stage, Operation: op.Name}
	if op.Count == 0 && t.Metric != "rps" && t.Metric != "count" {
		r.Pass, r.Note = true, NeverRan
		return r
	}
	var l metrics.LatencySummary
	switch t.Metric {
	case "count":
		r.Actual = float64(op.Count)
	case "errors":
		r.Actual = ratio(op.Errors.Total, op.Count)
	case "rps":
		r.Actual = op.RPS
	default:
		var note string
		l, note = timesOf(t.Times, op)
		if note != "" {
			// None failed: the failed operations' times are within any
			// bound.
			r.Note, r.Pass = note, t.Times == "ko" && op.KOCount() == 0
			return r
		}
		r.Actual = map[string]float64{"p50": l.P50, "p75": l.P75, "p90": l.P90, "p95": l.P95, "p99": l.P99, "p999": l.P999,
			"mean": l.Mean, "min": l.Min, "max": l.Max}[t.Metric]
	}
	r.Pass = t.Holds(r.Actual)
	return r
}

// timesOf are the latencies of an operation that a threshold judges (its
// Times): of the successful operations (OK), of the failed ones (KO), or of
// all of them; or why there are none to judge.
func timesOf(times string, op results.Operation) (metrics.LatencySummary, string) {
	ok, ko := op.Count-op.Errors.Total > 0, op.KOCount() > 0
	known := op.Failed != nil && op.Failed.Count > 0 // not in a run recorded before perflab kept them
	switch {
	case times == "ko" && !ko:
		return metrics.LatencySummary{}, "no failed operation to measure"
	case times == "ko" && !known, times == "all" && ko && !known:
		return metrics.LatencySummary{}, "the failed operations' percentiles were not recorded"
	case times == "ko":
		return op.Failed.LatencySummary, ""
	case times == "all" && !ok && !ko:
		return metrics.LatencySummary{}, "no operation to measure"
	case times == "all" && !ko:
		return op.Latency, ""
	case times == "all" && !ok:
		return op.Failed.LatencySummary, ""
	case times == "all" && op.All == nil:
		return metrics.LatencySummary{}, "the figures of all operations were not recorded"
	case times == "all":
		return *op.All, ""
	case !ok:
		return metrics.LatencySummary{}, "no successful operation to measure"
	}
	return op.Latency, ""
}

// checkDropped checks a threshold of dropped iterations: those of each
// open-model scenario (one named, or each when none is), or of all of a
// stage's together (total), as a share of the iterations due or a count.
// A closed model drops none, having no due times: a scenario named (or a
// total) without an open model passes, and says why (validate refuses
// such a threshold; a run judged again may still have one).
func checkDropped(t *plan.Threshold, stage string, loads []metrics.Load, ops []results.Operation) []results.ThresholdResult {
	var out []results.ThresholdResult
	var dropped, due int64
	anyOpen := false
	for _, op := range ops {
		if op.Kind != metrics.KindScenario {
			continue
		}
		d, open := metrics.Due(loads, op.Scenario, op.Count, op.Dropped)
		switch {
		case t.Operation == "total":
			dropped, due, anyOpen = dropped+op.Dropped, due+d, anyOpen || open
		case t.Operation == "" && open || t.Operation == op.Name:
			out = append(out, droppedResult(t, stage, op.Name, op.Dropped, d, open))
		}
	}
	if t.Operation == "total" {
		out = append(out, droppedResult(t, stage, "total", dropped, due, anyOpen))
	}
	return out
}

func droppedResult(t *plan.Threshold, stage, op string, dropped, due int64, open bool) results.ThresholdResult {
	r := results.ThresholdResult{Threshold: t.Source, Stage: stage, Operation: op, Actual: float64(dropped)}
	if t.Share {
		r.Actual = ratio(dropped, due)
	}
	if !open {
		r.Pass, r.Note = true, "a closed model: its VUs loop, no iteration is due and none is dropped"
		return r
	}
	r.Pass = t.Holds(r.Actual)
	return r
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// started leaves out the operations that have not run yet: early in a
// stage, a later step's count and rate are zero for want of time. A
// scenario that has only dropped iterations so far has run: it could not
// start them.
func started(ops []results.Operation) []results.Operation {
	var out []results.Operation
	for _, op := range ops {
		if op.Count > 0 || op.Dropped > 0 {
			out = append(out, op)
		}
	}
	return out
}
