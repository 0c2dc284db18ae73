package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func noisy(r *rand.Rand, n int, level func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level(i) * math.Exp(0.1*r.NormFloat64())
	}
	return out
}

// A level shift planted at a known interval is found there.
func TestChangePointPlanted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// p95 of 1.9 s for 125 intervals, then 4.6 s: the shape of the
	// check-in/check-out report's longevity run.
	s := noisy(r, 300, func(i int) float64 {
		if i < 125 {
			return 1900
		}
		return 4600
	})
	cps := ChangePoints(s, 0.01, 5)
	if len(cps) != 1 || cps[0].Index < 123 || cps[0].Index > 127 {
		t.Fatalf("change points %+v, want one at 125", cps)
	}
	if math.Abs(cps[0].Before-1900)/1900 > 0.05 || math.Abs(cps[0].After-4600)/4600 > 0.05 {
		t.Errorf("levels %.0f -> %.0f, want 1900 -> 4600", cps[0].Before, cps[0].After)
	}
	// Two shifts: up, then back down.
	s2 := noisy(r, 200, func(i int) float64 {
		if i >= 60 && i < 140 {
			return 200
		}
		return 100
	})
	cps = ChangePoints(s2, 0.01, 5)
	if len(cps) != 2 || math.Abs(float64(cps[0].Index-60)) > 2 || math.Abs(float64(cps[1].Index-140)) > 2 {
		t.Errorf("two shifts: %+v", cps)
	}
}

// A stationary series rarely gives a change point.
func TestChangePointFalseAlarms(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alarms := 0
	for k := 0; k < 50; k++ {
		if len(ChangePoints(noisy(r, 120, func(int) float64 { return 100 }), 0.01, 5)) > 0 {
			alarms++
		}
	}
	if alarms > 3 {
		t.Errorf("%d of 50 stationary series had a change point", alarms)
	}
}

func TestMannKendall(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	// Drift of 2 ms per interval on a 100 ms level with 10% noise.
	up := noisy(r, 100, func(i int) float64 { return 100 + 2*float64(i) })
	tr := MannKendall(up)
	if tr.P > 1e-6 || math.Abs(tr.Slope-2) > 0.3 {
		t.Errorf("drift: %+v", tr)
	}
	flat := MannKendall(noisy(r, 100, func(int) float64 { return 100 }))
	if flat.P < 0.01 {
		t.Errorf("flat series: %+v", flat)
	}
	// Exact values for a tiny series: 1 2 3 4 5 has S = 10, var = 50/3*... p from the normal approximation.
	tr = MannKendall([]float64{1, 2, 3, 4, 5})
	wantZ := (10 - 1) / math.Sqrt(5*4*15/18.0)
	if tr.S != 10 || tr.Slope != 1 || math.Abs(tr.P-math.Erfc(wantZ/math.Sqrt2)) > 1e-12 {
		t.Errorf("1..5: %+v", tr)
	}
}

func BenchmarkChangePoints24h(b *testing.B) {
	// A 24 h run at 10 s intervals: 8,640 values, one shift after 2 h.
	r := rand.New(rand.NewPCG(1, 1))
	s := noisy(r, 8640, func(i int) float64 {
		if i < 720 {
			return 1900
		}
		return 4600
	})
	for i := 0; i < b.N; i++ {
		ChangePoints(s, 0.01, 5)
	}
}

func TestMannKendallLongSeries(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	s := noisy(r, 8640, func(i int) float64 { return 1000 + 0.05*float64(i) })
	tr := MannKendall(s)
	if tr.P > 1e-6 || math.Abs(tr.Slope-0.05)/0.05 > 0.2 {
		t.Errorf("long drift: %+v", tr)
	}
}

// ar1 is a series around level whose noise carries over from interval to
// interval (phi of it), as a run's intervals do: garbage collections,
// caches and queues last longer than one interval.
func ar1(r *rand.Rand, n int, phi float64, level func(i int) float64) []float64 {
	out := make([]float64, n)
	e := 0.0
	for i := range out {
		e = phi*e + r.NormFloat64()
		out[i] = level(i) + 5*e
	}
	return out
}

// Autocorrelated noise without a trend is rarely called one: the corrected
// variance keeps the false alarms near alpha, where the plain test raises
// them on most series. A real drift in the same noise is still found.
func TestMannKendallAutocorrelated(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	alarms := 0
	for k := 0; k < 100; k++ {
		tr := MannKendall(ar1(r, 200, 0.8, func(int) float64 { return 100 }))
		if tr.Correction <= 1 {
			t.Errorf("series %d: no correction for autocorrelation (%+v)", k, tr)
		}
		if tr.P < 0.01 {
			alarms++
		}
	}
	t.Logf("%d of 100 autocorrelated flat series had a trend at p < 0.01", alarms)
	if alarms > 5 {
		t.Errorf("%d of 100 autocorrelated flat series had a trend at p < 0.01", alarms)
	}
	up := MannKendall(ar1(r, 200, 0.8, func(i int) float64 { return 100 + 0.5*float64(i) }))
	if up.P > 0.01 || math.Abs(up.Slope-0.5) > 0.15 {
		t.Errorf("a drift of 0.5 an interval: %+v", up)
	}
}

