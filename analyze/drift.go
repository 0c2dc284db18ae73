package analyze

import (
	"cmp"
	"math"
	"slices"
	"sort"
)

// ChangePoint is where a series' level changes: values from Index on differ
// from the values before it.
type ChangePoint struct {
	Index  int
	Before float64 // median of the segment before
	After  float64 // median of the segment after
	// P is the Mann-Whitney p-value of the split, and Splits the number of
	// splits of its segment tried: P × Splits is its p-value corrected
	// for the search (Bonferroni), below alpha for every point returned.
	P      float64
	Splits int
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
		// The best split is the one of largest z: its p-value, which
		// underflows to 0 from z of about 38 (a real step in a long run),
		// would make the first split of p 0 the best, not the strongest.
		best, bestZ := -1, math.Inf(-1)
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
			if z := (big - n1*n2/2 - 0.5) / sd; z > bestZ {
				best, bestZ = k+1, z
			}
		}
		bestP := 1.0
		if best >= 0 {
			bestP = math.Erfc(bestZ / math.Sqrt2)
		}
		candidates := float64(hi - lo - 2*minSize + 1)
		if best < 0 || bestP*candidates >= alpha {
			return
		}
		out = append(out, ChangePoint{Index: best, Before: Median(series[lo:best]), After: Median(series[best:hi]), P: bestP, Splits: int(candidates)})
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
	// cmp.Compare orders NaNs before every number, consistently: the
	// order a sort needs to end well.
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(v[a], v[b]) })
	ranks := make([]float64, len(v))
	var tie float64
	for i := 0; i < len(idx); {
		// A NaN equals nothing, not even itself: each is a tie of one,
		// and the loop moves on (a NaN once held it here for ever).
		j := i + 1
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
	// P is the two-sided p-value of "no monotonic trend", with the
	// variance of S corrected for autocorrelation.
	P float64 `json:"p"`
	// S is the Mann-Kendall statistic: concordant minus discordant pairs.
	S float64 `json:"s"`
	// Correction is the factor the variance of S was multiplied by for
	// the series' autocorrelation (Hamed and Rao's n/n*; 1 when its
	// values are independent).
	Correction float64 `json:"variance_correction"`
}

// MannKendall tests a series for a monotonic trend (drift) without
// assuming its values are normal, and estimates its slope (Sen). It is a
// rank test: a heavy tail or a few spikes weigh no more than any other
// values. Neighbouring intervals of a run are not independent (a garbage
// collection, a cache, a queue last longer than one interval), which makes
// the plain test find trends in noise (a quarter of flat series with a
// lag-1 autocorrelation of 0.8 at p < 0.01). The variance of S is
// corrected as Hamed and Rao (1998) do, n/n* = 1 + 2/(n(n-1)(n-2)) Σ
// (n-k)(n-k-1)(n-k-2) r_k, with the autocorrelations r_k of an AR(1)
// process, r^k. The lag-1 autocorrelation r is estimated, from ranks, on
// what is left of the series once its structure is taken out (its Sen
// trend, or its largest step, whichever leaves less; see lag1Residuals):
// a trend or a step taken for autocorrelation would hide itself.
// Estimating each lag on its own and keeping the significant ones, as
// Hamed and Rao do, left the test liberal (12% to 13% false alarms in the
// series above; 2% here). The correction never shrinks the variance.
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
		return Trend{P: 1, Correction: 1}
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
	slope := medianInPlace(slopes)
	corr := autocorrelationCorrection(series, slope)
	v *= corr
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
	return Trend{Slope: slope, P: p, S: s, Correction: corr}
}

// autocorrelationCorrection is the n/n* for a series and its Sen slope, at
// least 1 (see MannKendall).
func autocorrelationCorrection(series []float64, slope float64) float64 {
	r := lag1Residuals(series, slope)
	// An estimate within the noise of estimating it (about 1/√n) is no
	// autocorrelation: from a few dozen values it would halve them for
	// nothing.
	if r <= 1.96/math.Sqrt(float64(len(series))) {
		return 1
	}
	return correctionFor(r, len(series))
}

// lag1Residuals estimates a series' lag-1 autocorrelation from what is
// left of it once its structure is taken out: its Sen trend, or the level
// of each side of its best split (the largest change of level a
// Mann-Whitney test finds), whichever leaves the less autocorrelation. A
// trend or a step is not taken for autocorrelation. The estimate, of the
// residuals' ranks, is corrected for its bias towards zero in short series
// (Marriott and Pope).
func lag1Residuals(series []float64, slope float64) float64 {
	n := len(series)
	if n < 8 {
		return 0
	}
	trend := make([]float64, n)
	for i, x := range series {
		trend[i] = x - slope*float64(i)
	}
	// Each side of the step in its own scale (its median absolute
	// deviation): a side that varies more would otherwise hold the extreme
	// ranks, and the calmer one's similar middle ranks would pass for
	// autocorrelation.
	step := append([]float64(nil), series...)
	if k := bestSplit(step, max(2, n/10)); k > 0 {
		// What differs from its side's level by less than a hundredth of
		// the step is no noise (a page more or less of a process's memory
		// beside a step of hundreds of megabytes): it is that level.
		a, b := Median(step[:k]), Median(step[k:])
		eps := math.Abs(b-a) / 100
		for i, x := range step {
			m := a
			if i >= k {
				m = b
			}
			if math.Abs(x-m) <= eps {
				step[i] = m
			}
		}
		// Two sides that each hold one level for most of their values (a
		// process's memory, flat but for a page or two, on each side of a
		// step) have no noise to be autocorrelated: what is left of them
		// is a few stray values, not a process of errors.
		before, after := standardize(step[:k]), standardize(step[k:])
		if before == 0 && after == 0 {
			return 0
		}
	}
	return min(rankLag1(trend), rankLag1(step))
}

