package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// WriteMarkdown writes a run as Markdown tables ready to paste into a wiki,
// in the shapes of the reports the examples reproduce: per stage, each
// operation's min, max and average in ms and in operations per second (the
// CPS basic load test's table); across stages, each transaction's average
// and percentiles (the check-in/check-out report's); the scaling table.
// As the HTML report, it gives the headline first (the run, its
// thresholds and warnings), then the figures, then the resources.
func WriteMarkdown(w io.Writer, s *results.Summary) error {
	fmt.Fprintf(w, "# %s\n\n", mdEscape(s.Plan.Name))
	cpus := fmt.Sprintf("%d CPUs", s.Host.CPUs)
	if s.Host.CPUModel != "" {
		cpus += " " + mdEscape(s.Host.CPUModel)
	}
	fmt.Fprintf(w, "Run %s, %s, started %s, %.0f s.", mdCode(s.RunID), mdEscape(s.StatusLine()), s.Start.Format("2006-01-02 15:04:05 MST"), s.Duration)
	if s.Host.CPUs > 0 { // unknown for a run rebuilt from the history
		fmt.Fprintf(w, " Load generator: %s, %s/%s, perflab %s.", cpus, mdEscape(s.Host.OS), mdEscape(s.Host.Arch), mdEscape(s.Host.Perflab))
	}
	fmt.Fprint(w, "\n\n")
	if l := s.LabelList(); l != "" {
		fmt.Fprintf(w, "Labels: %s.\n\n", mdEscape(l))
	}
	if o := s.Origin.Sentence(); o != "" {
		fmt.Fprintf(w, "%s\n\n", mdEscape(o))
	}
	if s.Error != "" {
		fmt.Fprintf(w, "%s\n\n", mdEscape(s.Error))
	}
	incidentsMarkdown(w, s.Drift)
	// The headline first, as the HTML report gives it: the thresholds and
	// the warnings, then the figures, then the resources.
	if len(s.Thresholds) > 0 {
		fmt.Fprintf(w, "## Thresholds\n\n%d passed, %d failed.\n\n| Threshold | Operation | Stage | Actual | Result |\n|---|---|---|--:|---|\n", len(s.Thresholds)-results.Failed(s.Thresholds), results.Failed(s.Thresholds))
		for _, r := range s.Thresholds {
			res := "pass"
			if !r.Pass {
				res = "**fail**"
			}
			actual := ShownActual(r)
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", mdEscape(r.Threshold), mdEscape(r.Operation), mdEscape(r.Stage), mdEscape(actual), res)
		}
		fmt.Fprintln(w)
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "> **Warning:** %s\n\n", mdEscape(warn))
	}
	driftMarkdown(w, s.Drift, DriftStart(s))
	if across := acrossStages(s); across != "" {
		fmt.Fprintf(w, "## Response times (ms)\n\n%s\n", across)
	}
	fmt.Fprintf(w, "## Operations per stage\n\nOperations per second are 1000 / execution time in ms. Times are of the successful operations (OK); a row marked KO under an operation gives its failed ones' (those sent).\n\n")
	for i, ph := range s.Stages {
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
			if n := op.KOCount(); n > 0 {
				k := op.Failed
				fmt.Fprintf(w, "| %s KO | %d |  | %s | %s | %s |  |  |  | %s | %s | %s |  |\n", mdEscape(op.Name), n,
					num(k.Min), num(k.Max), num(k.Mean), koNum(k, k.P50), koNum(k, k.P95), koNum(k, k.P99))
			}
		}
		fmt.Fprintln(w)
		if i == 0 { // the columns of every stage's table
			writeMarkdownLegend(w, markdownLegend)
		}
		openMarkdown(w, ph)
		serverMarkdown(w, ph)
	}
	errorsMarkdown(w, s)
	if sc := s.Scaling; sc != nil {
		fmt.Fprintf(w, "## Scaling\n\n| VUs | Requests | Wall s | Requests/s | Speedup | Efficiency |\n|--:|--:|--:|--:|--:|--:|\n")
		for _, p := range sc.Points {
			fmt.Fprintf(w, "| %d | %d | %.2f | %.1f | %.2f | %.0f%% |\n", p.VUs, p.Requests, p.Wall, p.RPS, p.Speedup, 100*p.Efficiency)
		}
		fmt.Fprintf(w, "\n%s.\n\n", upperFirst(sc.Sentence()))
		if l := sc.USLLine(); l != "" {
			fmt.Fprintf(w, "%s.\n\n", l)
		}
	}
	if a := s.Resources; a != nil && len(a.Windows) > 0 {
		fmt.Fprintf(w, "## Resources\n\nWhat the monitors saw; CPU ms per transaction completed.\n\n| %s |\n|%s\n", strings.Join(ResourceHeader, " | "), strings.Repeat("---|", len(ResourceHeader)))
		for _, row := range ResourceRows(a) {
			for i := range row {
				row[i] = mdEscape(row[i])
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(row, " | "))
		}
		fmt.Fprintln(w)
		if len(a.SlowQueries) > 0 {
			fmt.Fprintf(w, "Slow queries:\n\n| Monitor | Calls | Mean ms | Total ms | Query |\n|---|--:|--:|--:|---|\n")
			for _, q := range a.SlowQueries {
				fmt.Fprintf(w, "| %s | %d | %.1f | %.0f | %s |\n", mdEscape(q.Monitor), q.Calls, q.MeanMS, q.TotalMS, mdCode(strings.Join(strings.Fields(q.Query), " ")))
			}
			fmt.Fprintln(w)
		}
	}
	_, err := fmt.Fprintf(w, "%s\n", mdCode(s.Total.Line))
	return err
}

