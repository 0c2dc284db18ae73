package analyze

import (
	"math"
	"sort"
)

// Verdict is the outcome of comparing a candidate with a baseline.
type Verdict string

// Verdicts.
const (
	Better      Verdict = "better"
	Worse       Verdict = "worse"
	NoChange    Verdict = "no significant change"
	TooFewToSay Verdict = "too few samples"
)

// Comparison is a baseline and a candidate sample of one metric (say the
// p75 latency of each 10 s interval of each run) and what changed.
type Comparison struct {
	N1         int     `json:"n_base"`
	N2         int     `json:"n_candidate"`
	BaseMedian float64 `json:"base_median"`
	CandMedian float64 `json:"candidate_median"`
	// Change is (candidate - baseline) / baseline of the medians.
	Change float64 `json:"change"`
	// Shift is the Hodges-Lehmann estimate of the change (candidate minus
	// baseline, in the samples' unit) with its 95% confidence interval:
	// the shifts the Mann-Whitney test would not reject (ShiftCI).
	Shift   float64    `json:"shift"`
	ShiftCI [2]float64 `json:"shift_ci"`
	// P is the Mann-Whitney two-sided p-value.
	P         float64 `json:"p"`
	Alpha     float64 `json:"alpha"`
	MinChange float64 `json:"min_change"`
	Verdict   Verdict `json:"verdict"`
}

// MinSamples is the fewest values per side for a verdict: with fewer, no
// difference can reach the usual significance levels.
const MinSamples = 4

// Compare tests whether the candidate differs from the baseline at
// significance alpha (default 0.05). lowerIsBetter is true for latencies,
// false for throughput. A difference is only called better or worse when
// the test says it is unlikely to be chance, never from the bare % change,
// and when the medians differ by at least minChange (a fraction, such as
// 0.05): two runs on a real machine always differ by a little, and a
// difference too small to matter is not a regression.
func Compare(base, cand []float64, alpha, minChange float64, lowerIsBetter bool) Comparison {
	if alpha <= 0 {
		alpha = 0.05
	}
	c := Comparison{N1: len(base), N2: len(cand), Alpha: alpha, MinChange: minChange, P: 1}
	// A side without values (a stage shorter than an interval) has no
	// median: 0, and no change, not NaN (which JSON cannot hold).
	if len(base) > 0 {
		c.BaseMedian = Median(base)
	}
	if len(cand) > 0 {
		c.CandMedian = Median(cand)
	}
	if c.BaseMedian != 0 && len(cand) > 0 {
		c.Change = (c.CandMedian - c.BaseMedian) / c.BaseMedian
	}
	if len(base) < MinSamples || len(cand) < MinSamples {
		c.Verdict = TooFewToSay
		return c
	}
	c.Shift, c.ShiftCI[0], c.ShiftCI[1] = ShiftCI(base, cand, 0.95)
	c.P = MannWhitney(base, cand).P
	switch {
	case c.P >= alpha || c.CandMedian == c.BaseMedian || math.Abs(c.Change) < minChange:
		c.Verdict = NoChange
	case (c.CandMedian < c.BaseMedian) == lowerIsBetter:
		c.Verdict = Better
	default:
		c.Verdict = Worse
	}
	return c
}

// CompareChange is Compare with the change the caller reports (such as the
// change in a whole stage's percentile, beside the per-interval samples
// the test runs on) deciding a verdict's size and direction: the test
// decides whether there is one, the reported change must reach minChange,
// and a reported change that disagrees in direction with the samples'
// shift is no verdict. So a verdict never contradicts the figure printed
// beside it.
func CompareChange(base, cand []float64, change, alpha, minChange float64, lowerIsBetter bool) Comparison {
	c := Compare(base, cand, alpha, 0, lowerIsBetter)
	c.Change, c.MinChange = change, minChange
	if c.Verdict == TooFewToSay {
		return c
	}
	switch {
	case c.P >= c.Alpha || change == 0 || math.Abs(change) < minChange || c.Shift != 0 && (c.Shift > 0) != (change > 0):
		c.Verdict = NoChange
	case (change < 0) == lowerIsBetter:
		c.Verdict = Better
	default:
		c.Verdict = Worse
	}
	return c
}

// Median of a sample (NaN when empty).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
