package metrics

// Quantiles are the percentiles of a histogram that charts draw over time
// and intervals.csv holds (µs, as the histogram records them). They are
// taken where each interval's histogram is made and stored beside it, so
// that a day of intervals (172,800 histograms for 20 operations at 10 s)
// is drawn without decoding one.
type Quantiles struct {
	// N is the histogram's count (the successful operations).
	N                  int64
	P50, P95, P99, Max int64
}

// Percentiler is what Quantiles need of a histogram: a dense one
// (*hdr.Histogram) or a sparse one (*hdr.PackedHistogram), which agree.
type Percentiler interface {
	ValueAtPercentile(float64) int64
	Max() int64
	TotalCount() int64
}

// QuantilesOf takes a histogram's Quantiles; all zero when it is empty.
func QuantilesOf(h Percentiler) Quantiles {
	n := h.TotalCount()
	if n == 0 {
		return Quantiles{}
	}
	return Quantiles{N: n, P50: h.ValueAtPercentile(50), P95: h.ValueAtPercentile(95), P99: h.ValueAtPercentile(99), Max: h.Max()}
}