// acrossStages is the check-in/check-out report's table: a row per stage,
// for each transaction (or
// step when the plan has none) its average, p50, p75 and p95.
func acrossStages(s *results.Summary) string {
	if len(s.Stages) == 0 {
		return ""
	}
	kind, set := acrossOps(s)
	names := sortedNames(s, set)
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

// num formats a figure with three decimals, as the reports the examples
// reproduce do.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// koNum is a percentile of failed operations, "-" where it is not known
// (a run recorded before perflab kept their histogram).
func koNum(k *metrics.KOSummary, v float64) string {
	if k.Count == 0 {
		return "-"
	}
	return num(v)
}

// mdEscape keeps user text (step names, labels, a hostile service's
// answers) from breaking a Markdown table or becoming markup: HTML is
// escaped as the HTML report does, and what Markdown would read as a cell
// border, code, a link or an escape is written as a character reference,
// which renders as the character itself.
var mdEscape = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;",
	"|", "&#124;", "\\", "&#92;", "`", "&#96;", "[", "&#91;", "]", "&#93;",
	"\r\n", " ", "\n", " ", "\r", " ",
).Replace

// mdCode is text as code: a code span, or a <code> element when the text
// has what a code span cannot hold (its own backtick, or in a table a "|"
// or a backslash before one).
func mdCode(s string) string {
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	if !strings.ContainsAny(s, "`|\\") {
		return "`" + s + "`"
	}
	return "<code>" + mdEscape(s) + "</code>"
}

