package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/perflab/perflab/results"
)

// ErrorRow is one message of a run's Errors section: what failures of an
// operation's kind said, how many of them, and their share of the
// operation's requests (percent).
type ErrorRow struct {
	Stage, Operation, Kind, Message string
	Count                           int64
	Share                           float64
}

// OtherMessages is the message of the failures whose messages were not
// kept (metrics.MaxMessages).
const OtherMessages = "(other messages)"

// ErrorRows are the failures of a phase's operations by message, the most
// frequent first (then in the operations' order, by kind and message). An
// operation of a summary written before messages were counted gives each
// kind's detail, counted as the kind's errors.
func ErrorRows(ph results.PhaseSummary) []ErrorRow {
	type row struct {
		ErrorRow
		op int
	}
	var rows []row
	for i, op := range ph.Operations {
		add := func(kind, msg string, n int64) {
			rows = append(rows, row{ErrorRow{Stage: ph.Name, Operation: op.Name, Kind: kind, Message: msg, Count: n,
				Share: results.Percent(n, op.Count)}, i})
		}
		for _, m := range op.Errors.Messages {
			msg := m.Message
			if m.Other {
				msg = OtherMessages
			}
			add(m.Kind, msg, m.Count)
		}
		if len(op.Errors.Messages) == 0 {
			for kind, d := range op.Errors.Details {
				add(kind, d, op.Errors.ByKind[kind])
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.op, b.op), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Message, b.Message))
	})
	out := make([]ErrorRow, len(rows))
	for i, r := range rows {
		out[i] = r.ErrorRow
	}
	return out
}

// RunErrorRows are ErrorRows of every phase of a run: setup, the stages,
// teardown.
func RunErrorRows(s *results.Summary) []ErrorRow {
	var out []ErrorRow
	for _, phs := range [][]results.PhaseSummary{s.Setup, s.Stages, s.Teardown} {
		for _, ph := range phs {
			out = append(out, ErrorRows(ph)...)
		}
	}
	return out
}

// TableErrors is how many messages of a phase the terminal's tables show
// (perflab show --errors shows them all).
const TableErrors = 5

// errorsTable prints the first limit of rows (all when limit is 0) as a
// table, saying how many more there are.
func errorsTable(w io.Writer, rows []ErrorRow, limit int) error {
	if len(rows) == 0 {
		return nil
	}
	title := "errors by message (share of the operation's requests):"
	if limit > 0 && len(rows) > limit {
		title = fmt.Sprintf("errors by message (share of the operation's requests), the %d most frequent of %d; perflab show --errors lists them all:", limit, len(rows))
		rows = rows[:limit]
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  operation\tkind\tcount\tshare\tmessage")
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%.2f%%\t%s\n", r.Operation, r.Kind, r.Count, r.Share, r.Message)
	}
	return tw.Flush()
}

// WriteErrors prints every message of every phase of a run, a table a
// phase (perflab show --errors).
func WriteErrors(w io.Writer, s *results.Summary) error {
	any := false
	for _, phs := range [][]results.PhaseSummary{s.Setup, s.Stages, s.Teardown} {
		for _, ph := range phs {
			rows := ErrorRows(ph)
			if len(rows) == 0 {
				continue
			}
			any = true
			fmt.Fprintf(w, "\n%s\n", ph.Name)
			if err := errorsTable(w, rows, 0); err != nil {
				return err
			}
		}
	}
	if !any {
		_, err := fmt.Fprintln(w, "no failures")
		return err
	}
	return nil
}

// errorsMarkdown writes a run's Errors section: every message of every
// phase, the most frequent of each phase first.
func errorsMarkdown(w io.Writer, s *results.Summary) {
	rows := RunErrorRows(s)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Errors\n\nWhat failed requests said; share of the operation's requests.\n\n| Stage | Operation | Kind | Message | Count | Share |\n|---|---|---|---|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %.2f%% |\n", mdEscape(r.Stage), mdEscape(r.Operation), r.Kind, mdEscape(r.Message), r.Count, r.Share)
	}
	fmt.Fprintln(w)
}
