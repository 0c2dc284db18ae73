package engine

import (
	"math"
	"time"

	"github.com/perflab/perflab/plan"
)

// A pacer decides when each iteration of an open workload model is due:
// Due(n) is the offset from the start of the scenario at which iteration n
// (0-based) should start, and false once the schedule has ended. Latency in
// open models is measured from this due time, so a stall of the system under
// test shows in the percentiles instead of silently slowing the load
// (no coordinated omission).
type pacer interface {
	Due(n int64) (time.Duration, bool)
}

// constantPacer starts rate iterations per second for a duration.
type constantPacer struct {
	rate     float64 // per second
	duration time.Duration
}

func (p constantPacer) Due(n int64) (time.Duration, bool) {
	if !(p.rate > 0) {
		return 0, false
	}
	// Compared as a float first: far past the end, the offset does not fit
	// a Duration (a tiny rate's second arrival).
	f := float64(n) / p.rate * float64(time.Second)
	if !(f < float64(p.duration)) {
		return 0, false
	}
	d := time.Duration(f)
	return d, d < p.duration
}

// rampSegment moves the rate linearly from the previous target to Target
// over Duration.
type rampSegment struct {
	Target   float64
	Duration time.Duration
}

// rampPacer follows a piecewise-linear rate, starting at start.
type rampPacer struct {
	start    float64
	segments []rampSegment
	// cum[i] is the number of iterations due before segment i.
	cum []float64
}

func newRampPacer(start float64, segs []rampSegment) *rampPacer {
	p := &rampPacer{start: start, segments: segs, cum: make([]float64, len(segs)+1)}
	r0 := start
	for i, s := range segs {
		p.cum[i+1] = p.cum[i] + (r0+s.Target)/2*s.Duration.Seconds()
		r0 = s.Target
	}
	return p
}

func (p *rampPacer) Due(n int64) (time.Duration, bool) {
	// Iteration n is due when the integral of the rate reaches n.
	x := float64(n)
	r0 := p.start
	var offset time.Duration
	for i, s := range p.segments {
		if x < p.cum[i+1] {
			rem := x - p.cum[i]
			T := s.Duration.Seconds()
			slope := (s.Target - r0) / T
			var t float64
			if math.Abs(slope) < 1e-12 {
				t = rem / r0
			} else {
				// slope/2 t² + r0 t - rem = 0
				disc := r0*r0 + 2*slope*rem
				t = (-r0 + math.Sqrt(math.Max(disc, 0))) / slope
			}
			// Rounding can put t a hair outside the segment.
			t = min(max(t, 0), T)
			return offset + time.Duration(t*float64(time.Second)), true
		}
		offset += s.Duration
		r0 = s.Target
	}
	return 0, false
}

// segmentPacer is a worker's share of a distributed run's schedule: its
// n-th arrival is the plan's arrival Global(n), due when the plan has it
// due, so the workers' arrivals interleave into the plan's schedule.
type segmentPacer struct {
	p   pacer
	seg plan.Segment
}

func (p segmentPacer) Due(n int64) (time.Duration, bool) { return p.p.Due(p.seg.Global(n)) }

// dueBefore is the number of p's arrivals due before offset t: the first n
// whose due time is t or later, or past the schedule's end. It asks Due
// O(log n) times, so a pacer that has fallen behind, with every VU busy,
// drops what it can no longer start in one step instead of walking every
// due time (at a rate of 10^12 a second that walk never ends).
func dueBefore(p pacer, t time.Duration) int64 {
	before := func(n int64) bool {
		d, ok := p.Due(n)
		return ok && d < t
	}
	if !before(0) {
		return 0
	}
	lo, hi := int64(0), int64(1) // before(lo), and hi is to be found
	for before(hi) {
		if hi >= maxArrivals {
			return hi
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if before(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// maxArrivals bounds dueBefore's search: more arrivals than plan.MaxRate
// makes in a year.
const maxArrivals = 1 << 50

// nextOf is the first of the arrivals n, n+every, n+2*every ... that is
// not before m: where an event loop that paces every every-th arrival goes
// on once the arrivals before m are dropped.
func nextOf(n, m int64, every int) int64 {
	if n >= m {
		return n
	}
	steps := (m - n + int64(every) - 1) / int64(every)
	return n + steps*int64(every)
}

// Total is the number of iterations the schedule starts.
func (p *rampPacer) Total() float64 { return p.cum[len(p.cum)-1] }
