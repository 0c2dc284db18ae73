package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/perflab/perflab/metrics"
)

// WriteMarkdown writes a run as Markdown tables ready to paste into a wiki,
// in the shapes of the seed reports: per stage, each operation's min, max
// and average in ms and in operations per second (000); across stages,
// each transaction's average and percentiles (001); the scaling table and
// the thresholds when there are any.
func WriteMarkdown(w io.Writer, s *Summary) error {
	fmt.Fprintf(w, "# %s\n\n", mdEscape(s.Plan.Name))
	cpus := fmt.Sprintf("%d CPUs", s.Host.CPUs)
	if s.Host.CPUModel != "" {
		cpus += " " + mdEscape(s.Host.CPUModel)
	}
	fmt.Fprintf(w, "Run `%s`, %s, started %s, %.0f s. Load generator: %s, %s/%s, perflab %s.\n\n",
		s.RunID, s.Status, s.Start.Format("2006-01-02 15:04:05 MST"), s.Duration, cpus, s.Host.OS, s.Host.Arch, s.Host.Perflab)
	if across := acrossStages(s); across != "" {
		fmt.Fprintf(w, "## Response times (ms)\n\n%s\n", across)
	}
	fmt.Fprintf(w, "## Operations per stage\n\nOperations per second are 1000 / execution time in ms.\n\n")
	for _, ph := range s.Stages {
		fmt.Fprintf(w, "### %s\n\n", mdEscape(ph.Name))
		fmt.Fprintln(w, "| Operation | Count | Errors | Min ms | Max ms | Average ms | Min ops/s | Max ops/s | Average ops/s | p50 ms | p95 ms | p99 ms | Throughput /s |")
		fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario {
				continue
			}
			l, r := op.Latency, op.OpRate
			fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f |\n", mdEscape(op.Name), op.Count, op.Errors.Total,
				num(l.Min), num(l.Max), num(l.Mean), num(r.Min), num(r.Max), num(r.Avg), num(l.P50), num(l.P95), num(l.P99), op.RPS)
		}
		fmt.Fprintln(w)
	}
	if sc := s.Scaling; sc != nil {
		fmt.Fprintf(w, "## Scaling\n\n| VUs | Requests | Wall s | Requests/s | Speedup | Efficiency |\n|--:|--:|--:|--:|--:|--:|\n")
		for _, p := range sc.Points {
			fmt.Fprintf(w, "| %d | %d | %.2f | %.1f | %.2f | %.0f%% |\n", p.VUs, p.Requests, p.Wall, p.RPS, p.Speedup, 100*p.Efficiency)
		}
		fmt.Fprintf(w, "\nThroughput stops increasing at %g VUs.\n\n", sc.SaturationVUs)
	}
	if len(s.Thresholds) > 0 {
		fmt.Fprintf(w, "## Thresholds\n\n%d passed, %d failed.\n\n| Threshold | Operation | Stage | Actual | Result |\n|---|---|---|--:|---|\n", len(s.Thresholds)-Failed(s.Thresholds), Failed(s.Thresholds))
		for _, r := range s.Thresholds {
			res := "pass"
			if !r.Pass {
				res = "**fail**"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", mdEscape(r.Threshold), mdEscape(r.Operation), mdEscape(r.Stage), num(r.Actual), res)
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintf(w, "`%s`\n", s.Total.Line)
	return err
}

// acrossStages is the 001 table: a row per stage, for each transaction (or
// step when the plan has none) its average, p50, p75 and p95.
func acrossStages(s *Summary) string {
	if len(s.Stages) == 0 {
		return ""
	}
	kind := metrics.KindTransaction
	var names []string
	for _, op := range s.Stages[0].Operations {
		if op.Kind == kind {
			names = append(names, op.Name)
		}
	}
	if len(names) == 0 {
		kind = metrics.KindStep
		for _, op := range s.Stages[0].Operations {
			if op.Kind == kind {
				names = append(names, op.Name)
			}
		}
	}
	var b strings.Builder
	b.WriteString("| Stage |")
	for _, n := range names {
		fmt.Fprintf(&b, " %s avg | %s p50 | %s p75 | %s p95 |", mdEscape(n), mdEscape(n), mdEscape(n), mdEscape(n))
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", 4*len(names)) + "\n")
	for _, ph := range s.Stages {
		fmt.Fprintf(&b, "| %s |", mdEscape(ph.Name))
		for _, n := range names {
			found := false
			for _, op := range ph.Operations {
				if op.Kind == kind && op.Name == n {
					l := op.Latency
					fmt.Fprintf(&b, " %s | %s | %s | %s |", num(l.Mean), num(l.P50), num(l.P75), num(l.P95))
					found = true
					break
				}
			}
			if !found {
				b.WriteString(" | | | |")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// num formats a figure with three decimals, as the seed reports do.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// mdEscape keeps user text from breaking a Markdown table.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

// WriteCSV writes every operation of every stage as one CSV table.
func WriteCSV(w io.Writer, s *Summary) error {
	cw := csv.NewWriter(w)
	header := []string{"stage", "scenario", "operation", "kind", "count", "errors", "success_ratio", "rps",
		"min_ms", "mean_ms", "max_ms", "p50_ms", "p75_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "min_ops_s", "max_ops_s", "avg_ops_s"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, ph := range s.Stages {
		for _, op := range ph.Operations {
			l, r := op.Latency, op.OpRate
			if err := cw.Write([]string{ph.Name, op.Scenario, op.Name, string(op.Kind), strconv.FormatInt(op.Count, 10),
				strconv.FormatInt(op.Errors.Total, 10), f(op.SuccessRatio), f(op.RPS), f(l.Min), f(l.Mean), f(l.Max),
				f(l.P50), f(l.P75), f(l.P90), f(l.P95), f(l.P99), f(l.P999), f(r.Min), f(r.Max), f(r.Avg)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
