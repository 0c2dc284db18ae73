package monitor

import (
	"math"
	"sort"
)

// The leak rule. Memory that is reclaimed comes back down: garbage
// collection makes a heap a sawtooth, caches fill and stop. Memory that
// leaks raises the floor. So the test looks at the floor: the samples of the
// window, in time order, are split into leakGroups groups of consecutive
// samples (fewer if there are fewer samples) and each group's minimum is
// kept. A leak is suspected when
//
//   - the window has at least minLeakSamples samples,
//   - a one-sided Mann-Kendall test finds the minima rising with
//     p < leakAlpha (a rank test: it needs no straight line and no normal
//     noise, and one spike cannot make a trend),
//   - the minima's Sen slope (the median of the slopes between every pair)
//     raises the floor by at least leakMinGrowth of the average level over
//     the window, so that a significant but negligible drift is not called
//     a leak, and
//   - the least-squares slope over all samples is positive.
//
// A warm-up that fills memory and then levels off gives few rising pairs
// among the later minima, and no trend.
const (
	leakGroups     = 12
	minLeakSamples = 8
	leakAlpha      = 0.01
	leakMinGrowth  = 0.01
)

// leakTest applies the leak rule to a series (times in any unit, in
// order). ok is false when the series is too short to judge.
func leakTest(t, v []float64) (p float64, suspected, ok bool) {
	n := len(v)
	if n < minLeakSamples {
		return 0, false, false
	}
	groups := min(n, leakGroups)
	floor := make([]float64, groups)
	for g := range groups {
		lo, hi := g*n/groups, (g+1)*n/groups
		floor[g] = v[lo]
		for _, x := range v[lo+1 : hi] {
			floor[g] = min(floor[g], x)
		}
	}
	p = mannKendall(floor)
	avg := mean(v)
	growth := senSlope(floor) * float64(groups-1)
	suspected = p < leakAlpha && growth >= leakMinGrowth*math.Abs(avg) && olsSlope(t, v) > 0
	return p, suspected, true
}

// mannKendall returns the one-sided p-value of an upward trend in y by the
// Mann-Kendall test: S counts the pairs i < j with y[j] > y[i] minus those
// with y[j] < y[i], its variance is corrected for ties, and p is taken from
// the normal approximation with a continuity correction.
func mannKendall(y []float64) float64 {
	n := len(y)
	s := 0.0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case y[j] > y[i]:
				s++
			case y[j] < y[i]:
				s--
			}
		}
	}
	nf := float64(n)
	variance := nf * (nf - 1) * (2*nf + 5)
	sorted := append([]float64(nil), y...)
	sort.Float64s(sorted)
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		variance -= t * (t - 1) * (2*t + 5)
		i = j
	}
	variance /= 18
	if s <= 0 || variance <= 0 {
		return 1
	}
	z := (s - 1) / math.Sqrt(variance)
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// senSlope is the median of the slopes (y[j]-y[i])/(j-i) over all pairs
// i < j, per step of the index.
func senSlope(y []float64) float64 {
	var slopes []float64
	for i := range y {
		for j := i + 1; j < len(y); j++ {
			slopes = append(slopes, (y[j]-y[i])/float64(j-i))
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	sort.Float64s(slopes)
	m := len(slopes) / 2
	if len(slopes)%2 == 1 {
		return slopes[m]
	}
	return (slopes[m-1] + slopes[m]) / 2
}

// olsSlope is the least-squares slope of y over x (0 if x does not vary).
func olsSlope(x, y []float64) float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