// Change points in the blocks of an autocorrelated series: rare in flat
// series, found where a level shift was planted.
func TestDecorrelatedChangePoints(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	alarms, found := 0, 0
	for k := 0; k < 100; k++ {
		flat := ar1(r, 1000, 0.8, func(int) float64 { return 100 })
		b, w := Decorrelated(flat, MannKendall(flat).Slope)
		if w < 3 {
			t.Errorf("series %d: blocks of %d values for a lag-1 autocorrelation of 0.8", k, w)
		}
		if len(ChangePoints(b, 0.01, 5)) > 0 {
			alarms++
		}
		step := ar1(r, 1000, 0.8, func(i int) float64 {
			if i >= 350 {
				return 130
			}
			return 100
		})
		b, w = Decorrelated(step, MannKendall(step).Slope)
		for _, cp := range ChangePoints(b, 0.01, 5) {
			if math.Abs(float64(cp.Index*w-350)) <= float64(2*w) {
				found++
				break
			}
		}
	}
	t.Logf("flat: %d of 100 with a change point; a shift of 30%% at 350: found there in %d of 100", alarms, found)
	if alarms > 5 || found < 90 {
		t.Errorf("flat: %d of 100 with a change point (want at most 5); shift found at 350 in %d of 100 (want 90)", alarms, found)
	}
}

// The selection gives the sorted median, duplicates and all.
func TestMedianInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for n := 1; n < 60; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(r.IntN(7)) // many ties
		}
		want := Median(v)
		if got := medianInPlace(append([]float64(nil), v...)); got != want {
			t.Fatalf("%v: median %v, want %v", v, got, want)
		}
	}
}

// A process's memory, flat but for a page or two on each side of a step of
// 200 MB, has no noise to be autocorrelated: its blocks are its intervals,
// and the step is found as clearly as it is.
func TestDecorrelatedNoiselessStep(t *testing.T) {
	var s []float64
	for i := 0; i < 50; i++ {
		switch {
		case i < 23:
			s = append(s, 36.67)
		case i == 23:
			s = append(s, 141.3) // the sample in the middle of the allocation
		case i < 29:
			s = append(s, 238.05)
		default:
			s = append(s, 238.30)
		}
	}
	blocks, width := Decorrelated(s, MannKendall(s).Slope)
	if width != 1 || len(blocks) != len(s) {
		t.Fatalf("blocks of %d intervals", width)
	}
	cps := ChangePoints(blocks, 0.01, 3)
	if len(cps) == 0 || cps[0].Index < 23 || cps[0].Index > 24 || cps[0].P*float64(cps[0].Splits) > 1e-6 {
		t.Errorf("change points %+v", cps)
	}
}

// A NaN among the values is ranked, not waited on: ranking once looped for
// ever on it (a NaN equals no value, itself included), and with it every
// test of a series that held one.
func TestRankWithNaN(t *testing.T) {
	v := []float64{3, math.NaN(), 1, 3, math.NaN()}
	done := make(chan []float64)
	go func() {
		r, _ := rankWithTies(v)
		MannKendall([]float64{1, 2, math.NaN(), 4, 5, 6, math.NaN(), 8, 9, 10})
		ChangePoints([]float64{1, math.NaN(), 1, 1, 1, 1, 1, 5, 5, 5, math.NaN(), 5, 5, 5, 5}, 0.01, 3)
		done <- r
	}()
	select {
	case r := <-done:
		// The NaNs rank first, then 1, and the two 3s share ranks 4
		// and 5.
		if len(r) != len(v) || r[1]+r[4] != 3 || r[2] != 3 || r[0] != 4.5 || r[3] != 4.5 {
			t.Errorf("ranks %v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("ranking a NaN did not end")
	}
}

// A million values (a month at 2.6 s intervals) go through every test
// of a series, and give numbers: each test bins, blocks or ranks them in
// O(n log n), never pairwise.
func TestMillionValues(t *testing.T) {
	if testing.Short() {
		t.Skip("a million values")
	}
	r := rand.New(rand.NewPCG(1, 1))
	v := noisy(r, 1_000_000, func(i int) float64 {
		if i > 600_000 {
			return 12
		}
		return 10
	})
	tr := MannKendall(v)
	blocks, width := Decorrelated(v, tr.Slope)
	cps := ChangePoints(blocks, 0.01, 3)
	k, _ := Onset(v)
	if math.IsNaN(tr.P) || math.IsNaN(tr.Slope) || tr.P > 0.01 || len(cps) == 0 || width < 1 {
		t.Fatalf("trend %+v, %d change points, width %d, onset %d", tr, len(cps), width, k)
	}
	if at := cps[0].Index * width; at < 590_000 || at > 610_000 {
		t.Errorf("the step at 600,000 found at %d", at)
	}
}

// A step so clear that the p-values of many splits underflow to 0 is
// found where it is (within a few values: the statistic is flat at its
// peak), not at the first split whose p-value is 0.
func TestChangePointPastUnderflow(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	v := noisy(r, 5000, func(i int) float64 {
		if i >= 4000 {
			return 20
		}
		return 10
	})
	cps := ChangePoints(v, 0.01, 5)
	if len(cps) != 1 || cps[0].Index < 3990 || cps[0].Index > 4010 {
		t.Fatalf("change points %+v", cps)
	}
}
