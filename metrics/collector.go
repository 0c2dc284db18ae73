package metrics

import (
	"context"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/cede"
)

// Interval is the statistics of every operation over one slice of a stage.
// Ops is indexed like the recorder's operations. Partial is true for an
// interval shorter than the run's: cut short by its stage's end (or, for
// another tool's results, by its stage's start).
type Interval struct {
	Index      int
	Start, End time.Time
	Ops        []*Stats
	Partial    bool
	// PeakVUs is, per scenario, the most VUs in an iteration at once
	// during the interval (a closed model's VUs running, an open model's
	// VUs busy with an iteration); nil where not recorded.
	PeakVUs map[string]int64
	// sl slices the collector's work at the interval's end (Point).
	sl *cede.Slicer
	// digests are the histograms' encodings made for one sink, which the
	// next finds here (Digest).
	digests map[*hdr.Histogram]digest
}

// Digest is st.Digest(), the encoding and quantiles of its latency
// histogram, made once for every sink of the interval: the run directory's
// log and the run history write the same histograms.
func (iv *Interval) Digest(st *Stats) ([]byte, Quantiles) {
	if st.digest != nil || st.Hist == nil {
		return st.Digest()
	}
	return iv.digestOf(st.Hist)
}

// FailDigest is st.FailDigest(), made once for every sink (Digest).
func (iv *Interval) FailDigest(st *Stats) ([]byte, Quantiles, bool) {
	if st.failDigest != nil || st.FailHist == nil || st.Failed.N == 0 {
		return st.FailDigest()
	}
	enc, q := iv.digestOf(st.FailHist)
	return enc, q, true
}

// Encode is metrics.Digest(h), made once for every sink (Digest).
func (iv *Interval) Encode(h *hdr.Histogram) ([]byte, Quantiles) { return iv.digestOf(h) }

func (iv *Interval) digestOf(h *hdr.Histogram) ([]byte, Quantiles) {
	if d, ok := iv.digests[h]; ok {
		return d.enc, d.q
	}
	enc, q := Digest(h)
	if iv.digests == nil {
		iv.digests = map[*hdr.Histogram]digest{}
	}
	iv.digests[h] = digest{enc, q}
	iv.Point()
	return enc, q
}

// Point is where a sink may pause between two pieces of its work (an
// operation's histograms, a row): while the load runs, the collector's
// work at an interval's end gives the CPU to the goroutines that start
// iterations every few tens of microseconds (internal/cede), so that none
// starts late for it, however many operations the interval has.
func (iv *Interval) Point() { iv.sl.Point() }

// Sink receives each finished interval, for example to write it to a log.
// It is called from the collector's goroutine and must not keep iv.Ops.
type Sink interface {
	Interval(iv *Interval) error
}

// Tick is what a progress display sees once per tick. Cur holds the current
// interval so far, Total everything before it. It must not be kept.
type Tick struct {
	Elapsed time.Duration
	Ops     []Op
	Cur     []*Stats
	Total   []*Stats
	LastIvl []*Stats // the last finished interval, nil before the first
	// LastVUs is the last finished interval's PeakVUs.
	LastVUs   map[string]int64
	Intervals int
	// Final is true for the last tick of a stage, after the load stopped.
	Final bool
}

// Collector drains a recorder every tick, closes an interval every interval,
// hands finished intervals to a sink and keeps the running totals. It keeps
// nothing per interval: its memory does not grow with a stage's length (a
// finished interval lives on in the sink: the run directory's latency.hlog
// and intervals.csv, and the run history). Its work at each tick is
// proportional to the histograms it merges and writes, and runs in slices
// (internal/cede) while the load goes on.
type Collector struct {
	rec      *Recorder
	interval time.Duration
	tick     time.Duration
	sink     Sink
	onTick   func(*Tick)

	mu        sync.Mutex
	start     time.Time
	ivStart   time.Time
	ivIndex   int
	cur, last []*Stats
	lastVUs   map[string]int64
	total     []*Stats
	sinkErr   error
	stopped   bool
}

