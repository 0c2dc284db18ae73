package analyze

import (
	"math"
	"sort"
)

// MWResult is the outcome of a two-sided Mann-Whitney U test.
type MWResult struct {
	// U is the statistic of the first sample: how many (x, y) pairs have
	// x > y, ties counting one half.
	U float64
	// P is the two-sided p-value: the chance of a U at least this far from
	// its mean if both samples came from one distribution.
	P float64
	// Exact is true when P comes from the exact distribution of U (small
	// samples without ties), false for the normal approximation with tie
	// and continuity corrections.
	Exact bool
}

// exactLimit is the largest sample size for which P is computed exactly.
const exactLimit = 20

// MannWhitney tests whether x and y come from the same distribution,
// without assuming a shape (latencies are rarely normal). It matches SciPy's
// mannwhitneyu(x, y, alternative="two-sided") with method "exact" for small
// samples without ties and "asymptotic" otherwise.
func MannWhitney(x, y []float64) MWResult {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MWResult{P: 1}
	}
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	var r1, tieTerm float64
	ties := false
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+j+1) / 2 // average of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].first {
				r1 += rank
			}
		}
		if t := float64(j - i); t > 1 {
			ties = true
			tieTerm += t*t*t - t
		}
		i = j
	}
	u1 := r1 - float64(n1*(n1+1))/2
	u2 := float64(n1*n2) - u1
	res := MWResult{U: u1}
	big := math.Max(u1, u2)
	if !ties && n1 <= exactLimit && n2 <= exactLimit {
		res.Exact = true
		res.P = math.Min(1, 2*exactUpperTail(n1, n2, int(math.Round(big))))
		return res
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	s := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if s == 0 {
		res.P = 1
		return res
	}
	z := (big - mu - 0.5) / s
	res.P = math.Min(1, math.Max(0, math.Erfc(z/math.Sqrt2)))
	return res
}

// exactUpperTail is P(U >= u) for samples of n1 and n2 without ties: the
// number of arrangements with U >= u over all C(n1+n2, n1) arrangements.
func exactUpperTail(n1, n2, u int) float64 {
	// f[j][v] counts arrangements of i first-sample and j second-sample
	// values with statistic v, built up over i.
	maxU := n1 * n2
	f := make([][]float64, n2+1)
	for j := range f {
		f[j] = make([]float64, maxU+1)
		f[j][0] = 1 // i = 0: U is 0
	}
	for i := 1; i <= n1; i++ {
		g := make([][]float64, n2+1)
		for j := 0; j <= n2; j++ {
			g[j] = make([]float64, maxU+1)
			for v := 0; v <= maxU; v++ {
				// The largest value belongs to the first sample (it beats
				// all j of the second) or to the second.
				var c float64
				if v-j >= 0 {
					c += f[j][v-j]
				}
				if j > 0 {
					c += g[j-1][v]
				}
				g[j][v] = c
			}
		}
		f = g
	}
	var tail, total float64
	for v := 0; v <= maxU; v++ {
		total += f[n2][v]
		if v >= u {
			tail += f[n2][v]
		}
	}
	return tail / total
}
