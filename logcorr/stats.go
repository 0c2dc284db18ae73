package logcorr

import (
	"math"
	"slices"
)

// Stats summarizes values in milliseconds. Percentiles are exact, by
// nearest rank: the smallest value with at least p% of the values at or
// below it. All zero when Count is 0.
type Stats struct {
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// newStats sorts vals in place and summarizes them.
func newStats(vals []float64) Stats {
	n := len(vals)
	if n == 0 {
		return Stats{}
	}
	slices.Sort(vals)
	sum := 0.0
	for _, v := range vals {
		sum += v
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(n)/100)) - 1
		return vals[min(max(i, 0), n-1)]
	}
	return Stats{Count: n, Mean: sum / float64(n), Min: vals[0],
		P50: rank(50), P95: rank(95), P99: rank(99), Max: vals[n-1]}
}
