package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// ErrorRow is one message of a run's Errors section: what failures of an
// operation's kind said, how many of them, and their share of the
// operation's requests (percent).
type ErrorRow struct {
	Stage, Operation, Kind, Message string
	Count                           int64
	Share                           float64
	// Scenario and OpKind are the operation's; Other marks the kind's
	// other messages (OtherMessages).
	Scenario string
	OpKind   metrics.Kind
	Other    bool
	// First and Last are when the message was first and last seen, to
	// within an interval (zero: not known), RunStart the run's start
	// (RunErrorRowsOf).
	First, Last, RunStart time.Time
	// Sample is the first failure of the message, with its response,
	// where the run kept it (--dump-failures).
	Sample *results.FailureSample
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
		add := func(kind, msg string, n int64, other bool) *ErrorRow {
			rows = append(rows, row{ErrorRow{Stage: ph.Name, Operation: op.Name, Kind: kind, Message: msg, Count: n,
				Share: results.Percent(n, op.Count), Scenario: op.Scenario, OpKind: op.Kind, Other: other}, i})
			return &rows[len(rows)-1].ErrorRow
		}
		for _, m := range op.Errors.Messages {
			msg := m.Message
			if m.Other {
				msg = OtherMessages
			}
			r := add(m.Kind, msg, m.Count, m.Other)
			if m.First != nil && m.Last != nil {
				r.First, r.Last = *m.First, *m.Last
			}
		}
		if len(op.Errors.Messages) == 0 {
			for kind, d := range op.Errors.Details {
				add(kind, d, op.Errors.ByKind[kind], false)
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
	for i := range out {
		out[i].RunStart = s.Start
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

// ErrorTimes reports whether any of rows says when its message was seen
// (a run before perflab kept failures per interval has none: its tables
// leave the First and Last columns out).
func ErrorTimes(rows []ErrorRow) bool {
	for _, r := range rows {
		if !r.First.IsZero() {
			return true
		}
	}
	return false
}

// errorsMarkdown writes a run's Errors section: every message of every
// phase, the most frequent of each phase first.
func errorsMarkdown(w io.Writer, s *results.Summary) {
	rows := RunErrorRows(s)
	if len(rows) == 0 {
		return
	}
	times := ErrorTimes(rows)
	head, align := "| Stage | Operation | Kind | Message | Count | Share |", "|---|---|---|---|--:|--:|"
	if times {
		head, align = head+" First | Last |", align+"---|---|"
	}
	fmt.Fprintf(w, "## Errors\n\nWhat failed requests said; share of the operation's requests.\n\n%s\n%s\n", head, align)
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %.2f%% |", mdEscape(r.Stage), mdEscape(r.Operation), r.Kind, mdEscape(r.Message), r.Count, r.Share)
		if times {
			fmt.Fprintf(w, " %s | %s |", r.FirstText(), r.LastText())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	if !times {
		return
	}
	writeMarkdownLegend(w, []Legend{{"Share", help("Share")}, {"First, Last", help("First") + "; " + help("Last")}})
}
