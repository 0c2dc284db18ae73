package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// CSVTables are the tables WriteCSVTable writes.
var CSVTables = []string{"operations", "stages", "scaling", "thresholds", "intervals"}

// WriteCSVTable writes one of a run's tables as CSV: operations (every
// operation of every stage), stages (the check-in/check-out report's
// avg/p50/p75/p95 of each
// transaction, or step, across stages, one row each), scaling (per VU
// count), thresholds, or intervals (counts and percentiles per interval).
func WriteCSVTable(w io.Writer, rd *results.Run, table string) error {
	s := rd.Summary
	cw := csv.NewWriter(w)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	var err error
	switch table {
	case "operations":
		return WriteCSV(w, s)
	case "stages":
		err = cw.Write([]string{"stage", "operation", "kind", "avg_ms", "p50_ms", "p75_ms", "p95_ms"})
		kind, names := acrossOps(s)
		for _, ph := range s.Stages {
			for _, op := range ph.Operations {
				if err == nil && op.Kind == kind && names[op.Name] {
					l := op.Latency
					err = cw.Write([]string{csvcell.Escape(ph.Name), csvcell.Escape(op.Name), string(op.Kind), f(l.Mean), f(l.P50), f(l.P75), f(l.P95)})
				}
			}
		}
	case "scaling":
		err = cw.Write([]string{"vus", "requests", "wall_s", "rps", "speedup", "efficiency"})
		if sc := s.Scaling; sc != nil {
			for _, p := range sc.Points {
				if err == nil {
					err = cw.Write([]string{strconv.Itoa(p.VUs), strconv.FormatInt(p.Requests, 10), f(p.Wall), f(p.RPS), f(p.Speedup), f(p.Efficiency)})
				}
			}
		}
	case "thresholds":
		err = cw.Write([]string{"threshold", "stage", "operation", "actual", "pass", "note"})
		for _, r := range s.Thresholds {
			if err == nil {
				err = cw.Write([]string{csvcell.Escape(r.Threshold), csvcell.Escape(r.Stage), csvcell.Escape(r.Operation), f(r.Actual), strconv.FormatBool(r.Pass), csvcell.Escape(r.Note)})
			}
		}
	case "intervals":
		err = cw.Write(results.IntervalsHeader)
		for _, ph := range s.Stages {
			for _, op := range results.UniqueOps(ph.Operations) {
				ivs := rd.IntervalsOf(ph.Index, op)
				for i, iv := range ivs {
					h, derr := iv.Histogram()
					if derr != nil {
						return derr
					}
					ko, derr := rd.FailedQuantilesAt(ph.Index, op, iv.StartMs)
					if derr != nil {
						return derr
					}
					if err == nil {
						err = cw.Write(results.WithBytes(results.WithPeakVUs(results.IntervalRow(ph.Index, op.Scenario, op.Name, op.Kind, i, iv.StartMs, iv.EndMs, iv.OpCount(h), max(iv.Errors, 0), h, ko, iv.Partial(s.IntervalLength())), iv.PeakVUs), iv.Bytes))
					}
				}
			}
		}
	default:
		return fmt.Errorf("no table %q: want one of %v", table, CSVTables)
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// acrossOps picks the operations of the across-stages table: the
// transactions, or the steps when the plan has none.
func acrossOps(s *results.Summary) (metrics.Kind, map[string]bool) {
	names := map[string]bool{}
	for _, kind := range []metrics.Kind{metrics.KindTransaction, metrics.KindStep} {
		for _, ph := range s.Stages {
			for _, op := range ph.Operations {
				if op.Kind == kind {
					names[op.Name] = true
				}
			}
		}
		if len(names) > 0 {
			return kind, names
		}
	}
	return metrics.KindStep, names
}

// sortedNames lists a set's names in the order of the first stage's
// operations, then alphabetically.
func sortedNames(s *results.Summary, set map[string]bool) []string {
	order := map[string]int{}
	if len(s.Stages) > 0 {
		for i, op := range s.Stages[0].Operations {
			if _, ok := order[op.Name]; !ok {
				order[op.Name] = i
			}
		}
	}
	var out []string
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		oi, iok := order[out[i]]
		oj, jok := order[out[j]]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return out[i] < out[j]
	})
	return out
}
