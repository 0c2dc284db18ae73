package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// ThresholdResult is one threshold checked against one operation of one stage.
type ThresholdResult struct {
	Threshold string  `json:"threshold"`
	Stage     string  `json:"stage"`
	Operation string  `json:"operation"`
	Actual    float64 `json:"actual"`
	Pass      bool    `json:"pass"`
	Note      string  `json:"note,omitempty"`
}

// CheckThresholds checks every threshold in every stage of a summary.
// Regression thresholds are left to CheckRegression.
func CheckThresholds(ts []*plan.Threshold, s *Summary) []ThresholdResult {
	var out []ThresholdResult
	for _, ph := range s.Stages {
		for _, t := range ts {
			if !t.Regression() {
				out = append(out, checkStage(t, ph.Name, ph.Operations, ph.Duration)...)
			}
		}
	}
	return out
}

// CheckEarly judges the thresholds marked abort on a stage's data so far,
// once the stage's first interval has closed, and returns the first that
// fails, or nil. An operation with nothing measured yet fails nothing.
func CheckEarly(ts []*plan.Threshold, stage string, tk *metrics.Tick) *ThresholdResult {
	if tk.Intervals < 1 {
		return nil
	}
	var ops []Operation
	for _, t := range ts {
		if !t.Abort {
			continue
		}
		if ops == nil {
			for i, op := range tk.Ops {
				s := metrics.NewStats()
				s.Merge(tk.Total[i])
				s.Merge(tk.Cur[i])
				ops = append(ops, Operation{Name: op.Name, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction, Summary: s.Summarize(tk.Elapsed)})
			}
		}
		for _, r := range checkStage(t, stage, started(ops), tk.Elapsed.Seconds()) {
			if !r.Pass && r.Note == "" {
				return &r
			}
		}
	}
	return nil
}

// checkStage checks one threshold against the operations of one stage,
// which lasted seconds.
func checkStage(t *plan.Threshold, stage string, ops []Operation, seconds float64) []ThresholdResult {
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
		if seconds > 0 {
			actual = float64(count) / seconds
		}
		if t.Metric == "errors" {
			actual = ratio(errs, count)
		}
		return []ThresholdResult{{Threshold: t.Source, Stage: stage, Operation: "total", Actual: actual, Pass: t.Holds(actual)}}
	}
	var out []ThresholdResult
	for _, op := range ops {
		if t.Operation == "" && op.Kind == metrics.KindScenario || t.Operation != "" && op.Name != t.Operation {
			continue
		}
		out = append(out, checkOp(t, stage, op))
	}
	return out
}

func checkOp(t *plan.Threshold, stage string, op Operation) ThresholdResult {
	r := ThresholdResult{Threshold: t.Source, Stage: stage, Operation: op.Name}
	l := op.Latency
	switch t.Metric {
	case "errors":
		r.Actual = ratio(op.Errors.Total, op.Count)
	case "rps":
		r.Actual = op.RPS
	default:
		if op.Count-op.Errors.Total == 0 {
			r.Note = "no successful operation to measure"
			return r
		}
		r.Actual = map[string]float64{"p50": l.P50, "p75": l.P75, "p90": l.P90, "p95": l.P95, "p99": l.P99, "p999": l.P999,
			"mean": l.Mean, "min": l.Min, "max": l.Max}[t.Metric]
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

// Failed counts the failed results.
func Failed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}

// FormatActual shows a threshold's actual value in its metric's unit.
func FormatActual(r ThresholdResult, metric string) string {
	switch metric {
	case "errors":
		return fmt.Sprintf("%.3f%%", 100*r.Actual)
	case "rps":
		return fmt.Sprintf("%.1f/s", r.Actual)
	}
	return Ms(r.Actual) + " ms"
}

// ShownActual is a stored result's actual value as reports show it: its
// note when it has one (a regression's comparison, a missing baseline),
// else the value in its metric's unit.
func ShownActual(r ThresholdResult) string {
	if r.Note != "" {
		return r.Note
	}
	metric := ""
	if t, err := plan.ParseThreshold(r.Threshold); err == nil {
		metric = t.Metric
	}
	return FormatActual(r, metric)
}

// WriteThresholds prints each result, failed ones first.
func WriteThresholds(w io.Writer, ts []*plan.Threshold, rs []ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	metric := map[string]string{}
	for _, t := range ts {
		metric[t.Source] = t.Metric
	}
	fmt.Fprintf(w, "\nthresholds: %d passed, %d failed\n", len(rs)-Failed(rs), Failed(rs))
	for _, pass := range []bool{false, true} {
		for _, r := range rs {
			if r.Pass != pass {
				continue
			}
			mark := "FAIL"
			if pass {
				mark = "ok  "
			}
			note := FormatActual(r, metric[r.Threshold])
			if r.Note != "" {
				note = r.Note
			}
			fmt.Fprintf(w, "  %s %-24s %-20s %-14s %s\n", mark, r.Threshold, r.Operation, r.Stage, note)
		}
	}
}

// WriteJUnit writes the results as JUnit XML, one test case per threshold
// and operation, for CI systems to show.
func WriteJUnit(w io.Writer, ts []*plan.Threshold, rs []ThresholdResult) error {
	return writeJUnit(w, ts, rs)
}

// WriteSummaryJUnit writes a finished run's thresholds as JUnit XML, the
// thresholds read back from their results.
func WriteSummaryJUnit(w io.Writer, s *Summary) error {
	var ts []*plan.Threshold
	seen := map[string]bool{}
	for _, r := range s.Thresholds {
		if t, err := plan.ParseThreshold(r.Threshold); err == nil && !seen[r.Threshold] {
			seen[r.Threshold] = true
			ts = append(ts, t)
		}
	}
	return writeJUnit(w, ts, s.Thresholds)
}

func writeJUnit(w io.Writer, ts []*plan.Threshold, rs []ThresholdResult) error {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Class   string   `xml:"classname,attr"`
		Name    string   `xml:"name,attr"`
		Failure *failure `xml:"failure,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	metric := map[string]string{}
	for _, t := range ts {
		metric[t.Source] = t.Metric
	}
	s := suite{Name: "perflab thresholds", Tests: len(rs), Failures: Failed(rs)}
	for _, r := range rs {
		name := r.Operation + ": " + r.Threshold
		if strings.HasPrefix(r.Threshold, r.Operation+":") {
			name = r.Threshold
		}
		c := testcase{Class: r.Stage, Name: name}
		if !r.Pass {
			msg := "actual " + FormatActual(r, metric[r.Threshold])
			if r.Note != "" {
				msg = r.Note
			}
			c.Failure = &failure{Message: msg}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// started leaves out the operations that have not run yet: early in a
// stage, a later step's count and rate are zero for want of time.
func started(ops []Operation) []Operation {
	var out []Operation
	for _, op := range ops {
		if op.Count > 0 {
			out = append(out, op)
		}
	}
	return out
}
