package plan

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Threshold is a pass/fail criterion checked at the end of a run, such as
// "p95 < 500ms", "errors < 0.1%" or "check-out: p75 <= 2s". Without an
// operation name it applies to every step and transaction of every stage;
// the operation "total" means a stage's requests as a whole (rps, errors).
// "count" is how many times an operation ran, successful or not ("count >
// 0" asks that it run: an operation that never ran passes the thresholds
// of its times and errors, having none to measure).
// "dropped" is of an open model's iterations, those it could not start
// (every VU busy): a share of those due ("dropped < 1%") or a count
// ("dropped == 0"), per scenario (without a name: each open-model
// scenario) or for a stage's open models together ("total: dropped < 1%").
//
// A latency (p50 ... max) is of the successful operations (OK) unless the
// metric names other times: "p95(ko) < 2s" is of the failed operations
// that were sent (KO), "p95(all) < 1s" of all of them together (OK and
// KO); "p95(ok)" says the default.
//
// A regression threshold, "p75 regression vs release=Goldenrod < 10%",
// compares the run with the stored runs of the same plan that carry a label
// (Baseline), stage by stage and operation by operation.
type Threshold struct {
	Pos       Pos
	Source    string
	Operation string // empty: every step and transaction
	Metric    string // p50 p75 p90 p95 p99 p999 mean min max errors rps count dropped
	// Times are the operations a latency is of: "" (the successful ones,
	// as "ok" says too), "ko" (the failed ones) or "all".
	Times string
	Op    string // < <= > >=, and == for errors and dropped
	// Value is in ms for latencies, a fraction for errors, per second for
	// rps, a count of operations for count, of iterations for dropped (a fraction of those due
	// when Share), and a fraction of the baseline for regressions.
	Value float64
	// Share says that a dropped threshold's Value is a share of the
	// iterations due, written as a percentage ("dropped < 1%").
	Share bool
	// Baseline is the label selector (name=value) of a regression threshold.
	Baseline string
	// Abort stops the run as soon as the threshold fails on a stage's data
	// so far ("errors < 5% abort"), instead of only judging it at the end.
	Abort bool
}

var (
	thresholdRe  = regexp.MustCompile(`^\s*(?:(.+?)\s*:\s*)?([a-z0-9]+)(?:\s*\(\s*([a-z]*)\s*\))?\s*(<=|>=|==|<|>)\s*([0-9.]+)\s*([a-z%/]*)\s*$`)
	regressionRe = regexp.MustCompile(`^\s*(?:(.+?)\s*:\s*)?([a-z0-9]+)\s+regression\s+vs\s+([^\s=]+=\S+)\s*(<=|<)\s*([0-9.]+)\s*%\s*$`)
	timedRe      = regexp.MustCompile(`^\s*(?:.+?\s*:\s*)?[a-z0-9]+\s*\(`)
	abortRe      = regexp.MustCompile(`\s+abort\s*$`)
)

// RegressionMetrics are the metrics a regression threshold can name: a
// latency rising, or throughput (rps) falling, against the baseline.
var RegressionMetrics = []string{"p50", "p75", "p90", "p95", "p99", "p999", "mean", "rps"}

// ThresholdMetrics are the metrics a threshold can name.
var ThresholdMetrics = []string{"p50", "p75", "p90", "p95", "p99", "p999", "mean", "min", "max", "errors", "rps", "count", "dropped"}

// counted reports whether a metric is counted, not timed: errors, rps,
// count and dropped.
func counted(metric string) bool {
	return metric == "errors" || metric == "rps" || metric == "count" || metric == "dropped"
}

// ThresholdTimes are the operations a latency threshold can be of, as
// "p95(ko)" names them: the successful ones (ok, the default), the failed
// ones that were sent (ko), or all of them together.
var ThresholdTimes = []string{"ok", "ko", "all"}