// WriteCSV writes every operation of every stage as one CSV table.
func WriteCSV(w io.Writer, s *results.Summary) error {
	cw := csv.NewWriter(w)
	header := []string{"stage", "scenario", "operation", "kind", "count", "errors", "success_ratio", "rps",
		"min_ms", "mean_ms", "max_ms", "p50_ms", "p75_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "min_ops_s", "max_ops_s", "avg_ops_s",
		"service_p50_ms", "service_p99_ms", "start_delay_p50_ms", "start_delay_p99_ms", "start_delay_max_ms", "dropped", "queued",
		"ko_count", "ko_min_ms", "ko_mean_ms", "ko_max_ms", "ko_p50_ms", "ko_p75_ms", "ko_p90_ms", "ko_p95_ms", "ko_p99_ms", "ko_p999_ms"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, ph := range s.Stages {
		for _, op := range ph.Operations {
			l, r := op.Latency, op.OpRate
			// An open model's service time and start delay; empty in
			// closed models, where latency is the service time.
			open := make([]string, 5)
			if sv := op.ServiceTime; sv != nil {
				open[0], open[1] = f(sv.P50), f(sv.P99)
			}
			if d := op.StartDelay; d != nil {
				open[2], open[3], open[4] = f(d.P50), f(d.P99), f(d.Max)
			}
			row := []string{csvcell.Escape(ph.Name), csvcell.Escape(op.Scenario), csvcell.Escape(op.Name), string(op.Kind), strconv.FormatInt(op.Count, 10),
				strconv.FormatInt(op.Errors.Total, 10), f(op.SuccessRatio), f(op.RPS), f(l.Min), f(l.Mean), f(l.Max),
				f(l.P50), f(l.P75), f(l.P90), f(l.P95), f(l.P99), f(l.P999), f(r.Min), f(r.Max), f(r.Avg)}
			row = append(append(row, open...), strconv.FormatInt(op.Dropped, 10), strconv.FormatInt(op.Queued, 10))
			// The failed operations' times (KO), the latencies above
			// being the successful ones' (OK); percentiles empty where
			// they are not known (a run recorded before they were kept).
			ko := make([]string, 10)
			ko[0] = strconv.FormatInt(op.KOCount(), 10)
			if k := op.Failed; k != nil {
				ko[1], ko[2], ko[3] = f(k.Min), f(k.Mean), f(k.Max)
				if k.Count > 0 {
					ko[4], ko[5], ko[6], ko[7], ko[8], ko[9] = f(k.P50), f(k.P75), f(k.P90), f(k.P95), f(k.P99), f(k.P999)
				}
			}
			row = append(row, ko...)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteMarkdownCharts writes a run's charts as SVG files into dir and, to w,
// a Markdown section that shows them, with links relative to the Markdown
// file (rel is dir as seen from there).
func WriteMarkdownCharts(w io.Writer, rd *results.Run, dir, rel string) error {
	charts, err := RunCharts(rd)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	save := func(prefix string, c Chart) error {
		name := prefix + c.Slug + ".svg"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c.File()), 0o644); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "![%s](%s)\n\n", mdEscape(c.Title), path.Join(filepath.ToSlash(rel), name))
		return err
	}
	fmt.Fprintf(w, "\n## Charts\n\n")
	for _, c := range charts.Drift {
		if err := save("", c); err != nil {
			return err
		}
	}
	for _, c := range charts.Across {
		if err := save("", c); err != nil {
			return err
		}
	}
	for _, c := range charts.Scaling {
		if err := save("", c); err != nil {
			return err
		}
	}
	for i, cs := range charts.Stages {
		fmt.Fprintf(w, "### %s\n\n", mdEscape(rd.Summary.Stages[i].Name))
		for _, c := range cs {
			if err := save(fmt.Sprintf("stage%d-", i+1), c); err != nil {
				return err
			}
		}
	}
	return nil
}

// serverMarkdown is the CPS query-performance report's table: end-to-end
// time, the time inside the
// service (as it reported it) and the overhead, for the operations that had
// it.
// openMarkdown splits the latency of open-model operations (from each
// iteration's due time) into start delay and service time.
func openMarkdown(w io.Writer, ph results.PhaseSummary) {
	ops := OpenOperations(ph)
	if len(ops) == 0 {
		return
	}
	fmt.Fprintln(w, "Open model (ms): latency from each iteration's due time = start delay (waiting for a VU or for the generator) + service time (from the send).\n\n| Operation | Latency p50 | Latency p99 | Service time p50 | Service time p99 | Start delay p50 | Start delay p99 | Start delay max | Dropped | Queued |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, op := range ops {
		d := op.StartDelay
		if d == nil {
			d = &metrics.LatencySummary{}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", mdEscape(op.Name), num(op.Latency.P50), num(op.Latency.P99),
			num(op.ServiceTime.P50), num(op.ServiceTime.P99), num(d.P50), num(d.P99), num(d.Max), op.DroppedDue, op.Queued)
	}
	fmt.Fprintln(w)
}

func serverMarkdown(w io.Writer, ph results.PhaseSummary) {
	header := false
	for _, op := range ph.Operations {
		if op.ServerTime == nil {
			continue
		}
		if !header {
			fmt.Fprintln(w, "Time inside the service (ms, responses that reported it):\n\n| Operation | Responses | End-to-end | Server | Overhead | Server p95 |\n|---|--:|--:|--:|--:|--:|")
			header = true
		}
		s := op.ServerTime
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s |\n", mdEscape(op.Name), op.ServerResponses, num(s.Mean+op.Overhead.Mean), num(s.Mean), num(op.Overhead.Mean), num(s.P95))
	}
	if header {
		fmt.Fprintln(w)
	}
}

// upperFirst capitalises a sentence's first letter.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
