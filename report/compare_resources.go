package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// ResourceComparison is a monitor's figures in a stage on both sides: CPU
// milliseconds per transaction, cores, peak memory (means over each side's
// runs). Each run gives one value, so there is no test: read the change
// beside the latencies' verdicts.
type ResourceComparison struct {
	Stage       string  `json:"stage"`
	Monitor     string  `json:"monitor"`
	BaseMSPerTx float64 `json:"base_cpu_ms_per_tx,omitempty"`
	CandMSPerTx float64 `json:"cand_cpu_ms_per_tx,omitempty"`
	BaseCores   float64 `json:"base_cores,omitempty"`
	CandCores   float64 `json:"cand_cores,omitempty"`
	BasePeakMB  float64 `json:"base_peak_mb,omitempty"`
	CandPeakMB  float64 `json:"cand_peak_mb,omitempty"`
}

type resourceFigs struct{ msPerTx, cores, peakMB, n float64 }

// resourceSide averages, over a side's runs, each stage's monitor figures.
func resourceSide(runs []*RunData) map[[2]string]*resourceFigs {
	out := map[[2]string]*resourceFigs{}
	for _, r := range runs {
		a := r.Summary.Resources
		if a == nil {
			continue
		}
		for _, w := range a.Windows {
			for _, m := range w.Monitors {
				k := [2]string{w.Window, m.Monitor}
				f := out[k]
				if f == nil {
					f = &resourceFigs{}
					out[k] = f
				}
				f.n++
				if c := m.CPU; c != nil {
					f.cores += c.Cores
					if c.MSPerTx != nil {
						f.msPerTx += *c.MSPerTx
					}
				}
				if len(m.Memory) > 0 {
					f.peakMB += m.Memory[0].PeakBytes / (1 << 20)
				}
			}
		}
	}
	for _, f := range out {
		f.msPerTx, f.cores, f.peakMB = f.msPerTx/f.n, f.cores/f.n, f.peakMB/f.n
	}
	return out
}

// compareResources pairs the monitors' figures of the stages both sides
// have, in the base's order.
func compareResources(base, cand []*RunData) []ResourceComparison {
	b, c := resourceSide(base), resourceSide(cand)
	var out []ResourceComparison
	seen := map[[2]string]bool{}
	for _, r := range base {
		if r.Summary.Resources == nil {
			continue
		}
		for _, w := range r.Summary.Resources.Windows {
			for _, m := range w.Monitors {
				k := [2]string{w.Window, m.Monitor}
				bf, cf := b[k], c[k]
				if seen[k] || cf == nil || m.Host != nil {
					continue
				}
				seen[k] = true
				out = append(out, ResourceComparison{Stage: k[0], Monitor: k[1], BaseMSPerTx: bf.msPerTx, CandMSPerTx: cf.msPerTx,
					BaseCores: bf.cores, CandCores: cf.cores, BasePeakMB: bf.peakMB, CandPeakMB: cf.peakMB})
			}
		}
	}
	return out
}

func writeResourceComparison(w io.Writer, rs []ResourceComparison) error {
	if len(rs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nresources (one value per run: no test; means over several runs)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "stage\tmonitor\tcpu ms/tx base\tcand\tchange\tcores base\tcand\tpeak MB base\tcand\tchange")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%s\t%.2f\t%.2f\t%.1f\t%.1f\t%s\n", r.Stage, r.Monitor, r.BaseMSPerTx, r.CandMSPerTx, pctChange(r.BaseMSPerTx, r.CandMSPerTx),
			r.BaseCores, r.CandCores, r.BasePeakMB, r.CandPeakMB, pctChange(r.BasePeakMB, r.CandPeakMB))
	}
	return tw.Flush()
}

func pctChange(base, cand float64) string {
	if base == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*(cand-base)/base)
}
