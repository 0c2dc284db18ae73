package judge

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/analyze"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// RegressionAlpha is the significance level of regression thresholds.
const RegressionAlpha = 0.05

// Regression judges a regression threshold ("p75 regression vs
// release=Goldenrod < 10%") stage by stage (by name) and operation by
// operation: the candidate's metric against the baseline runs' (merged). A
// result fails when the metric is worse by the threshold's fraction or more
// and a Mann-Whitney U test over the per-interval values finds the
// difference unlikely to be chance (RegressionAlpha): a regression that
// noise could explain does not fail a build. With fewer than
// analyze.MinSamples intervals on a side no test is possible, and the
// change alone decides; the note says so.
func Regression(t *plan.Threshold, base []*results.Run, cand *results.Run) []results.ThresholdResult {
	if len(base) == 0 {
		return []results.ThresholdResult{{Threshold: t.Source, Operation: t.Operation, Note: "no stored run of this plan has the label " + t.Baseline}}
	}
	var out []results.ThresholdResult
	for _, ph := range cand.Summary.Stages {
		for _, op := range results.UniqueOps(ph.Operations) {
			if t.Operation == "" && op.Kind == metrics.KindScenario || t.Operation != "" && op.Name != t.Operation {
				continue
			}
			m := parseMetric(t.Metric)
			key := metrics.Key{Scenario: op.Scenario, Name: op.Name, Kind: op.Kind}
			cs, cv, _, okC := metricSamples([]*results.Run{cand}, ph.Name, key, m)
			bs, bv, _, okB := metricSamples(base, ph.Name, key, m)
			r := results.ThresholdResult{Threshold: t.Source, Stage: ph.Name, Operation: op.Name}
			if !okB || !okC || bv == 0 {
				r.Note = "not in the baseline runs, or nothing measured"
				out = append(out, r)
				continue
			}
			latency := t.Metric != "rps"
			r.Actual = (cv - bv) / bv // worse is positive
			if !latency {
				r.Actual = -r.Actual
			}
			test := analyze.CompareChange(bs, cs, (cv-bv)/bv, RegressionAlpha, 0, latency)
			regressed := !t.Holds(r.Actual)
			switch test.Verdict {
			case analyze.TooFewToSay:
				r.Pass = !regressed
			default:
				r.Pass = !regressed || test.Verdict != analyze.Worse
			}
			r.Note = regressionNote(t.Metric, bv, cv, r.Actual, test)
			out = append(out, r)
		}
	}
	return out
}

func regressionNote(metric string, base, cand, change float64, test analyze.Comparison) string {
	unit, f := " ms", results.Ms
	if metric == "rps" {
		unit, f = "/s", func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	}
	word := "worse"
	if change < 0 {
		word = "better"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%s → %s%s: %.1f%% %s", f(base), unit, f(cand), unit, 100*math.Abs(change), word)
	if test.Verdict == analyze.TooFewToSay {
		fmt.Fprintf(&b, " (too few intervals for a test: %d+%d)", test.N1, test.N2)
	} else {
		fmt.Fprintf(&b, " (p=%.3g, %s)", test.P, test.Verdict)
	}
	return b.String()
}

// sampleMetric is what metricSamples measures: a percentile (Pct), the
// mean, or the throughput.
type sampleMetric struct {
	Pct       float64
	Mean, RPS bool
}

// parseMetric reads p50...p999, mean or rps.
func parseMetric(name string) sampleMetric {
	switch name {
	case "mean":
		return sampleMetric{Mean: true}
	case "rps":
		return sampleMetric{RPS: true}
	case "p999":
		return sampleMetric{Pct: 99.9}
	}
	pct, _ := strconv.ParseFloat(strings.TrimPrefix(name, "p"), 64)
	return sampleMetric{Pct: pct}
}

// metricSamples gathers, over a side's runs, the per-interval values of a
// metric of an operation in a stage, and its value over the whole stage (and
// the merged histogram of its successful operations):
// percentiles and the mean from the merged histograms, throughput as the
// mean of the runs' rates of successful operations (as the per-interval
// samples, which count successes).
func metricSamples(runs []*results.Run, stage string, key metrics.Key, m sampleMetric) (samples []float64, whole float64, all *hdr.Histogram, ok bool) {
	var rates []float64
	for _, r := range runs {
		for _, ph := range r.Summary.Stages {
			if ph.Name != stage {
				continue
			}
			for _, op := range results.UniqueOps(ph.Operations) {
				if op.Scenario != key.Scenario || op.Name != key.Name || op.Kind != key.Kind {
					continue
				}
				ok = true
				if ph.Duration > 0 {
					rates = append(rates, float64(op.Count-op.Errors.Total)/ph.Duration)
				}
				for _, d := range r.IntervalsOf(ph.Index, op) {
					h, err := d.Histogram()
					if err != nil {
						continue
					}
					// A stage's last interval is often a sliver (11 ms, one
					// request): its figures go into the whole, but it is no
					// sample of the same weight as a full interval.
					secs := float64(d.EndMs-d.StartMs) / 1e3
					sample := secs > 0 && (r.Summary.Interval <= 0 || secs >= r.Summary.Interval/2)
					switch {
					case m.RPS:
						if sample {
							samples = append(samples, float64(h.TotalCount())/secs)
						}
						continue
					case h.TotalCount() == 0:
						continue
					case !sample:
					case m.Mean:
						samples = append(samples, h.Mean()/1e3)
					default:
						samples = append(samples, float64(h.ValueAtPercentile(m.Pct))/1e3)
					}
					if all == nil {
						all = metrics.NewHistogram()
					}
					h.MergeInto(all)
				}
			}
		}
	}
	switch {
	case m.RPS:
		for _, r := range rates {
			whole += r / float64(len(rates))
		}
	case all == nil || all.TotalCount() == 0:
	case m.Mean:
		whole = all.Mean() / 1e3
	default:
		whole = float64(all.ValueAtPercentile(m.Pct)) / 1e3
	}
	return samples, whole, all, ok
}
