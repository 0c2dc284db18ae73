package judge

import "github.com/perflab/perflab/results"

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

type resourceFigs struct {
	msPerTx, cores, n float64
	// peak sums each memory metric's peak in MB over the runs that have
	// it, with their number; metrics lists them in the tables' order.
	peak    map[string]*[2]float64
	metrics []string
}

// peakMB is the mean peak memory of both sides in the first memory metric
// that both have: a run before pss_bytes was sampled (rss_bytes only) is
// compared by RSS with one after, not its RSS with the other's PSS.
func peakMB(b, c *resourceFigs) (base, cand float64) {
	for _, m := range b.metrics {
		if cp := c.peak[m]; cp != nil {
			bp := b.peak[m]
			return bp[0] / bp[1], cp[0] / cp[1]
		}
	}
	return 0, 0
}

// resourceSide averages, over a side's runs, each stage's monitor figures.
func resourceSide(runs []*results.Run) map[[2]string]*resourceFigs {
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
				for _, mem := range m.Memory {
					if f.peak == nil {
						f.peak = map[string]*[2]float64{}
					}
					p := f.peak[mem.Metric]
					if p == nil {
						p = &[2]float64{}
						f.peak[mem.Metric] = p
						f.metrics = append(f.metrics, mem.Metric)
					}
					p[0] += mem.PeakBytes / (1 << 20)
					p[1]++
				}
			}
		}
	}
	for _, f := range out {
		f.msPerTx, f.cores = f.msPerTx/f.n, f.cores/f.n
	}
	return out
}

// compareResources pairs the monitors' figures of the stages both sides
// have, in the base's order.
func compareResources(base, cand []*results.Run) []ResourceComparison {
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
				bm, cm := peakMB(bf, cf)
				out = append(out, ResourceComparison{Stage: k[0], Monitor: k[1], BaseMSPerTx: bf.msPerTx, CandMSPerTx: cf.msPerTx,
					BaseCores: bf.cores, CandCores: cf.cores, BasePeakMB: bm, CandPeakMB: cm})
			}
		}
	}
	return out
}