// ParseThreshold reads one threshold expression.
func ParseThreshold(s string) (*Threshold, error) {
	expr, abort := s, false
	if loc := abortRe.FindStringIndex(s); loc != nil {
		expr, abort = s[:loc[0]], true
	}
	if strings.Contains(expr, " regression ") {
		if timedRe.MatchString(expr) {
			return nil, fmt.Errorf("threshold %q: a regression compares the successful operations' times; name the metric alone, such as \"p75 regression vs release=Goldenrod < 10%%\"", s)
		}
		if abort {
			return nil, fmt.Errorf("threshold %q: a regression is judged against stored runs at the end; it cannot abort the run", s)
		}
		return parseRegression(s, expr)
	}
	m, at := thresholdRe.FindStringSubmatch(expr), thresholdRe.FindStringSubmatchIndex(expr)
	if m == nil {
		return nil, fmt.Errorf("threshold %q: want [OPERATION:] METRIC[(ok|ko|all)] OP VALUE [abort], such as \"p95 < 500ms\", \"p95(ko) < 2s\", \"errors < 0.1%% abort\", \"check-out: rps > 20\", \"dropped < 1%%\" or \"p75 regression vs release=Goldenrod < 10%%\"", s)
	}
	t := &Threshold{Source: strings.TrimSpace(s), Operation: m[1], Metric: m[2], Times: m[3], Op: m[4], Abort: abort}
	if !slices.Contains(ThresholdMetrics, t.Metric) {
		return nil, fmt.Errorf("threshold %q: unknown metric %q: want one of %s%s", s, t.Metric, strings.Join(ThresholdMetrics, ", "), suggest(t.Metric, ThresholdMetrics))
	}
	switch timed := at[6] >= 0; {
	case !timed:
	case counted(t.Metric):
		return nil, fmt.Errorf("threshold %q: %s is counted, not timed: (ok), (ko) and (all) are for latencies (p50 ... p999, mean, min, max), such as \"p95(ko) < 2s\"", s, t.Metric)
	case !slices.Contains(ThresholdTimes, t.Times):
		return nil, fmt.Errorf("threshold %q: %s(%s): want %s(ok) for the successful operations (the default), %s(ko) for the failed ones or %s(all) for both together%s",
			s, t.Metric, t.Times, t.Metric, t.Metric, t.Metric, suggest(t.Times, ThresholdTimes))
	}
	if t.Times == "ok" {
		t.Times = ""
	}
	v, err := strconv.ParseFloat(m[5], 64)
	if err != nil {
		return nil, fmt.Errorf("threshold %q: %v", s, err)
	}
	unit := m[6]
	switch t.Metric {
	case "errors":
		switch unit {
		case "%":
			v = percent(m[5], v)
		case "":
		default:
			return nil, fmt.Errorf("threshold %q: errors are a ratio such as 0.1%% or 0.001", s)
		}
	case "rps":
		if unit != "" && unit != "/s" {
			return nil, fmt.Errorf("threshold %q: rps is per second, such as rps > 800", s)
		}
	case "count":
		switch {
		case unit != "":
			return nil, fmt.Errorf("threshold %q: count is how many times an operation ran, such as count > 0", s)
		case v != math.Trunc(v):
			return nil, fmt.Errorf("threshold %q: a count of operations is whole", s)
		case abort && t.Op != "<" && t.Op != "<=":
			return nil, fmt.Errorf("threshold %q: a count only grows as a stage goes: count %s %s cannot fail before the stage ends, where it is judged; remove abort", s, t.Op, m[5])
		}
	case "dropped":
		switch {
		case unit == "%":
			v, t.Share = percent(m[5], v), true
		case unit != "":
			return nil, fmt.Errorf("threshold %q: dropped is a share of the iterations due, such as dropped < 1%%, or a count of them, such as dropped == 0", s)
		case v != math.Trunc(v):
			return nil, fmt.Errorf("threshold %q: a count of iterations is whole; a share of those due is a percentage, such as dropped < 1%%", s)
		}
	default:
		if unit == "" {
			return nil, fmt.Errorf("threshold %q: give the latency a unit, such as 500ms or 2s", s)
		}
		d, err := time.ParseDuration(m[5] + unit)
		if err != nil {
			return nil, fmt.Errorf("threshold %q: %q is not a duration", s, m[5]+unit)
		}
		v = float64(d) / 1e6
	}
	if t.Operation == "total" && !counted(t.Metric) {
		return nil, fmt.Errorf("threshold %q: total has rps, errors, count and dropped; latencies are per operation", s)
	}
	if t.Op == "==" && (!counted(t.Metric) || t.Metric == "rps") {
		return nil, fmt.Errorf("threshold %q: == is for what is counted, errors, count and dropped (dropped == 0); give %s a bound: <, <=, > or >=", s, t.Metric)
	}
	// What is timed or counted is never below 0, and a share is of a
	// whole: a threshold beyond them would judge nothing.
	if t.Op == "<" && v == 0 {
		hint := ""
		if t.Metric != "rps" && counted(t.Metric) {
			hint = fmt.Sprintf(" (%s == 0 says none)", t.Metric)
		}
		return nil, fmt.Errorf("threshold %q: nothing is below 0: it could never hold%s", s, hint)
	}
	if (t.Metric == "errors" || t.Share) && v > 1 {
		of, given := "errors are a share of the operations", m[5]+"%"
		if t.Share && t.Metric == "dropped" {
			of = "dropped is a share of the iterations due"
		}
		if unit != "%" {
			given = m[5] + " is " + shift2(m[5]) + "%, "
		} else {
			given += " is "
		}
		return nil, fmt.Errorf("threshold %q: %s, 0%% to 100%%: %sbeyond it", s, of, given)
	}
	t.Value = v
	return t, nil
}

