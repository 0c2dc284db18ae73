package logcorr

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints the correlation as a plain-text table, one row per
// operation (times in ms; "-" where there is nothing to average), then what
// the logs held besides.
func (r *Result) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintln(w, "processing time in the service, from its logs (ms)"); err != nil {
		return err
	}
	width := len("operation")
	for _, op := range r.Ops {
		width = max(width, len(op.Operation))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\trequests\tmatched\tunmatched\tproc avg\tp50\tp95\tmax\te2e avg matched\te2e avg unmatched\toverhead avg\t\n", width, "operation")
	for _, op := range r.Ops {
		p := op.Processing
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, op.Operation,
			op.Requests, op.Matched, op.Unmatched,
			fmtMs(p.Count, p.Mean), fmtMs(p.Count, p.P50), fmtMs(p.Count, p.P95), fmtMs(p.Count, p.Max),
			fmtMs(op.EndToEndMatched.Count, op.EndToEndMatched.Mean),
			fmtMs(op.EndToEndUnmatched.Count, op.EndToEndUnmatched.Mean),
			fmtMs(op.Overhead.Count, op.Overhead.Mean))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "log lines %d, records %d (%d of no request, %d duplicates), unpaired starts %d, unpaired ends %d\n",
		r.Lines, r.LogRecords, r.LogRecordsUnmatched, r.Duplicates, r.UnpairedStarts, r.UnpairedEnds)
	if r.ErrorCount > 0 {
		fmt.Fprintf(w, "%d matching lines could not be read", r.ErrorCount)
		if len(r.Errors) < r.ErrorCount {
			fmt.Fprintf(w, "; the first %d", len(r.Errors))
		}
		fmt.Fprintln(w, ":")
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	return nil
}

// fmtMs formats milliseconds with precision that suits their size.
func fmtMs(n int, v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case n == 0:
		return "-"
	case a < 10:
		return fmt.Sprintf("%.3f", v)
	case a < 1000:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}