// NewCollector starts collecting from rec at start. A nil sink is allowed.
func NewCollector(rec *Recorder, start time.Time, interval, tick time.Duration, sink Sink, onTick func(*Tick)) *Collector {
	if tick <= 0 || tick > interval {
		tick = interval
	}
	// Ticks must fall on interval boundaries, or a tick's data would be
	// given to the wrong interval: make the interval a whole number of ticks.
	if interval%tick != 0 {
		n := (interval + tick - 1) / tick
		tick = interval / n
	}
	n := len(rec.ops)
	return &Collector{
		rec: rec, interval: interval, tick: tick, sink: sink, onTick: onTick,
		start: start, ivStart: start,
		cur: newStatsSlice(n), total: newStatsSlice(n),
	}
}

// Run drains on every tick until ctx is done. Call Stop afterwards.
func (c *Collector) Run(ctx context.Context) {
	t := time.NewTicker(c.tick)
	defer t.Stop()
	sl := cede.New()
	defer sl.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			sl.Start()
			c.step(now, sl)
		}
	}
}

func (c *Collector) step(now time.Time, sl *cede.Slicer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.rec.drain(c.cur, sl)
	for now.Sub(c.ivStart) >= c.interval {
		c.closeInterval(c.ivStart.Add(c.interval), sl)
	}
	if c.onTick != nil {
		c.onTick(&Tick{Elapsed: now.Sub(c.start), Ops: c.rec.ops, Cur: c.cur, Total: c.total, LastIvl: c.last, LastVUs: c.lastVUs, Intervals: c.ivIndex})
	}
}

// closeInterval ends the current interval at end, pausing at sl's points
// (nil: none). Locked.
func (c *Collector) closeInterval(end time.Time, sl *cede.Slicer) {
	iv := &Interval{Index: c.ivIndex, Start: c.ivStart, End: end, Ops: c.cur, Partial: end.Sub(c.ivStart) < c.interval, PeakVUs: c.rec.takePeakVUs(), sl: sl}
	if c.sink != nil && c.sinkErr == nil {
		c.sinkErr = c.sink.Interval(iv)
	}
	for i, s := range c.cur {
		c.total[i].Merge(s)
		sl.Point()
	}
	// With a tick to show it, the finished interval becomes "last" and the
	// old "last" is reused; without, nothing reads it, and the interval's
	// statistics are reset where they are (a histogram an operation less).
	if c.onTick != nil {
		if c.last == nil {
			c.last = newStatsSlice(len(c.cur))
		}
		c.last, c.cur = c.cur, c.last
	}
	c.lastVUs = iv.PeakVUs
	for _, s := range c.cur {
		s.Reset()
		sl.Point()
	}
	c.ivIndex++
	c.ivStart = end
}

// Stop drains what is left, closes the last (possibly short) interval at end
// and returns the totals. It is safe to call once the workers have stopped
// recording.
func (c *Collector) Stop(end time.Time) ([]*Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		c.rec.Drain(c.cur)
		for end.Sub(c.ivStart) >= c.interval {
			c.closeInterval(c.ivStart.Add(c.interval), nil)
		}
		if end.After(c.ivStart) || hasData(c.cur) {
			c.closeInterval(end, nil)
		}
		c.stopped = true
		if c.onTick != nil { // a last tick, with the final figures
			c.onTick(&Tick{Elapsed: end.Sub(c.start), Ops: c.rec.ops, Cur: c.cur, Total: c.total, LastIvl: c.last, LastVUs: c.lastVUs, Intervals: c.ivIndex, Final: true})
		}
	}
	return c.total, c.sinkErr
}

func hasData(s []*Stats) bool {
	for _, x := range s {
		if x.Count > 0 {
			return true
		}
	}
	return false
}
