package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestShiftCIByHand(t *testing.T) {
	// Differences 4-1 ... 6-3 sorted: 1 2 2 3 3 3 4 4 5, median 3. At 50%
	// confidence Ca = floor(9/2 - 0.6745*sqrt(9*7/12)) = 2: the 2nd and 8th.
	est, lo, hi := ShiftCI([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.5)
	if est != 3 || lo != 2 || hi != 4 {
		t.Errorf("got %v [%v, %v], want 3 [2, 4]", est, lo, hi)
	}
	// Too few values for 95%: the whole range.
	if _, lo, hi := ShiftCI([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.95); lo != 1 || hi != 5 {
		t.Errorf("95%% of 3+3: [%v, %v], want [1, 5]", lo, hi)
	}
}

func TestShiftCIPureShift(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var base, cand []float64
	for range 40 {
		v := r.ExpFloat64() * 10
		base = append(base, v)
		cand = append(cand, v+5)
	}
	est, lo, hi := ShiftCI(base, cand, 0.95)
	if math.Abs(est-5) > 1e-9 || lo > 5 || hi < 5 || hi-lo > 10 {
		t.Errorf("shift 5: %v [%v, %v]", est, lo, hi)
	}
}

// The 95% interval covers the true shift in about 95% of repeated
// experiments, on a skewed distribution like latencies.
func TestShiftCICoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const trials, shift = 2000, 2.0
	covered := 0
	for range trials {
		base, cand := make([]float64, 15), make([]float64, 25)
		for i := range base {
			base[i] = math.Exp(r.NormFloat64())
		}
		for i := range cand {
			cand[i] = math.Exp(r.NormFloat64()) + shift
		}
		if _, lo, hi := ShiftCI(base, cand, 0.95); lo <= shift && shift <= hi {
			covered++
		}
	}
	if c := float64(covered) / trials; c < 0.93 || c > 0.975 {
		t.Errorf("coverage %.3f, want about 0.95", c)
	}
}

// Samples too large to pair in full are thinned: the estimate stays close
// and the interval still covers the shift.
func TestShiftCILargeSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	base, cand := make([]float64, 8640), make([]float64, 8640)
	for i := range base {
		base[i] = 100 + 10*r.NormFloat64()
		cand[i] = 103 + 10*r.NormFloat64()
	}
	est, lo, hi := ShiftCI(base, cand, 0.95)
	if math.Abs(est-3) > 0.5 || lo > 3 || hi < 3 || hi-lo > 1 {
		t.Errorf("shift 3 over 8640 a side: %v [%v, %v]", est, lo, hi)
	}
}
