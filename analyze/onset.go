package analyze

import "math"

// maxOnsetPoints bounds the points Onset fits (medians of consecutive
// values beyond).
const maxOnsetPoints = 500

// Onset finds where a trend began: a series level up to index k, then
// moving in a straight line (a leak that starts an hour into a run, a ramp
// after a warm-up), fitted by least squares as a hinge, level then
// line, at each k. It returns k when the hinge fits clearly better than a
// line from the start (its squared residuals at most minGain of the
// line's) and k is past the series' first twentieth; else 0, ok false: the
// trend ran all along.
func Onset(series []float64) (k int, ok bool) {
	n := len(series)
	if n < 12 {
		return 0, false
	}
	v, width := series, 1
	if n > maxOnsetPoints {
		width = (n + maxOnsetPoints - 1) / maxOnsetPoints
		v = nil
		for i := 0; i < n; i += width {
			v = append(v, Median(series[i:min(i+width, n)]))
		}
	}
	m := len(v)
	line := hingeSSE(v, 0)
	best, bestK := line, 0
	for k := 1; k < m-3; k++ {
		if sse := hingeSSE(v, k); sse < best {
			best, bestK = sse, k
		}
	}
	const minGain = 0.5
	if bestK*20 < m || !(best <= minGain*line) || line == 0 {
		return 0, false
	}
	return min(bestK*width, n-1), true
}

// hingeSSE is the sum of squared residuals of the least-squares fit of v
// to a + b·max(0, i-k).
func hingeSSE(v []float64, k int) float64 {
	var sx, sy, sxx, sxy, syy float64
	fn := float64(len(v))
	for i, y := range v {
		x := math.Max(0, float64(i-k))
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
		syy += y * y
	}
	vx := sxx - sx*sx/fn
	vy := syy - sy*sy/fn
	if vx <= 0 {
		return vy
	}
	cxy := sxy - sx*sy/fn
	return math.Max(0, vy-cxy*cxy/vx)
}
