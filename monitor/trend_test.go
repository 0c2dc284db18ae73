package monitor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// memorySeries is an hour of samples every 10 s: a base level, a leak of
// leakPerHour, a garbage-collection sawtooth (rising sawtooth bytes in each
// minute, then dropping), and uniform noise.
func memorySeries(rng *rand.Rand, base, leakPerHour, sawtooth, noise float64) (t, v []float64) {
	for i := 0; i < 360; i++ {
		h := float64(i) * 10 / 3600
		saw := sawtooth * float64(i%6) / 5
		t = append(t, h)
		v = append(v, base+leakPerHour*h+saw+noise*(rng.Float64()*2-1))
	}
	return t, v
}

func TestLeakTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const mb = 1 << 20

	// 5 MB an hour under a 50 MB sawtooth: the floor rises.
	tt, v := memorySeries(rng, 200*mb, 5*mb, 50*mb, 2*mb)
	if p, leak, ok := leakTest(tt, v); !ok || !leak || p >= leakAlpha {
		t.Errorf("leak of 5 MB/h: p %v, suspected %v", p, leak)
	}
	if s := olsSlope(tt, v); math.Abs(s-5*mb) > 1*mb {
		t.Errorf("slope = %.1f MB/h, want about 5", s/mb)
	}

	// A warm-up: memory fills for 5 minutes, then stays.
	tt, v = memorySeries(rng, 200*mb, 0, 50*mb, 2*mb)
	for i := range v {
		v[i] += 100 * mb * min(1, tt[i]*12)
	}
	if p, leak, _ := leakTest(tt, v); leak {
		t.Errorf("a warm-up that levels off is called a leak (p %v)", p)
	}

	// A real but negligible drift: 0.5% of the level in an hour.
	tt, v = memorySeries(rng, 200*mb, 1*mb, 0, 0)
	if _, leak, _ := leakTest(tt, v); leak {
		t.Error("a drift of 0.5% an hour is called a leak")
	}

	if _, _, ok := leakTest(tt[:minLeakSamples-1], v[:minLeakSamples-1]); ok {
		t.Error("judged with too few samples")
	}
}

// TestLeakTestFalsePositives checks how often a stationary series (sawtooth
// and noise, no leak) is called a leak: about leakAlpha of the time at most.
func TestLeakTestFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const runs = 500
	leaks := 0
	for range runs {
		tt, v := memorySeries(rng, 200<<20, 0, 50<<20, 20<<20)
		if _, leak, _ := leakTest(tt, v); leak {
			leaks++
		}
	}
	if leaks > runs*3/100 {
		t.Errorf("%d false leaks in %d stationary series", leaks, runs)
	}
}

func TestMannKendall(t *testing.T) {
	if p := mannKendall([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}); p > 1e-4 {
		t.Errorf("strictly rising: p = %v", p)
	}
	if p := mannKendall([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}); p != 1 {
		t.Errorf("falling: p = %v, want 1", p)
	}
	if p := mannKendall([]float64{5, 5, 5, 5, 5, 5, 5, 5}); p != 1 {
		t.Errorf("constant: p = %v, want 1", p)
	}
	// n = 10, S = 45 - 2*1 = 43 (one swapped pair), variance 125:
	// z = 42/sqrt(125).
	want := 0.5 * math.Erfc(42/math.Sqrt(125)/math.Sqrt2)
	if p := mannKendall([]float64{1, 2, 3, 5, 4, 6, 7, 8, 9, 10}); math.Abs(p-want) > 1e-12 {
		t.Errorf("p = %v, want %v", p, want)
	}
	if s := senSlope([]float64{0, 2, 4, 100, 8}); s != 2 {
		t.Errorf("Sen slope = %v, want 2 (robust to the outlier)", s)
	}
}
