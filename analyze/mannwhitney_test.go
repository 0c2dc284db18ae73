package analyze

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// Reference values from SciPy 1.17.1:
// scipy.stats.mannwhitneyu(x, y, alternative="two-sided", method=...).
func TestMannWhitneyAgainstSciPy(t *testing.T) {
	cases := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		{"exact 9x9", []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			[]float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.07, 3.14, 1.28}, 58, 0.13591114767585355, true},
		{"9x9 with ties", []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			[]float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}, 58, 0.13291945818531892, false},
		{"exact separated", []float64{10, 11, 12, 13, 14, 15}, []float64{16, 17, 18, 19, 20, 21}, 0, 0.0021645021645021645, true},
		{"ties", []float64{1, 2, 2, 3, 3, 3, 4, 5}, []float64{3, 4, 4, 5, 5, 6, 7, 7, 8}, 7.5, 0.006373133838085873, false},
		{"equal", []float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 4, 5}, 12.5, 1, false},
		{"large", seq(40, func(i int) float64 { return float64(i%7) + float64(i)*0.01 }),
			seq(35, func(i int) float64 { return float64(i%5) + float64(i)*0.012 + 0.8 }), 740, 0.6748613840687885, false},
		{"30x30 shift", seq(30, func(i int) float64 { return float64(i + 1) }), seq(30, func(i int) float64 { return float64(i+1) + 5.5 }),
			300, 0.027086318388295935, false},
	}
	for _, c := range cases {
		r := MannWhitney(c.x, c.y)
		if r.U != c.u || math.Abs(r.P-c.p) > 1e-9 || r.Exact != c.exact {
			t.Errorf("%s: U %v p %.12f exact %v; SciPy says U %v p %.12f", c.name, r.U, r.P, r.Exact, c.u, c.p)
		}
	}
}

func seq(n int, f func(int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestCompareVerdicts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sample := func(n int, mean float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = mean * math.Exp(0.1*r.NormFloat64())
		}
		return v
	}
	base := sample(30, 100)
	if c := Compare(base, sample(30, 120), 0.05, 0, true); c.Verdict != Worse || c.Change < 0.1 {
		t.Errorf("20%% slower: %+v", c)
	}
	if c := Compare(base, sample(30, 80), 0.05, 0, true); c.Verdict != Better {
		t.Errorf("20%% faster: %+v", c)
	}
	if c := Compare(base, sample(30, 100), 0.05, 0, true); c.Verdict != NoChange {
		t.Errorf("same distribution: %+v", c)
	}
	// A significant but small change is no change with a 30% floor.
	if c := Compare(base, sample(30, 120), 0.05, 0.3, true); c.Verdict != NoChange {
		t.Errorf("20%% with a 30%% floor: %+v", c)
	}
	// Throughput: higher is better.
	if c := Compare(base, sample(30, 120), 0.05, 0, false); c.Verdict != Better {
		t.Errorf("throughput up: %+v", c)
	}
	if c := Compare(base[:3], sample(3, 200), 0.05, 0, true); c.Verdict != TooFewToSay {
		t.Errorf("3 samples: %+v", c)
	}
	// False alarms: same distribution, many trials, about alpha of them.
	alarms := 0
	for i := 0; i < 400; i++ {
		if Compare(sample(20, 100), sample(20, 100), 0.05, 0, true).Verdict != NoChange {
			alarms++
		}
	}
	if alarms > 40 { // 5% of 400 is 20; 40 is far beyond chance
		t.Errorf("%d false alarms in 400 comparisons at alpha 0.05", alarms)
	}
}

// The reported change decides a verdict's size and direction against the
// minimum (the samples' medians move 5% here), and a reported change
// against the samples' shift is none.
func TestCompareChange(t *testing.T) {
	base := []float64{10, 10.1, 9.9, 10.2, 9.8, 10, 10.1, 9.9}
	cand := []float64{10.5, 10.6, 10.4, 10.7, 10.3, 10.5, 10.6, 10.4}
	if c := CompareChange(base, cand, 0.051, 0.05, 0.05, true); c.Verdict != Worse || c.Change != 0.051 {
		t.Errorf("reported +5.1%%: %v %v", c.Verdict, c.Change)
	}
	if c := CompareChange(base, cand, 0.049, 0.05, 0.05, true); c.Verdict != NoChange {
		t.Errorf("reported +4.9%%: %v", c.Verdict)
	}
	if c := CompareChange(base, cand, -0.08, 0.05, 0.05, true); c.Verdict != NoChange {
		t.Errorf("reported -8%% against a rising shift: %v", c.Verdict)
	}
	if c := CompareChange(cand, base, -0.08, 0.05, 0.05, true); c.Verdict != Better {
		t.Errorf("reported -8%% with a falling shift: %v", c.Verdict)
	}
	if c := CompareChange(base[:2], cand[:2], 0.5, 0.05, 0.05, true); c.Verdict != TooFewToSay {
		t.Errorf("two samples: %v", c.Verdict)
	}
}

// A side without values has no median and no change: zeros, which JSON
// holds, not NaN.
func TestCompareEmptySide(t *testing.T) {
	for _, c := range []Comparison{Compare(nil, []float64{3, 4}, 0.05, 0.05, true), Compare([]float64{3, 4}, nil, 0.05, 0.05, true), CompareChange(nil, nil, 0, 0.05, 0.05, true)} {
		if _, err := json.Marshal(c); err != nil || c.Verdict != TooFewToSay || c.Change != 0 {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
