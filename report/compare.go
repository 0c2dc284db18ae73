package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// WriteComparison prints the comparison as a table and its sentences.
func WriteComparison(w io.Writer, rc *judge.RunComparison) error {
	fmt.Fprintf(w, "base: %s\ncandidate: %s\n\n", strings.Join(rc.Base, ", "), strings.Join(rc.Candidate, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := fmt.Sprintf("p%g", rc.Percentile)
	fmt.Fprintf(tw, "stage\toperation\tbase %s\tcand %s\tchange\tshift ms (95%% CI)\tbase mean\tcand mean\tp-value\tn\tverdict\n", p, p)
	ops := append([]judge.OpComparison(nil), rc.Ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Operation < ops[j].Operation })
	for _, c := range ops {
		shift := "-"
		if c.Test.Verdict != analyze.TooFewToSay {
			shift = fmt.Sprintf("%+.3g [%+.3g, %+.3g]", c.Test.Shift, c.Test.ShiftCI[0], c.Test.ShiftCI[1])
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%+.1f%%\t%s\t%s\t%s\t%.3g\t%d+%d\t%s\n", c.Stage, c.Operation, results.Ms(c.BasePct), results.Ms(c.CandPct),
			100*c.Change, shift, results.Ms(c.BaseMean), results.Ms(c.CandMean), c.Test.P, c.Test.N1, c.Test.N2, c.Test.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nverdicts: Mann-Whitney U over each interval's %s, alpha %.2g; a change is called only when it is unlikely to be chance and at least %.0f%%.\n", p, rc.Ops[0].Test.Alpha, 100*rc.Ops[0].Test.MinChange)
	fmt.Fprintf(w, "shift: the Hodges-Lehmann estimate of the change in each interval's %s, with the 95%% confidence interval of the same test.\n", p)
	for _, s := range rc.Sentences {
		fmt.Fprintln(w, s)
	}
	return writeResourceComparison(w, rc.Resources)
}

func writeResourceComparison(w io.Writer, rs []judge.ResourceComparison) error {
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nresources (one value per run: no test; means over several runs)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tmonitor\tcpu ms/tx base\tcand\tchange\tcores base\tcand\tpeak MB base\tcand\tchange")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Stage, r.Monitor,
			figure("%.3f", r.BaseMSPerTx), figure("%.3f", r.CandMSPerTx), pctChange(r.BaseMSPerTx, r.CandMSPerTx),
			figure("%.2f", r.BaseCores), figure("%.2f", r.CandCores),
			figure("%.1f", r.BasePeakMB), figure("%.1f", r.CandPeakMB), pctChange(r.BasePeakMB, r.CandPeakMB))
	}
	return tw.Flush()
}

// figure is a resource's figure, "-" for none: a side whose monitor
// sampled nothing of it in the stage (0 would say it used none).
func figure(format string, v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// pctChange is the change from base to cand, "-" where either has no
// figure.
func pctChange(base, cand float64) string {
	if base == 0 || cand == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(cand-base)/base)
}
