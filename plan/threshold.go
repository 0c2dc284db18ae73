package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Threshold is a pass/fail criterion checked at the end of a run, such as
// "p95 < 500ms", "errors < 0.1%" or "check-out: p75 <= 2s". Without an
// operation name it applies to every step and transaction of every stage;
// the operation "total" means a stage's requests as a whole (rps, errors).
type Threshold struct {
	Pos       Pos
	Source    string
	Operation string // empty: every step and transaction
	Metric    string // p50 p75 p90 p95 p99 p999 mean min max errors rps
	Op        string // < <= > >=
	// Value is in ms for latencies, a fraction for errors, per second for rps.
	Value float64
}

var thresholdRe = regexp.MustCompile(`^\s*(?:(.+?)\s*:\s*)?([a-z0-9]+)\s*(<=|>=|<|>)\s*([0-9.]+)\s*([a-z%/]*)\s*$`)

// ThresholdMetrics are the metrics a threshold can name.
var ThresholdMetrics = []string{"p50", "p75", "p90", "p95", "p99", "p999", "mean", "min", "max", "errors", "rps"}

// ParseThreshold reads one threshold expression.
func ParseThreshold(s string) (*Threshold, error) {
	m := thresholdRe.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("threshold %q: want [OPERATION:] METRIC OP VALUE, such as \"p95 < 500ms\", \"errors < 0.1%%\" or \"check-out: rps > 20\"", s)
	}
	t := &Threshold{Source: strings.TrimSpace(s), Operation: m[1], Metric: m[2], Op: m[3]}
	known := false
	for _, k := range ThresholdMetrics {
		known = known || k == t.Metric
	}
	if !known {
		return nil, fmt.Errorf("threshold %q: unknown metric %q: want one of %s%s", s, t.Metric, strings.Join(ThresholdMetrics, ", "), suggest(t.Metric, ThresholdMetrics))
	}
	v, err := strconv.ParseFloat(m[4], 64)
	if err != nil {
		return nil, fmt.Errorf("threshold %q: %v", s, err)
	}
	unit := m[5]
	switch t.Metric {
	case "errors":
		switch unit {
		case "%":
			v /= 100
		case "":
		default:
			return nil, fmt.Errorf("threshold %q: errors are a ratio such as 0.1%% or 0.001", s)
		}
	case "rps":
		if unit != "" && unit != "/s" {
			return nil, fmt.Errorf("threshold %q: rps is per second, such as rps > 800", s)
		}
	default:
		if unit == "" {
			return nil, fmt.Errorf("threshold %q: give the latency a unit, such as 500ms or 2s", s)
		}
		d, err := time.ParseDuration(m[4] + unit)
		if err != nil {
			return nil, fmt.Errorf("threshold %q: %q is not a duration", s, m[4]+unit)
		}
		v = float64(d) / 1e6
	}
	if t.Operation == "total" && t.Metric != "rps" && t.Metric != "errors" {
		return nil, fmt.Errorf("threshold %q: total has rps and errors; latencies are per operation", s)
	}
	t.Value = v
	return t, nil
}

// Holds reports whether an actual value meets the threshold.
func (t *Threshold) Holds(actual float64) bool {
	switch t.Op {
	case "<":
		return actual < t.Value
	case "<=":
		return actual <= t.Value
	case ">":
		return actual > t.Value
	}
	return actual >= t.Value
}
