package analyze

import (
	"math"
	"sort"
)

// maxPairs bounds the pairwise differences ShiftCI sorts. Larger samples
// (a day of 10 s intervals a side) are thinned to evenly spaced order
// statistics first, which keep their distribution, and the interval's ends
// are read at the same fractions of the differences as with every pair.
const maxPairs = 1 << 20

// ShiftCI is the Hodges-Lehmann estimate of the shift from base to cand
// (the median of every difference cand[j] - base[i]) and its
// distribution-free confidence interval at level conf (such as 0.95): the
// interval of shifts that a two-sided Mann-Whitney test at 1 - conf would
// not reject (Moses; Hollander and Wolfe, Nonparametric Statistical
// Methods, 4.3), with the normal approximation to the rank-sum
// distribution. It returns NaNs for empty samples.
func ShiftCI(base, cand []float64, conf float64) (est, lo, hi float64) {
	m, n := len(base), len(cand)
	if m == 0 || n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	// Ca = the number of differences cut from each end: the lower
	// critical value of the Mann-Whitney U statistic at alpha/2.
	z := normalQuantile(1 - (1-conf)/2)
	fm, fn := float64(m), float64(n)
	ca := math.Floor(fm*fn/2 - z*math.Sqrt(fm*fn*(fm+fn+1)/12))
	cut := ca / (fm * fn) // as a fraction of the differences
	x, y := sorted(base), sorted(cand)
	for len(x)*len(y) > maxPairs {
		if len(x) >= len(y) {
			x = thin(x, len(x)/2)
		} else {
			y = thin(y, len(y)/2)
		}
	}
	d := make([]float64, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			d = append(d, b-a)
		}
	}
	sort.Float64s(d)
	N := len(d)
	est = median(d)
	if ca < 1 {
		return est, d[0], d[N-1] // too few values for this confidence
	}
	k := max(int(math.Round(cut*float64(N))), 1)
	return est, d[k-1], d[N-k]
}

func sorted(v []float64) []float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s
}

// thin keeps k evenly spaced order statistics of a sorted sample.
func thin(s []float64, k int) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = s[int((float64(i)+0.5)*float64(len(s))/float64(k))]
	}
	return out
}

func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// normalQuantile is the standard normal distribution's inverse CDF.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}
