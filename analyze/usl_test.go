package analyze

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Synthetic data from a known model: the fit recovers its coefficients.
func TestFitUSLRecoversKnownCoefficients(t *testing.T) {
	truth := USL{Lambda: 100, Sigma: 0.05, Kappa: 0.0005}
	var n, x []float64
	for _, c := range []float64{1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128} {
		n = append(n, c)
		x = append(x, truth.At(c))
	}
	m, err := FitUSL(n, x)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"lambda", m.Lambda, 100}, {"sigma", m.Sigma, 0.05}, {"kappa", m.Kappa, 0.0005},
	} {
		if math.Abs(c.got-c.want)/c.want > 1e-3 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	wantPeak := math.Sqrt((1 - 0.05) / 0.0005) // 43.6
	if math.Abs(m.PeakN-wantPeak) > 0.1 || m.R2 < 0.999999 {
		t.Errorf("peak at N=%.2f (want %.2f), R2 %v", m.PeakN, wantPeak, m.R2)
	}

	// With 2% noise the coefficients stay close.
	r := rand.New(rand.NewPCG(5, 6))
	noisy := make([]float64, len(x))
	for i := range x {
		noisy[i] = x[i] * (1 + 0.02*r.NormFloat64())
	}
	m2, _ := FitUSL(n, noisy)
	if math.Abs(m2.Sigma-0.05) > 0.02 || math.Abs(m2.Kappa-0.0005)/0.0005 > 0.3 || math.Abs(m2.PeakN-wantPeak)/wantPeak > 0.15 {
		t.Errorf("noisy fit: %+v", m2)
	}
}

func TestFitUSLLinearAndErrors(t *testing.T) {
	// Perfect linear scaling: no contention, no coherency cost, no peak.
	m, err := FitUSL([]float64{1, 2, 4, 8}, []float64{10, 20, 40, 80})
	if err != nil || math.Abs(m.Lambda-10) > 1e-6 || m.Sigma > 1e-6 || m.Kappa > 1e-9 || !math.IsInf(m.PeakN, 1) {
		t.Errorf("linear: %+v, %v", m, err)
	}
	if _, err := FitUSL([]float64{1, 2}, []float64{1, 2}); err == nil {
		t.Error("two points accepted")
	}
}

// Throughput that falls from the first VU on peaks at about one VU (never
// below it, nor at infinity).
func TestUSLPeakNotBelowOneVU(t *testing.T) {
	for _, pts := range [][][2]float64{
		{{1, 100}, {2, 50}, {3, 33.3}},
		{{1, 100}, {2, 80}, {3, 60}, {4, 40}},
	} {
		var n, x []float64
		for _, p := range pts {
			n, x = append(n, p[0]), append(x, p[1])
		}
		m, err := FitUSL(n, x)
		if err != nil {
			t.Fatal(err)
		}
		if m.PeakN < 1 || m.PeakN > 1.5 || math.Abs(m.PeakX-m.At(m.PeakN)) > 1e-9 || m.PeakX > 1.05*pts[0][1] {
			t.Errorf("%v: peak %.3g at %.3g VUs, want about the first point's, at about 1 VU", pts, m.PeakX, m.PeakN)
		}
	}
}
