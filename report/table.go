package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// WriteTable prints each stage's operations as an aligned table.
func WriteTable(w io.Writer, s *results.Summary) error {
	for _, ph := range s.Setup {
		if err := phaseTable(w, "setup", ph); err != nil {
			return err
		}
	}
	for _, ph := range s.Stages {
		title := fmt.Sprintf("stage %d: %s (%.1fs; latencies in ms)", ph.Index, ph.Name, ph.Duration)
		var load []string
		for _, l := range ph.Load {
			if l.Model != "" {
				load = append(load, l.Scenario+" "+l.Model)
			}
		}
		if len(load) > 0 {
			title += "\nload: " + strings.Join(load, "; ")
		}
		if err := phaseTable(w, title, ph); err != nil {
			return err
		}
	}
	for _, ph := range s.Teardown {
		if err := phaseTable(w, "teardown", ph); err != nil {
			return err
		}
	}
	if err := scalingTable(w, s.Scaling); err != nil {
		return err
	}
	if err := simulatorTable(w, s.Simulators); err != nil {
		return err
	}
	if s.Logs != nil {
		fmt.Fprintln(w)
		if err := s.Logs.WriteTable(w); err != nil {
			return err
		}
	}
	if err := resourceTable(w, s); err != nil {
		return err
	}
	driftLine(w, s.Drift)
	_, err := fmt.Fprintln(w, s.Total.Line)
	return err
}

// simulatorTable shows what each simulator saw: what the system under test
// asked of the dependencies they stand in for.
func simulatorTable(w io.Writer, sims []metrics.SimulatorStats) error {
	if len(sims) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nsimulators (what the dependencies saw)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range sims {
		switch s.Kind {
		case "http":
			for _, r := range s.Routes {
				fmt.Fprintf(tw, "  %s\t%s\t%d requests\t%d injected errors\t%d canceled\n", s.Name, r.Name, r.Requests, r.InjectedErrors, r.Canceled)
			}
			if s.Unmatched > 0 {
				fmt.Fprintf(tw, "  %s\tno route\t%d requests\t\t\n", s.Name, s.Unmatched)
			}
		default:
			fmt.Fprintf(tw, "  %s\tresponder\t%d received\t%d matched\t%d replied, %d failed, %d canceled\n", s.Name, s.Received, s.Matched, s.Replied, s.Errors, s.Canceled)
			if s.LastError != "" {
				fmt.Fprintf(tw, "  %s\t\tlast error: %s\t\t\n", s.Name, s.LastError)
			}
		}
	}
	return tw.Flush()
}

