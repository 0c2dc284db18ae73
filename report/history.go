package report

import (
	"fmt"
	"io"
	"sort"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
)

// HistoryPoint is one run's value of a metric for one stage and operation.
type HistoryPoint struct {
	RunID string  `json:"run"`
	Value float64 `json:"value_ms"`
}

// HistorySeries is an operation's metric across the runs of a plan, oldest
// first, with the runs where its level changed.
type HistorySeries struct {
	Stage     string         `json:"stage"`
	Operation string         `json:"operation"`
	Points    []HistoryPoint `json:"points"`
	Changes   []string       `json:"changes"`
}

// History follows each stage's operations across runs (oldest first) by a
// percentile of their latency, and names the run where each change of level
// began, as performance CI systems do.
func History(runs []*Summary, pct float64, minSize int) []HistorySeries {
	type key struct{ stage, op string }
	var order []key
	series := map[key]*HistorySeries{}
	for _, s := range runs {
		for _, ph := range s.Stages {
			for _, op := range ph.Operations {
				if op.Kind == metrics.KindScenario || op.Count == op.Errors.Total {
					continue
				}
				k := key{ph.Name, op.Name}
				hs := series[k]
				if hs == nil {
					hs = &HistorySeries{Stage: ph.Name, Operation: op.Name}
					series[k] = hs
					order = append(order, k)
				}
				hs.Points = append(hs.Points, HistoryPoint{RunID: s.RunID, Value: percentileOf(op.Latency, pct)})
			}
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].stage != order[j].stage {
			return order[i].stage < order[j].stage
		}
		return order[i].op < order[j].op
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
			hs.Changes = append(hs.Changes, fmt.Sprintf("p%g %s from %s to %s from run %s on", pct, verb, human(cp.Before), human(cp.After), hs.Points[cp.Index].RunID))
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

// WriteHistory prints each series' changes, or that it held steady.
func WriteHistory(w io.Writer, hs []HistorySeries, pct float64) error {
	for _, s := range hs {
		first, last := s.Points[0], s.Points[len(s.Points)-1]
		if len(s.Points) == 1 {
			fmt.Fprintf(w, "%s  %s: 1 run, p%g %s (%s)\n", s.Stage, s.Operation, pct, human(first.Value), first.RunID)
		} else {
			fmt.Fprintf(w, "%s  %s: %d runs, p%g %s (%s) -> %s (%s)\n", s.Stage, s.Operation, len(s.Points), pct,
				human(first.Value), first.RunID, human(last.Value), last.RunID)
		}
		for _, c := range s.Changes {
			fmt.Fprintln(w, "  change: "+c)
		}
	}
	return nil
}