// parseRegression reads "[OPERATION:] METRIC regression vs NAME=VALUE < N%".
func parseRegression(src, expr string) (*Threshold, error) {
	m := regressionRe.FindStringSubmatch(expr)
	if m == nil {
		return nil, fmt.Errorf("threshold %q: want [OPERATION:] METRIC regression vs LABEL=VALUE < PERCENT, such as \"p75 regression vs release=Goldenrod < 10%%\"", src)
	}
	t := &Threshold{Source: strings.TrimSpace(src), Operation: m[1], Metric: m[2], Baseline: m[3], Op: m[4]}
	if t.Operation == "total" {
		return nil, fmt.Errorf("threshold %q: a regression compares operations, stage by stage; total has none (name an operation, or none for all)", src)
	}
	if !slices.Contains(RegressionMetrics, t.Metric) {
		return nil, fmt.Errorf("threshold %q: a regression is of one of %s, not %q%s", src, strings.Join(RegressionMetrics, ", "), t.Metric, suggest(t.Metric, RegressionMetrics))
	}
	v, err := strconv.ParseFloat(m[5], 64)
	if err != nil {
		return nil, fmt.Errorf("threshold %q: %v", src, err)
	}
	t.Value = percent(m[5], v)
	return t, nil
}

// percent is a percentage as a fraction, parsed exactly: 0.7% is 0.007,
// where 0.7/100 is 0.006999999999999999 and "errors <= 0.7%" would fail
// with 7 errors in 1000.
func percent(text string, v float64) float64 {
	if f, err := strconv.ParseFloat(text+"e-2", 64); err == nil {
		return f
	}
	return v / 100
}

// String is the threshold in canonical form, which ParseThreshold reads
// back to the same threshold: latencies in ms, errors as a fraction,
// a regression's limit and a share of dropped iterations in percent.
func (t *Threshold) String() string {
	var b strings.Builder
	if t.Operation != "" {
		b.WriteString(t.Operation + ": ")
	}
	b.WriteString(t.Metric)
	if t.Times != "" {
		b.WriteString("(" + t.Times + ")")
	}
	v := strconv.FormatFloat(t.Value, 'f', -1, 64)
	switch {
	case t.Regression():
		fmt.Fprintf(&b, " regression vs %s %s %s%%", t.Baseline, t.Op, shift2(v))
	case t.Share:
		fmt.Fprintf(&b, " %s %s%%", t.Op, shift2(v))
	case counted(t.Metric):
		fmt.Fprintf(&b, " %s %s", t.Op, v)
	default:
		fmt.Fprintf(&b, " %s %sms", t.Op, v)
	}
	if t.Abort {
		b.WriteString(" abort")
	}
	return b.String()
}

// shift2 multiplies a decimal by 100 in its text ("0.007" is "0.7"), so
// that a fraction written as a percentage parses back to the same float.
func shift2(v string) string {
	whole, frac, _ := strings.Cut(v, ".")
	frac += "00"
	whole, frac = strings.TrimLeft(whole+frac[:2], "0"), strings.TrimRight(frac[2:], "0")
	if whole == "" {
		whole = "0"
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// Regression reports whether t compares with a baseline.
func (t *Threshold) Regression() bool { return t.Baseline != "" }

// Holds reports whether an actual value meets the threshold.
func (t *Threshold) Holds(actual float64) bool {
	switch t.Op {
	case "<":
		return actual < t.Value
	case "<=":
		return actual <= t.Value
	case ">":
		return actual > t.Value
	case "==":
		return actual == t.Value
	}
	return actual >= t.Value
}

// Thresholds reads the thresholds of a plan's source without the rest of
// the plan: what a run is judged by again where its plan cannot be loaded
// whole (its data files were on the machines that ran it), as for runs
// merged from several load generators.
func Thresholds(src []byte, name string) ([]*Threshold, error) {
	var doc struct {
		Thresholds []yaml.Node `yaml:"thresholds"`
	}
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []*Threshold
	for _, n := range doc.Thresholds {
		if n.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d:%d: want a threshold such as \"p95 < 500ms\"", name, n.Line, n.Column)
		}
		t, err := ParseThreshold(n.Value)
		if err != nil {
			return nil, fmt.Errorf("%s:%d:%d: %w", name, n.Line, n.Column, err)
		}
		t.Pos = Pos{Line: n.Line, Col: n.Column}
		out = append(out, t)
	}
	return out, nil
}
