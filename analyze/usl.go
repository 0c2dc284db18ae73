package analyze

import (
	"errors"
	"math"
)

// USL is a Universal Scalability Law model (Gunther):
//
//	X(N) = λN / (1 + σ(N-1) + κN(N-1))
//
// where λ is the throughput of one worker, σ the contention (the serial
// fraction) and κ the coherency cost (crosstalk between workers).
type USL struct {
	Lambda, Sigma, Kappa float64
	// PeakN is the concurrency of maximum throughput, sqrt((1-σ)/κ), and
	// PeakX that throughput; PeakN is +Inf when κ is 0.
	PeakN, PeakX float64
	// R2 is the share of the throughput's variance the model explains.
	R2 float64
}

// At is the model's throughput at concurrency n.
func (m USL) At(n float64) float64 {
	return m.Lambda * n / (1 + m.Sigma*(n-1) + m.Kappa*n*(n-1))
}

// FitUSL fits the model to measured (concurrency, throughput) points by
// least squares, with σ and κ non-negative. It needs three points or more.
func FitUSL(n, x []float64) (USL, error) {
	if len(n) != len(x) || len(n) < 3 {
		return USL{}, errors.New("a scalability fit needs at least 3 points")
	}
	// For given σ and κ the best λ has a closed form, so only σ and κ are
	// searched (Nelder-Mead over their square roots keeps them >= 0).
	lambdaFor := func(s, k float64) (float64, float64) {
		var num, den float64
		for i := range n {
			g := n[i] / (1 + s*(n[i]-1) + k*n[i]*(n[i]-1))
			num += x[i] * g
			den += g * g
		}
		l := num / den
		var sse float64
		for i := range n {
			d := x[i] - l*n[i]/(1+s*(n[i]-1)+k*n[i]*(n[i]-1))
			sse += d * d
		}
		return l, sse
	}
	cost := func(p [2]float64) float64 {
		_, sse := lambdaFor(p[0]*p[0], p[1]*p[1])
		return sse
	}
	best := [2]float64{}
	bestCost := math.Inf(1)
	// Start from a coarse grid, then refine.
	for _, s := range []float64{0, 0.01, 0.05, 0.1, 0.3, 0.6} {
		for _, k := range []float64{0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1} {
			p := [2]float64{math.Sqrt(s), math.Sqrt(k)}
			if c := cost(p); c < bestCost {
				best, bestCost = p, c
			}
		}
	}
	best = nelderMead(cost, best, 0.05, 4000)
	m := USL{Sigma: best[0] * best[0], Kappa: best[1] * best[1]}
	var sse float64
	m.Lambda, sse = lambdaFor(m.Sigma, m.Kappa)
	var mean, sst float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sst += (v - mean) * (v - mean)
	}
	switch {
	case sst > 0:
		m.R2 = 1 - sse/sst
	case sse <= 1e-12*math.Max(mean*mean, 1): // flat, and fitted exactly
		m.R2 = 1
	}
	switch {
	case m.Sigma >= 1 || m.Kappa > 0 && math.Sqrt((1-m.Sigma)/m.Kappa) < 1:
		// Throughput never rises above one VU's: the peak is at N = 1.
		m.PeakN, m.PeakX = 1, m.At(1)
	case m.Kappa > 0:
		m.PeakN = math.Sqrt((1 - m.Sigma) / m.Kappa)
		m.PeakX = m.At(m.PeakN)
	default: // no coherency cost: rising for ever towards λ/σ
		m.PeakN, m.PeakX = math.Inf(1), m.Lambda/math.Max(m.Sigma, 1e-12)
	}
	return m, nil
}

// nelderMead minimises f over two parameters from start.
func nelderMead(f func([2]float64) float64, start [2]float64, step float64, iters int) [2]float64 {
	pts := [3][2]float64{start, {start[0] + step, start[1]}, {start[0], start[1] + step}}
	val := [3]float64{f(pts[0]), f(pts[1]), f(pts[2])}
	for it := 0; it < iters; it++ {
		// Order: best, middle, worst.
		for i := 0; i < 3; i++ {
			for j := i + 1; j < 3; j++ {
				if val[j] < val[i] {
					val[i], val[j] = val[j], val[i]
					pts[i], pts[j] = pts[j], pts[i]
				}
			}
		}
		if math.Abs(val[2]-val[0]) <= 1e-15*(math.Abs(val[0])+1e-300) && dist(pts[0], pts[2]) < 1e-12 {
			break
		}
		c := [2]float64{(pts[0][0] + pts[1][0]) / 2, (pts[0][1] + pts[1][1]) / 2}
		at := func(t float64) [2]float64 {
			return [2]float64{c[0] + t*(pts[2][0]-c[0]), c[1] + t*(pts[2][1]-c[1])}
		}
		r := at(-1)
		fr := f(r)
		switch {
		case fr < val[0]:
			if e := at(-2); f(e) < fr {
				pts[2], val[2] = e, f(e)
			} else {
				pts[2], val[2] = r, fr
			}
		case fr < val[1]:
			pts[2], val[2] = r, fr
		default:
			k := at(0.5)
			if fk := f(k); fk < val[2] {
				pts[2], val[2] = k, fk
			} else { // shrink towards the best
				for i := 1; i < 3; i++ {
					pts[i] = [2]float64{(pts[i][0] + pts[0][0]) / 2, (pts[i][1] + pts[0][1]) / 2}
					val[i] = f(pts[i])
				}
			}
		}
	}
	if val[1] < val[0] {
		return pts[1]
	}
	return pts[0]
}

func dist(a, b [2]float64) float64 { return math.Hypot(a[0]-b[0], a[1]-b[1]) }
