package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// WriteDrift prints the windows, trends and change points.
func WriteDrift(w io.Writer, ds []judge.OpDrift, pct float64) error {
	for _, d := range ds {
		fmt.Fprintf(w, "\n%s  %s\n", d.Stage, d.Operation)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "window\tcount\tmean\tp50\tp95\tp99\tmax\t")
		for _, ws := range d.Windows {
			s := ws.Stats
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", ws.Window, ws.Count, results.Ms(s.Mean), results.Ms(s.P50), results.Ms(s.P95), results.Ms(s.P99), results.Ms(s.Max))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		trend := "no significant trend"
		if d.Trend.P < 0.01 {
			trend = fmt.Sprintf("drifts %+.3g ms per hour", d.SlopePerHour)
		}
		fmt.Fprintf(w, "p%g over time: %s (Mann-Kendall p %.3g)\n", pct, trend, d.Trend.P)
		for _, c := range d.Changes {
			fmt.Fprintln(w, "change: "+c)
		}
	}
	return nil
}
