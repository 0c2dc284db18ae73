package metrics

import "time"

// The intervals a run's length chooses from, when nothing says its
// interval (SizedInterval): round values, so that intervals read well in
// tables and charts and the tick (a second at most) divides them.
var roundIntervals = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
}

const (
	// MinInterval is the shortest interval: shorter ones cost a histogram
	// each for a few requests, and a tick of the collector each.
	MinInterval = 100 * time.Millisecond
	// MaxSizedInterval is the longest interval a run's length chooses,
	// the one a run of five minutes or more gets: a 72-hour run keeps
	// 25,920 intervals of it.
	MaxSizedInterval = 10 * time.Second
	// UnknownLengthInterval is the interval of a stage whose length is not
	// known beforehand (bounded by iterations only): at 1 s, a stage of
	// 12 s has the intervals a drift verdict needs and one of 4 s those of
	// a comparison, while an hour's stage keeps 3,600 an operation, as
	// many as 10 hours at 10 s. The plan's interval says better where
	// the author knows the length.
	UnknownLengthInterval = time.Second
	// SizedIntervals is how many intervals a stage of known length gets at
	// least (but for one shorter than SizedIntervals × MinInterval):
	// enough for a comparison's test (4 a side) and a drift verdict (12)
	// with room for the partial ones at the edges.
	SizedIntervals = 30
)

// SizedInterval is the interval a stage of length l gets when nothing
// says its interval: the longest round one (100 ms, 200 ms, 250 ms,
// 500 ms, 1 s, 2 s, 5 s, 10 s) of which l holds at least SizedIntervals,
// MinInterval for a shorter stage, MaxSizedInterval for a longer one;
// UnknownLengthInterval when l is not known (0).
func SizedInterval(l time.Duration) time.Duration {
	if l <= 0 {
		return UnknownLengthInterval
	}
	best := roundIntervals[0]
	for _, d := range roundIntervals {
		if l >= SizedIntervals*d {
			best = d
		}
	}
	return best
}

// IntervalGrain is the longest duration that divides every round interval
// from least up (SizedInterval's): cells of it can be merged into the
// intervals of any run at least as long as one that sizes least, so a
// run's length can be learnt as it is read (perflab import) before its
// intervals are cut.
func IntervalGrain(least time.Duration) time.Duration {
	var g time.Duration
	for _, d := range roundIntervals {
		if d >= least {
			g = gcd(g, d)
		}
	}
	if g == 0 {
		return least
	}
	return g
}

func gcd(a, b time.Duration) time.Duration {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
