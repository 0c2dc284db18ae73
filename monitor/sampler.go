package monitor

import (
	"context"
	"iter"
	"math"
	"slices"
	"sync"
	"time"
)

// Warning is a monitor that failed. The sampler reports it once, at its
// first failure, and goes on sampling it and the others.
type Warning struct {
	Monitor  string    `json:"monitor"`
	Message  string    `json:"message"`  // the first failure
	First    time.Time `json:"first"`    // when it happened
	Failures int       `json:"failures"` // failed samples (and Close) in the run, in Result
}

func (w Warning) String() string { return "monitor " + w.Monitor + ": " + w.Message }

// Result is what a Sampler collected: the points of every monitor sorted by
// time (All), the non-nil Finals, and a warning per monitor that failed.
type Result struct {
	Finals   []*Final  `json:"finals"`
	Warnings []Warning `json:"warnings"`
	names    []name
	series   []*pointSeries // per monitor, each in time order
}

// A long run samples its monitors for hours (72 hours at 10 s intervals:
// 25,920 samples of each), so a Sampler keeps its points packed: 24 bytes
// each, where a Point takes 64 (its time and two strings), its monitor and
// metric an index into a table of names. The time is kept to the
// nanosecond, as a wall clock reading.
type packed struct {
	t    int64 // Unix nanoseconds
	v    float64
	name int32
}

type name struct{ monitor, metric string }

// Len is the number of points.
func (r *Result) Len() int {
	n := 0
	for _, s := range r.series {
		n += s.spilled + len(s.mem)
	}
	return n
}

// All yields the points in time order: each monitor's in the order it
// took them (its samples one after the other, stamped as they start),
// merged by time, a monitor listed earlier first at the same time. Points
// spilled to their file are read back a block at a time.
func (r *Result) All() iter.Seq[Point] {
	return func(yield func(Point) bool) {
		its := make([]*seriesReader, 0, len(r.series))
		for _, s := range r.series {
			if it := s.reader(); it.next() {
				its = append(its, it)
			}
		}
		for len(its) > 0 {
			k := 0
			for i, it := range its {
				if it.cur.t < its[k].cur.t {
					k = i
				}
			}
			p := its[k].cur
			n := r.names[p.name]
			if !yield(Point{Time: time.Unix(0, p.t), Monitor: n.monitor, Metric: n.metric, Value: p.v}) {
				return
			}
			if !its[k].next() {
				its = slices.Delete(its, k, k+1)
			}
		}
	}
}

// Close releases the files the points were spilled to; All yields only
// those still in memory afterwards.
func (r *Result) Close() {
	for _, s := range r.series {
		s.close()
	}
}

// Points returns all the points in time order, unpacked.
func (r *Result) Points() []Point {
	out := make([]Point, 0, r.Len())
	for p := range r.All() {
		out = append(out, p)
	}
	return out
}

// Analyze computes the monitors' figures in every window (see Analyze).
func (r *Result) Analyze(windows []Window) Analysis {
	return analyzeSeq(r.All(), r.Finals, windows)
}

// Sampler samples monitors every interval, each from a goroutine of its
// own: a slow or unreachable source delays no other monitor, and the load
// never waits for any. A sample that takes longer than the interval is
// cancelled (its context ends) and the ticks it overran are skipped.
type Sampler struct {
	interval time.Duration
	warn     func(Warning)
	stop     chan struct{}
	marks    []chan struct{} // per monitor: sample now (Mark)
	stopCtx  context.Context // Stop's, for the last sample and Close
	wg       sync.WaitGroup

	mu       sync.Mutex     // guards what follows
	series   []*pointSeries // per monitor
	names    []name
	index    map[name]int32 // of names
	finals   []*Final       // per monitor
	warnings []*Warning     // per monitor; nil while it has not failed

	warnMu sync.Mutex // serializes calls of warn
}