// standardize puts values about their median in units of their median
// absolute deviation (as they are when it is 0), and returns that
// deviation.
func standardize(v []float64) float64 {
	m := Median(v)
	dev := make([]float64, len(v))
	for i, x := range v {
		dev[i] = math.Abs(x - m)
	}
	mad := Median(dev)
	for i := range v {
		v[i] -= m
		if mad > 0 {
			v[i] /= mad
		}
	}
	return mad
}

// rankLag1 is the lag-1 autocorrelation of a series' ranks, corrected for
// its bias in short series.
func rankLag1(series []float64) float64 {
	n := len(series)
	ranks, _ := rankWithTies(series)
	mean := (float64(n) + 1) / 2
	var num, denom float64
	for i, r := range ranks {
		denom += (r - mean) * (r - mean)
		if i > 0 {
			num += (ranks[i-1] - mean) * (r - mean)
		}
	}
	if denom == 0 {
		return 0
	}
	fn := float64(n)
	return (fn*num/denom + 1) / (fn - 4)
}

// bestSplit is the index that splits a series into the two sides most
// different by a Mann-Whitney test, each of at least minSize values; 0
// when there is none.
func bestSplit(series []float64, minSize int) int {
	n := len(series)
	if n < 2*minSize {
		return 0
	}
	ranks, _ := rankWithTies(series)
	best, bestZ := 0, 0.0
	var r1 float64
	fn := float64(n)
	for k := 0; k < n-minSize; k++ {
		r1 += ranks[k]
		m := float64(k + 1)
		if k+1 < minSize {
			continue
		}
		n2 := fn - m
		u := r1 - m*(m+1)/2
		sd := math.Sqrt(m * n2 * (fn + 1) / 12)
		if z := math.Abs(u-m*n2/2) / sd; sd > 0 && z > bestZ {
			best, bestZ = k+1, z
		}
	}
	return best
}

// correctionFor is the variance factor n/n* of an AR(1) series of n
// values with lag-1 autocorrelation r, at least 1.
func correctionFor(r float64, n int) float64 {
	fn := float64(n)
	if n < 4 || r <= 0 {
		return 1
	}
	r = min(r, 0.99)
	var sum float64
	rk := 1.0
	for k := 1; k < n-2; k++ {
		rk *= r
		if rk < 1e-6 {
			break
		}
		fk := float64(k)
		sum += (fn - fk) * (fn - fk - 1) * (fn - fk - 2) * rk
	}
	return min(max(1, 1+2/(fn*(fn-1)*(fn-2))*sum), max(1, fn/minIndependent))
}

// minIndependent is the fewest independent values the correction leaves a
// series: below, what is left of a strong trend (a line of samples taken
// at uneven times, plateaus between allocations) passes for autocorrelation
// and hides the trend, and no series of a run is that close to a random
// walk.
const minIndependent = 8

// Decorrelated is a series cut into blocks of consecutive values long
// enough to be about independent of each other, each block's median, and
// the blocks' length (1: the values as they are). The length is the
// series' variance correction (MannKendall), rounded: the number of
// consecutive values that carry about as much as one independent value.
// Change points
// are searched in these blocks: a Mann-Whitney test between the values of
// two segments takes them as independent, and on the values of an
// autocorrelated series (lag-1 autocorrelation 0.8) it finds a change in
// three quarters of flat series; in the blocks, in 1% to 5% of them.
// slope is the series' Sen slope per value (MannKendall's).
func Decorrelated(series []float64, slope float64) (blocks []float64, width int) {
	if len(series) < 3 {
		return series, 1
	}
	width = int(math.Round(autocorrelationCorrection(series, slope)))
	if width <= 1 {
		return series, 1
	}
	for i := 0; i < len(series); i += width {
		blocks = append(blocks, Median(series[i:min(i+width, len(series))]))
	}
	return blocks, width
}

// medianInPlace is the median of v, which it reorders: a selection in
// linear time, where sorting the half million slopes of a thousand values
// took most of a trend test.
func medianInPlace(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	hi := selectNth(v, n/2)
	if n%2 == 1 {
		return hi
	}
	// The lower middle is the largest of the values before the upper one.
	lo := v[0]
	for _, x := range v[1 : n/2] {
		lo = max(lo, x)
	}
	return (lo + hi) / 2
}

// selectNth reorders v so that v[k] is the value a sort would put there,
// with no greater value before it and no smaller after it, and returns it
// (Hoare's selection with the median of three as pivot).
func selectNth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}
