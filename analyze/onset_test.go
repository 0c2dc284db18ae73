package analyze

import (
	"math/rand/v2"
	"testing"
)

// A leak that begins a third into a series is found where it began,
// within a twentieth of the series, however noisy; one that rose from the
// start, and a flat series, have no onset.
func TestOnset(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		for _, n := range []int{60, 300, 3000} {
			start := n / 3
			leak := noisy(r, n, func(i int) float64 { return 100 + 2*float64(max(0, i-start))*300/float64(n) })
			k, ok := Onset(leak)
			if !ok || k < start-n/20 || k > start+n/20 {
				t.Errorf("seed %d, %d values: onset %d (%v), want %d within %d", seed, n, k, ok, start, n/20)
			}
			if k, ok := Onset(noisy(r, n, func(i int) float64 { return 100 + float64(i)*300/float64(n) })); ok {
				t.Errorf("seed %d, %d values: a rise from the start begins at %d", seed, n, k)
			}
			if k, ok := Onset(noisy(r, n, func(int) float64 { return 100 })); ok {
				t.Errorf("seed %d, %d values: a flat series has an onset at %d", seed, n, k)
			}
		}
	}
}
