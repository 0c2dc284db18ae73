package judge

import (
	"fmt"
	"sort"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// HistoryPoint is one run's value of a metric for one stage and operation.
type HistoryPoint struct {
	RunID string  `json:"run"`
	Value float64 `json:"value_ms"`
}

// HistorySeries is an operation's metric across the runs of a plan, oldest
// first, with the runs where its level changed.
type HistorySeries struct {
	Stage       string         `json:"stage"`
	Scenario    string         `json:"scenario"`
	Transaction string         `json:"transaction,omitempty"`
	Kind        metrics.Kind   `json:"kind"`
	Operation   string         `json:"operation"`
	Points      []HistoryPoint `json:"points"`
	Changes     []string       `json:"changes"`
}

// History follows each stage's operations across runs (oldest first) by a
// percentile of their latency, and names the run where each change of level
// began, as performance CI systems do.
func History(runs []*results.Summary, pct float64, minSize int) []HistorySeries {
	// One series per operation of a stage: a step of one name in two
	// transactions or two scenarios is two series, one point per run each.
	type key struct {
		stage, scenario, transaction, op string
		kind                             metrics.Kind
	}
	var order []key
	series := map[key]*HistorySeries{}
	for _, s := range runs {
		for _, ph := range s.Stages {
			for _, op := range ph.Operations {
				if op.Kind == metrics.KindScenario || op.Count == op.Errors.Total {
					continue
				}
				k := key{ph.Name, op.Scenario, op.Transaction, op.Name, op.Kind}
				hs := series[k]
				if hs == nil {
					hs = &HistorySeries{Stage: ph.Name, Scenario: op.Scenario, Transaction: op.Transaction, Kind: op.Kind, Operation: op.Name}
					series[k] = hs
					order = append(order, k)
				}
				hs.Points = append(hs.Points, HistoryPoint{RunID: s.RunID, Value: percentileOf(op.Latency, pct)})
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.stage != b.stage {
			return a.stage < b.stage
		}
		if a.op != b.op {
			return a.op < b.op
		}
		if a.scenario != b.scenario {
			return a.scenario < b.scenario
		}
		return a.transaction < b.transaction
	})
	var out []HistorySeries
	for _, k := range order {
		hs := series[k]
		vals := make([]float64, len(hs.Points))
		for i, p := range hs.Points {
			vals[i] = p.Value
		}
		for _, cp := range analyze.ChangePoints(vals, 0.05, minSize) {
			verb := "rose"
			if cp.After < cp.Before {
				verb = "fell"
			}
			hs.Changes = append(hs.Changes, fmt.Sprintf("p%g %s from %s to %s from run %s on", pct, verb, results.Human(cp.Before), results.Human(cp.After), hs.Points[cp.Index].RunID))
		}
		out = append(out, *hs)
	}
	return out
}

// HistoryPercentile reports whether runs' summaries keep percentile pct.
func HistoryPercentile(pct float64) bool {
	switch pct {
	case 50, 75, 90, 95, 99, 99.9:
		return true
	}
	return false
}

func percentileOf(l metrics.LatencySummary, pct float64) float64 {
	switch pct {
	case 50:
		return l.P50
	case 75:
		return l.P75
	case 90:
		return l.P90
	case 99:
		return l.P99
	case 99.9:
		return l.P999
	}
	return l.P95
}
