package analyze

import (
	"math"
	"sort"
)

// ChangePoint is where a series' level changes: values from Index on differ
// from the values before it.
type ChangePoint struct {
	Index  int
	Before float64 // median of the segment before
	After  float64 // median of the segment after
	P      float64
}

// ChangePoints finds the points where a series (such as the p95 of each
// interval of a long run) shifts level, by binary segmentation: the split
// whose two sides differ most by a Mann-Whitney test is kept if its p-value
// is below alpha divided by the number of candidate splits (a Bonferroni
// bound, so a stationary series rarely yields one), then each side is
// searched again. minSize is the shortest segment considered (default 5).
func ChangePoints(series []float64, alpha float64, minSize int) []ChangePoint {
	if minSize < 2 {
		minSize = 5
	}
	if alpha <= 0 {
		alpha = 0.01
	}
	var out []ChangePoint
	var search func(lo, hi int)
	search = func(lo, hi int) {
		if hi-lo < 2*minSize {
			return
		}
		best, bestP := -1, 1.0
		// Rank the segment once; the left side's rank sum then grows by one
		// rank per split, so all splits cost O(n log n), not O(n² log n).
		ranks, tieTerm := rankWithTies(series[lo:hi])
		n := float64(hi - lo)
		var r1 float64
		for k := lo; k < hi-minSize; k++ {
			r1 += ranks[k-lo]
			m := k + 1 - lo
			if m < minSize {
				continue
			}
			n1, n2 := float64(m), n-float64(m)
			u1 := r1 - n1*(n1+1)/2
			big := math.Max(u1, n1*n2-u1)
			sd := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
			if sd == 0 {
				continue
			}
			p := math.Erfc(((big - n1*n2/2 - 0.5) / sd) / math.Sqrt2)
			if p < bestP {
				best, bestP = k+1, p
			}
		}
		candidates := float64(hi - lo - 2*minSize + 1)
		if best < 0 || bestP*candidates >= alpha {
			return
		}
		out = append(out, ChangePoint{Index: best, Before: Median(series[lo:best]), After: Median(series[best:hi]), P: bestP})
		search(lo, best)
		search(best, hi)
	}
	search(0, len(series))
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	// Report each point's levels against its neighbouring points, not the
	// whole segment the search first split.
	for i := range out {
		lo, hi := 0, len(series)
		if i > 0 {
			lo = out[i-1].Index
		}
		if i < len(out)-1 {
			hi = out[i+1].Index
		}
		out[i].Before, out[i].After = Median(series[lo:out[i].Index]), Median(series[out[i].Index:hi])
	}
	return out
}

// rankWithTies ranks values from 1, ties sharing their average rank, and
// returns the tie correction term sum(t³ - t).
func rankWithTies(v []float64) ([]float64, float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	ranks := make([]float64, len(v))
	var tie float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		r := float64(i+j+1) / 2
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		if t := float64(j - i); t > 1 {
			tie += t*t*t - t
		}
		i = j
	}
	return ranks, tie
}

// maxTrendPoints bounds the series MannKendall compares pairwise.
const maxTrendPoints = 1000

// Trend is a Mann-Kendall test for a monotonic trend with Sen's slope.
type Trend struct {
	// Slope is the median of the slopes between all pairs of points, per
	// index step (multiply by steps per hour for a rate per hour).
	Slope float64 `json:"slope_per_step"`
	// P is the two-sided p-value of "no monotonic trend".
	P float64 `json:"p"`
	// S is the Mann-Kendall statistic: concordant minus discordant pairs.
	S float64 `json:"s"`
}

// MannKendall tests a series for a monotonic trend (drift) without
// assuming its values are normal, and estimates its slope (Sen).
func MannKendall(series []float64) Trend {
	// The test looks at every pair: bin a long series (a day at 10 s
	// intervals is 8,640 values) into at most maxTrendPoints medians first.
	if len(series) > maxTrendPoints {
		width := (len(series) + maxTrendPoints - 1) / maxTrendPoints
		var binned []float64
		for i := 0; i < len(series); i += width {
			binned = append(binned, Median(series[i:min(i+width, len(series))]))
		}
		t := MannKendall(binned)
		t.Slope /= float64(width)
		return t
	}
	n := len(series)
	if n < 3 {
		return Trend{P: 1}
	}
	var s float64
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := series[j] - series[i]
			switch {
			case d > 0:
				s++
			case d < 0:
				s--
			}
			slopes = append(slopes, d/float64(j-i))
		}
	}
	// Variance with the correction for tied values.
	counts := map[float64]int{}
	for _, v := range series {
		counts[v]++
	}
	fn := float64(n)
	v := fn * (fn - 1) * (2*fn + 5)
	for _, t := range counts {
		ft := float64(t)
		v -= ft * (ft - 1) * (2*ft + 5)
	}
	v /= 18
	var z float64
	switch {
	case s > 0:
		z = (s - 1) / math.Sqrt(v)
	case s < 0:
		z = (s + 1) / math.Sqrt(v)
	}
	p := 1.0
	if v > 0 {
		p = math.Erfc(math.Abs(z) / math.Sqrt2)
	}
	return Trend{Slope: Median(slopes), P: p, S: s}
}
