package report

import (
	"fmt"
	"io"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// WriteHistory prints each series' changes, or that it held steady.
func WriteHistory(w io.Writer, hs []judge.HistorySeries, pct float64) error {
	named := map[[2]string]int{} // series per stage and name: qualify the shared names
	for _, s := range hs {
		named[[2]string{s.Stage, s.Operation}]++
	}
	for _, s := range hs {
		name := s.Operation
		if named[[2]string{s.Stage, s.Operation}] > 1 {
			name += " (scenario " + s.Scenario
			if s.Transaction != "" {
				name += ", in " + s.Transaction
			}
			name += ")"
		}
		first, last := s.Points[0], s.Points[len(s.Points)-1]
		if len(s.Points) == 1 {
			fmt.Fprintf(w, "%s  %s: 1 run, p%g %s (%s)\n", s.Stage, name, pct, results.Human(first.Value), first.RunID)
		} else {
			fmt.Fprintf(w, "%s  %s: %d runs, p%g %s (%s) -> %s (%s)\n", s.Stage, name, len(s.Points), pct,
				results.Human(first.Value), first.RunID, results.Human(last.Value), last.RunID)
		}
		for _, c := range s.Changes {
			fmt.Fprintln(w, "  change: "+c)
		}
	}
	return nil
}