// scalingTable prints throughput against the number of VUs.
func scalingTable(w io.Writer, sc *results.Scaling) error {
	if sc == nil {
		return nil
	}
	fmt.Fprintln(w, "\nscaling with the number of VUs (speedup and efficiency against the first stage)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "vus\trequests\twall s\treq/s\tspeedup\tefficiency\t")
	for _, p := range sc.Points {
		fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.1f\t%.2f\t%.0f%%\t\n", p.VUs, p.Requests, p.Wall, p.RPS, p.Speedup, 100*p.Efficiency)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, sc.Sentence()); err != nil {
		return err
	}
	if l := sc.USLLine(); l != "" {
		fmt.Fprintln(w, l)
	}
	return nil
}

func phaseTable(w io.Writer, title string, ph results.PhaseSummary) error {
	fmt.Fprintf(w, "\n%s\n", title)
	if ph.Error != "" {
		fmt.Fprintf(w, "  stopped: %s\n", ph.Error)
	}
	// Numbers align right; pad names so they read left-aligned.
	width := len("operation")
	for _, op := range ph.Operations {
		width = max(width, len(op.Name)+2)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tkind\tcount\terrors\terr%%\trps\tmin\tmean\tp50\tp75\tp90\tp95\tp99\tp99.9\tmax\t\n", width, "operation")
	latencies := func(l metrics.LatencySummary) string {
		return strings.Join([]string{results.Ms(l.Min), results.Ms(l.Mean), results.Ms(l.P50), results.Ms(l.P75), results.Ms(l.P90), results.Ms(l.P95), results.Ms(l.P99), results.Ms(l.P999), results.Ms(l.Max)}, "\t")
	}
	kos := false
	for _, op := range ph.Operations {
		name := op.Name
		if op.Transaction != "" {
			name = "  " + name
		}
		errPct := 0.0
		if op.Count > 0 {
			errPct = 100 * float64(op.Errors.Total) / float64(op.Count)
		}
		fmt.Fprintf(tw, "%-*s\t%s\t%d\t%d\t%.2f\t%.1f\t%s\t\n", width, name, op.Kind, op.Count, op.Errors.Total, errPct, op.RPS, latencies(op.Latency))
		// The failed operations' times under the operation's, as
		// Gatling gives KO beside OK.
		if n := op.KOCount(); n > 0 {
			kos = true
			fmt.Fprintf(tw, "%-*s\t\t%d\t\t\t\t%s\t\n", width, strings.Repeat(" ", len(name)-len(strings.TrimLeft(name, " ")))+"  KO", n, latencies(op.Failed.LatencySummary))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if kos {
		fmt.Fprintln(w, "KO rows: the latencies of the failed operations (those sent), under the row of the same operation's successful ones (OK)")
	}
	if err := serviceTable(w, ph, width); err != nil {
		return err
	}
	if err := serverTable(w, ph, width); err != nil {
		return err
	}
	for _, op := range ph.Operations {
		if op.Dropped > 0 {
			fmt.Fprintf(w, "dropped iterations: %s %s: every VU was busy when they were due\n", op.Name, ph.Dropped(op))
		}
		if op.Queued > 0 {
			fmt.Fprintf(w, "queued iterations: %s %d (every VU busy when they were due; they waited for one)\n", op.Name, op.Queued)
		}
	}
	var kinds []string
	for _, op := range ph.Operations {
		if op.Errors.Total > 0 && op.Kind == metrics.KindStep {
			var parts []string
			for k, n := range op.Errors.ByKind {
				parts = append(parts, fmt.Sprintf("%s %d", k, n))
			}
			kinds = append(kinds, fmt.Sprintf("%s: %s", op.Name, strings.Join(sorted(parts), ", ")))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(w, "errors by kind: %s\n", strings.Join(kinds, "; "))
	}
	return errorsTable(w, ErrorRows(ph), TableErrors)
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// serviceTable prints the service time and the start delay of open-model
// operations: their latency in the main table is from the due time, the
// service time from the actual send, and the start delay between the two.
func serviceTable(w io.Writer, ph results.PhaseSummary, width int) error {
	err := durationTable(w, ph, width, "service time (from the send; the latencies above are from when each iteration was due):",
		func(op results.Operation) *metrics.LatencySummary { return op.ServiceTime })
	if err != nil {
		return err
	}
	return durationTable(w, ph, width, "start delay (from the due time to the send: waiting for a VU or for the generator; operations after an iteration's first have none):",
		func(op results.Operation) *metrics.LatencySummary {
			if d := op.StartDelay; d != nil && d.Max > 0 {
				return d
			}
			return nil
		})
}

// OpenOperations are a phase's operations of open models: those with a
// service time beside their latency.
func OpenOperations(ph results.PhaseSummary) []OpenOp {
	var out []OpenOp
	for _, op := range ph.Operations {
		if op.ServiceTime != nil {
			out = append(out, OpenOp{Operation: op, DroppedDue: ph.Dropped(op)})
		}
	}
	return out
}

// OpenOp is an open-model operation of a stage, with its dropped
// iterations as the tables show them (results.PhaseSummary.Dropped).
type OpenOp struct {
	results.Operation
	DroppedDue string
}

// durationTable prints a table of the operations that have the duration
// that get picks, unless none has it.
func durationTable(w io.Writer, ph results.PhaseSummary, width int, title string, get func(results.Operation) *metrics.LatencySummary) error {
	has := false
	for _, op := range ph.Operations {
		has = has || get(op) != nil
	}
	if !has {
		return nil
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The kind column, as in the main table: a step and its scenario may
	// share a name, and would otherwise print as two identical rows.
	fmt.Fprintf(tw, "%-*s\tkind\tmin\tmean\tp50\tp90\tp95\tp99\tmax\t\n", width, "operation")
	for _, op := range ph.Operations {
		if l := get(op); l != nil {
			fmt.Fprintf(tw, "%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, op.Name, op.Kind,
				results.Ms(l.Min), results.Ms(l.Mean), results.Ms(l.P50), results.Ms(l.P90), results.Ms(l.P95), results.Ms(l.P99), results.Ms(l.Max))
		}
	}
	return tw.Flush()
}

// serverTable splits end-to-end time into the time the service reported it
// spent (http.server_time) and the overhead around it: the CPS
// query-performance report's columns.
func serverTable(w io.Writer, ph results.PhaseSummary, width int) error {
	var rows []results.Operation
	for _, op := range ph.Operations {
		if op.ServerTime != nil {
			rows = append(rows, op)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "time inside the service (ms; responses that reported it)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s	responses	end-to-end mean	server mean	overhead mean	server p50	server p95	server max	\n", width, "operation")
	for _, op := range rows {
		// Over the same responses: end-to-end = server + overhead.
		s, e2e := op.ServerTime, op.ServerTime.Mean+op.Overhead.Mean
		fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, op.Name, op.ServerResponses, results.Ms(e2e), results.Ms(s.Mean), results.Ms(op.Overhead.Mean), results.Ms(s.P50), results.Ms(s.P95), results.Ms(s.Max))
	}
	return tw.Flush()
}
