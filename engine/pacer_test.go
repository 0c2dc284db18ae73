package engine

import (
	"math"
	"testing"
	"time"

	"github.com/perflab/perflab/plan"
)

func TestConstantPacer(t *testing.T) {
	p := constantPacer{rate: 200, duration: time.Second}
	n := int64(0)
	for {
		d, ok := p.Due(n)
		if !ok {
			break
		}
		if want := time.Duration(n) * 5 * time.Millisecond; d != want {
			t.Fatalf("due(%d) = %v, want %v", n, d, want)
		}
		n++
	}
	if n != 200 {
		t.Errorf("%d iterations in 1s at 200/s", n)
	}
}

func TestRampPacer(t *testing.T) {
	// 0 -> 100/s over 10s, then 100/s for 5s: 500 + 500 iterations.
	p := newRampPacer(0, []rampSegment{{100, 10 * time.Second}, {100, 5 * time.Second}})
	if p.Total() != 1000 {
		t.Fatalf("total %v", p.Total())
	}
	var last time.Duration
	n := int64(0)
	for ; ; n++ {
		d, ok := p.Due(n)
		if !ok {
			break
		}
		if d < last {
			t.Fatalf("due times go back at %d: %v < %v", n, d, last)
		}
		last = d
	}
	if n != 1000 {
		t.Errorf("%d iterations, want 1000", n)
	}
	// Under a linear ramp from 0, iteration k is due at sqrt(2k/slope).
	for _, k := range []int64{1, 50, 200, 499} {
		d, _ := p.Due(k)
		want := math.Sqrt(2 * float64(k) / 10)
		if math.Abs(d.Seconds()-want) > 1e-6 {
			t.Errorf("due(%d) = %v, want %.6fs", k, d, want)
		}
	}
	// In the flat segment iterations are 10ms apart.
	d600, _ := p.Due(600)
	d601, _ := p.Due(601)
	if diff := d601 - d600; diff != 10*time.Millisecond {
		t.Errorf("flat segment spacing %v", diff)
	}
	// A ramp down ends on time too: 100 -> 0 over 2s is 100 iterations.
	down := newRampPacer(100, []rampSegment{{0, 2 * time.Second}})
	if down.Total() != 100 {
		t.Errorf("ramp down total %v", down.Total())
	}
	if d, ok := down.Due(99); !ok || d > 2*time.Second {
		t.Errorf("last of ramp down due at %v, %v", d, ok)
	}
}

// dueBefore counts what walking the schedule counts, on every pacer, at
// times inside, between and past the arrivals.
func TestDueBefore(t *testing.T) {
	walk := func(p pacer, t time.Duration) int64 {
		n := int64(0)
		for {
			d, ok := p.Due(n)
			if !ok || d >= t {
				return n
			}
			n++
		}
	}
	ramp := newRampPacer(0, []rampSegment{{100, 2 * time.Second}, {100, time.Second}, {0, time.Second}})
	pacers := map[string]pacer{
		"constant":   constantPacer{rate: 200, duration: time.Second},
		"fractional": constantPacer{rate: 3.3, duration: 2 * time.Second},
		"ramp":       ramp,
		"segment":    segmentPacer{p: ramp, seg: plan.Segment{Index: 1, Count: 3}},
	}
	for name, p := range pacers {
		for ms := -1; ms <= 4500; ms += 7 {
			at := time.Duration(ms) * time.Millisecond
			if got, want := dueBefore(p, at), walk(p, at); got != want {
				t.Fatalf("%s: dueBefore(%v) = %d, a walk finds %d", name, at, got, want)
			}
		}
	}
	// At a rate of 10^12 a second, 2 s hold 2*10^12 arrivals: counted,
	// not walked.
	if got := dueBefore(constantPacer{rate: 1e12, duration: 2 * time.Second}, time.Hour); got != 2e12 {
		t.Errorf("10^12/s for 2 s: %d arrivals", got)
	}
	// A rate so small that the second arrival is due past any Duration
	// has one arrival, not one wrapped round to the start.
	tiny := constantPacer{rate: 1e-12, duration: 2 * time.Second}
	if got := dueBefore(tiny, time.Hour); got != 1 {
		t.Errorf("10^-12/s for 2 s: %d arrivals", got)
	}
}

func TestNextOf(t *testing.T) {
	for _, c := range []struct{ n, m, want int64 }{{3, 0, 3}, {3, 3, 3}, {3, 4, 7}, {3, 7, 7}, {3, 8, 11}} {
		if got := nextOf(c.n, c.m, 4); got != c.want {
			t.Errorf("nextOf(%d, %d, 4) = %d, want %d", c.n, c.m, got, c.want)
		}
	}
}