// StartSampler samples each monitor at once, and then every interval (> 0) until
// Stop. warn, if not nil, is called once per failing monitor, at its first
// failure, from the sampler's goroutines (one call at a time); it should
// return quickly. ctx is the parent of the contexts of Sample calls: once it
// ends, sampling pauses until Stop.
func StartSampler(ctx context.Context, interval time.Duration, monitors []Monitor, warn func(Warning)) *Sampler {
	s := &Sampler{
		interval: interval,
		warn:     warn,
		stop:     make(chan struct{}),
		finals:   make([]*Final, len(monitors)),
		warnings: make([]*Warning, len(monitors)),
		marks:    make([]chan struct{}, len(monitors)),
		index:    map[name]int32{},
		series:   make([]*pointSeries, len(monitors)),
	}
	for i := range s.marks {
		s.marks[i] = make(chan struct{}, 1)
		s.series[i] = &pointSeries{}
	}
	s.wg.Add(len(monitors))
	for i, m := range monitors {
		if p, ok := m.(paced); ok { // from the first sample on
			p.pace(interval)
		}
		go s.run(ctx, i, m)
	}
	return s
}

// paced is a monitor that does work of its own between samples (the host
// monitor's loopback probe), at a pace set by how often it is sampled.
type paced interface {
	pace(every time.Duration)
}

// Mark asks every monitor for a sample now, besides the interval's, such
// as at a stage's start and end: a stage shorter than the interval still
// gets samples at its edges. It does not wait; a monitor still busy with a
// sample takes one mark at most.
func (s *Sampler) Mark() {
	for _, c := range s.marks {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Stop takes a last sample of every monitor, closes them (within ctx), and
// returns all that was collected. It must be called once.
func (s *Sampler) Stop(ctx context.Context) Result {
	s.stopCtx = ctx
	close(s.stop)
	s.wg.Wait()
	r := s.result()
	for i, f := range s.finals {
		if f != nil {
			r.Finals = append(r.Finals, f)
		}
		if w := s.warnings[i]; w != nil {
			r.Warnings = append(r.Warnings, *w)
		}
	}
	return r
}

// result is the points kept so far.
func (s *Sampler) result() Result {
	return Result{series: s.series, names: s.names}
}

func (s *Sampler) run(ctx context.Context, i int, m Monitor) {
	defer s.wg.Done()
	last := time.Now()
	s.sample(ctx, i, m, last)
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			// Stamped when read, not when the tick fired: a tick and a
			// mark waiting together must not be stamped out of order (a
			// cumulative series would look restarted).
			if now := time.Now(); ctx.Err() == nil && now.After(last) {
				s.sample(ctx, i, m, now)
				last = now
			}
		case <-s.marks[i]:
			// A mark just after a sample would give one only a few
			// milliseconds long, too short for /proc's CPU counters (10
			// ms ticks).
			if now := time.Now(); ctx.Err() == nil && now.Sub(last) >= min(s.interval/10, 50*time.Millisecond) {
				s.sample(ctx, i, m, now)
				last = now
			}
		case <-s.stop:
			s.sample(s.stopCtx, i, m, time.Now())
			f, err := m.Close(s.stopCtx)
			s.mu.Lock()
			s.finals[i] = f
			s.mu.Unlock()
			if err != nil {
				s.failed(i, m, err, time.Now())
			}
			return
		}
	}
}

func (s *Sampler) sample(ctx context.Context, i int, m Monitor, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, s.interval)
	defer cancel()
	pts, err := m.Sample(ctx, now)
	s.keep(i, pts)
	if err != nil {
		s.failed(i, m, err, now)
	}
}

// keep adds points of monitor m, packed.
func (s *Sampler) keep(m int, pts []Point) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.series) <= m {
		s.series = append(s.series, &pointSeries{})
	}
	for _, p := range pts {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			continue // not a measurement (a scraped gauge's NaN): no sample
		}
		n := name{p.Monitor, p.Metric}
		i, ok := s.index[n]
		if !ok {
			i = int32(len(s.names))
			s.index[n] = i
			s.names = append(s.names, n)
		}
		s.series[m].add(packed{t: p.Time.UnixNano(), v: p.Value, name: i})
	}
}

// failed counts a failure of monitor i, and reports its first.
func (s *Sampler) failed(i int, m Monitor, err error, now time.Time) {
	s.mu.Lock()
	if w := s.warnings[i]; w != nil {
		w.Failures++
		s.mu.Unlock()
		return
	}
	w := &Warning{Monitor: m.Spec().Name, Message: err.Error(), First: now, Failures: 1}
	s.warnings[i] = w
	first := *w
	s.mu.Unlock()
	if s.warn != nil {
		s.warnMu.Lock()
		defer s.warnMu.Unlock()
		s.warn(first)
	}
}
