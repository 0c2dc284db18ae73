// Package ingest turns other tools' results into perflab runs: a run
// directory like one perflab wrote, with exact totals and interval
// histograms, ready for the history. JMeter's result files (package jtl)
// are read here; what a file holds that a run does not is said in the
// run's summary (Origin).
package ingest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// Options say where the run goes and how its samples are cut into
// intervals.
type Options struct {
	// Out is the directory under which the run gets its own.
	Out string
	// Name is the run's plan name; "" is the file's base name.
	Name string
	// Interval is the length of the run's intervals: if zero, a histogram
	// log's own (its first interval's), else sized to the run as a plan's
	// is (metrics.SizedInterval) to its longest stage, learnt as the
	// samples are read (builder.sized).
	Interval time.Duration
	// Lag is how far out of time order samples may come (JMeter writes a
	// sample when it ends, several threads at once; a file of several
	// injectors may be further apart): an interval is written once
	// samples this much later have been read. 5 minutes if zero. Open
	// intervals hold counts by value, so a long lag costs little memory.
	Lag time.Duration
}

// Source is a stream of samples of another tool, in file order.
type Source interface {
	Next() (Sample, error)
}

// Sample is one timed operation of another tool.
type Sample struct {
	Start    time.Time
	Elapsed  time.Duration
	Scenario string // a thread group, a k6 scenario
	Name     string
	Kind     metrics.Kind // step or transaction
	Thread   string       // a VU: counted per scenario
	Err      metrics.ErrKind
	Bytes    int64
	// Count is how many operations this sample stands for (0 is one): a
	// bucket of a histogram.
	Count int64
	// Until, if set, is the end of the span the sample stands in (an
	// interval of a histogram log), when that is after its own end.
	Until time.Time
}

// Run reads every sample of src and writes them as a run directory under
// o.Out, of the tool and file named. Nothing is left under o.Out if it
// fails: the run is written aside and moved in place when whole.
func Run(src Source, tool, file string, o Options, notes []string) (dir string, s *results.Summary, err error) {
	if o.Lag <= 0 {
		o.Lag = 5 * time.Minute
	}
	if o.Name == "" {
		o.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	first, err := src.Next()
	if errors.Is(err, io.EOF) {
		return "", nil, fmt.Errorf("%s: no samples", file)
	}
	if err != nil {
		return "", nil, err
	}
	sized := false
	if o.Interval <= 0 {
		if d := first.Until.Sub(first.Start); d > 0 {
			o.Interval = d
		} else {
			sized = true
		}
	}
	id := results.RunIDBase(first.Start, o.Name)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(o.Out, ".import-")
	if err != nil {
		return "", nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	source := fmt.Sprintf("# imported from %s results: %s\nname: %s\n", tool, file, o.Name)
	w, err := results.CreateDir(filepath.Join(tmp, id), id, o.Name, first.Start, []byte(source), nil)
	if err != nil {
		return "", nil, err
	}
	defer w.Close()
	b := newBuilder(o, w.Sink, sized)
	for s, err := first, error(nil); ; s, err = src.Next() {
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, err
		}
		if err := b.add(s); err != nil {
			return "", nil, err
		}
	}
	run, err := b.finish(id, o.Name, source)
	if err != nil {
		return "", nil, err
	}
	sum := results.Summarize(run, results.Host{})
	if n, ok := src.(interface{ Notes() []string }); ok {
		notes = append(notes, n.Notes()...)
	}
	sum.Origin = &results.Origin{Tool: tool, File: file, Samples: b.samples, NotCarried: append(notes, b.notes()...)}
	if err := w.Finish(sum, run); err != nil {
		return "", nil, err
	}
	for n := 1; ; n++ {
		dir = filepath.Join(o.Out, id)
		if n > 1 {
			dir = fmt.Sprintf("%s-%d", dir, n)
		}
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	if err := os.Rename(filepath.Join(tmp, id), dir); err != nil {
		return "", nil, err
	}
	os.Remove(tmp)
	return dir, sum, nil
}

// value is a count of samples of one outcome and latency: a success's
// histogram bucket (metrics.Bucket), a failure's 0 (a failure's latency
// is not in a histogram).
type value struct {
	ns int64
	ek metrics.ErrKind
}

// cell is an operation's samples in an interval (or over the run),
// counted by value: small whatever the rate and however fine the
// latencies, at most a histogram's buckets. The exact moments of its
// successes' and failures' latencies are kept beside.
type cell struct {
	counts     map[value]int64
	ok, failed metrics.Moments
	bytes      int64
}

// newCell is an empty cell.
func newCell() *cell { return &cell{counts: map[value]int64{}} }

// add counts n samples of one latency and outcome.
func (c *cell) add(lat time.Duration, ek metrics.ErrKind, n int64) {
	ns := max(int64(lat), 0)
	switch ek {
	case metrics.OK:
		c.ok.AddN(ns, n)
		ns = int64(metrics.Bucket(lat))
	case metrics.NotSent: // nothing was sent: no latency
		ns = 0
	default:
		c.failed.AddN(ns, n)
		ns = 0
	}
	c.counts[value{ns, ek}] += n
}

// merge adds o into c.
func (c *cell) merge(o *cell) {
	for v, n := range o.counts {
		c.counts[v] += n
	}
	c.ok.Merge(o.ok)
	c.failed.Merge(o.failed)
	c.bytes += o.bytes
}

// stats are the cell's statistics: its counts', with its exact moments;
// outs is room for its outcomes, returned for the next cell.
func (c *cell) stats(outs []metrics.Outcome) (*metrics.Stats, []metrics.Outcome) {
	outs = outs[:0]
	for v, n := range c.counts {
		outs = append(outs, metrics.Outcome{Latency: time.Duration(v.ns), Kind: v.ek, N: n})
	}
	s := metrics.FromCounts(outs, c.bytes)
	s.OK, s.Failed = c.ok, c.failed
	return s, outs
}

// scenario is what a scenario's samples say of it: its threads (its VUs)
// and its span.
type scenario struct {
	threads     map[string]struct{}
	first, last time.Time
}

// stage is a stage of the run being built: a thread group, or thread
// groups that ran at the same time.
type stage struct {
	ph   *metrics.Phase
	ops  map[metrics.Key]int
	t0   time.Time         // intervals start at t0 + k × interval
	open map[int64][]*cell // by interval index, by operation
	done int64             // intervals below this one are written
	sink metrics.Sink      // where its intervals are written
	// totals are each operation's counts by value over the stage.
	totals     []*cell
	scenarios  map[string]*scenario
	first, end time.Time // the earliest start and the latest end read
	written    int
}

// builder places samples in stages and intervals, and writes each
// interval once no sample can come for it any more.
//
// A run whose interval is sized to it (sizing) learns its length as it is
// read: until its samples span sizeAfter (or the file ends), its cells
// are of a grain that divides every interval its longest stage so far
// could size (metrics.IntervalGrain: 50 ms while that stage is under
// 7.5 s, 10 s once it is 5 minutes), coarsened as the stage grows, and
// nothing is written; then the interval is sized, the cells merged into
// it, and intervals are written as for a given one. While it learns, a
// stage holds at most about 150 cells an operation.
type builder struct {
	o             Options
	stages        []*stage
	byScen        map[string]*stage
	newest        time.Time // the latest start read
	end           time.Time // the latest end read
	sink          func(*metrics.Phase) metrics.Sink
	outs          []metrics.Outcome
	samples, late int64
	// sizing is true while the interval is being learnt (o.Interval is
	// then the cells' grain); longest is the longest stage so far.
	sizing  bool
	longest time.Duration
}

// sizeAfter is how much of a run is read before its interval is sized:
// a stage that long gets the longest interval anyway.
const sizeAfter = metrics.SizedIntervals * metrics.MaxSizedInterval

func newBuilder(o Options, sink func(*metrics.Phase) metrics.Sink, sized bool) *builder {
	b := &builder{o: o, byScen: map[string]*stage{}, sink: sink, sizing: sized}
	if sized {
		b.o.Interval = metrics.IntervalGrain(metrics.MinInterval)
	}
	return b
}

// grow notes a stage's span, coarsening the cells of a run being sized
// as its longest stage allows.
func (b *builder) grow(st *stage) {
	if !b.sizing {
		return
	}
	if d := st.end.Sub(st.first); d > b.longest {
		b.longest = d
		if g := metrics.IntervalGrain(metrics.SizedInterval(d)); g > b.o.Interval {
			b.regrid(g)
		}
	}
}

// size ends the sizing of the interval: its longest stage's
// (metrics.SizedInterval), its cells merged into it.
func (b *builder) size() {
	if b.sizing {
		b.regrid(metrics.SizedInterval(b.longest))
		b.sizing = false
	}
}

// regrid merges every stage's open cells into cells of length to, a
// multiple of their own (b.o.Interval), which it becomes. Cells start at
// their stage's first sample read plus whole cells, so each falls in one
// of the new ones.
func (b *builder) regrid(to time.Duration) {
	from := b.o.Interval
	backFrom, backTo := int64((b.o.Lag+from-1)/from), int64((b.o.Lag+to-1)/to)
	ratio := int64(to / from)
	for _, st := range b.stages {
		origin := st.t0.Add(time.Duration(backFrom) * from)
		open := make(map[int64][]*cell, len(st.open)/int(ratio)+1)
		for k, cells := range st.open {
			k2 := floorDiv(k-backFrom, ratio) + backTo
			dst := open[k2]
			if len(dst) < len(cells) {
				dst = append(dst, make([]*cell, len(cells)-len(dst))...)
			}
			for i, c := range cells {
				switch {
				case c == nil:
				case dst[i] == nil:
					dst[i] = c
				default:
					dst[i].merge(c)
				}
			}
			open[k2] = dst
		}
		st.open, st.t0 = open, origin.Add(-time.Duration(backTo)*to)
	}
	b.o.Interval = to
}

// floorDiv is a / b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// minStage is the shortest stage: scenarios that start within it of a
// stage's start belong to it, even when the first samples read of the
// stage all ended before (the tools start their scenarios at one moment,
// and write samples as they end; a sweep's steps last seconds).
const minStage = 100 * time.Millisecond

// stageOf is the stage of a sample's scenario. A scenario met for the
// first time after every sample read so far had ended, and at least
// minStage after the stage's start, starts a stage of its own: JMeter's
// thread groups run one after another (a sweep of threads as consecutive
// thread groups), k6's scenarios after their startTime; one that starts
// while others go joins theirs.
func (b *builder) stageOf(s Sample) *stage {
	if st := b.byScen[s.Scenario]; st != nil {
		return st
	}
	if len(b.stages) == 0 || !s.Start.Before(b.end) && s.Start.Sub(b.stages[len(b.stages)-1].first) >= minStage {
		back := (b.o.Lag + b.o.Interval - 1) / b.o.Interval
		st := &stage{ph: &metrics.Phase{Index: len(b.stages) + 1, Spans: map[string]time.Duration{}},
			ops: map[metrics.Key]int{}, open: map[int64][]*cell{}, scenarios: map[string]*scenario{},
			t0: s.Start.Add(-back * b.o.Interval), first: s.Start, end: s.Start}
		st.sink = b.sink(st.ph)
		b.stages = append(b.stages, st)
	}
	st := b.stages[len(b.stages)-1]
	b.byScen[s.Scenario] = st
	return st
}

func (b *builder) add(s Sample) error {
	st := b.stageOf(s)
	k := metrics.Key{Scenario: s.Scenario, Name: s.Name, Kind: s.Kind}
	i, ok := st.ops[k]
	if !ok {
		i = len(st.ph.Ops)
		st.ops[k] = i
		st.ph.Ops = append(st.ph.Ops, metrics.Op{Scenario: s.Scenario, Name: s.Name, Kind: s.Kind})
		st.ph.Totals = append(st.ph.Totals, metrics.NewStats())
		st.totals = append(st.totals, newCell())
	}
	n := max(s.Count, 1)
	ivl := int64(s.Start.Sub(st.t0) / b.o.Interval)
	if ivl < st.done { // later than the lag allows: the oldest interval not yet written
		ivl = st.done
		b.late += n
	}
	cells := st.open[ivl]
	if len(cells) <= i {
		cells = append(cells, make([]*cell, i+1-len(cells))...)
		st.open[ivl] = cells
	}
	c := cells[i]
	if c == nil {
		c = newCell()
		cells[i] = c
	}
	c.add(s.Elapsed, s.Err, n)
	c.bytes += s.Bytes
	b.samples += n
	end := s.Start.Add(s.Elapsed)
	if s.Until.After(end) {
		end = s.Until
	}
	sc := st.scenarios[s.Scenario]
	if sc == nil {
		sc = &scenario{threads: map[string]struct{}{}, first: s.Start, last: end}
		st.scenarios[s.Scenario] = sc
	}
	if _, ok := sc.threads[s.Thread]; !ok && s.Thread != "" {
		sc.threads[s.Thread] = struct{}{}
	}
	if s.Start.Before(sc.first) {
		sc.first = s.Start
		if s.Start.Before(st.first) {
			st.first = s.Start
		}
	}
	if end.After(sc.last) {
		sc.last = end
	}
	if end.After(st.end) {
		st.end = end
	}
	if end.After(b.end) {
		b.end = end
	}
	b.grow(st)
	if s.Start.After(b.newest) {
		b.newest = s.Start
		if b.sizing && b.newest.Sub(b.stages[0].first) >= sizeAfter {
			b.size()
		}
		if b.sizing {
			return nil
		}
		// Write what no sample can come for any more.
		for _, st := range b.stages {
			if err := b.flush(st, int64(b.newest.Add(-b.o.Lag).Sub(st.t0)/b.o.Interval)-1); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush writes a stage's intervals up to upTo.
func (b *builder) flush(st *stage, upTo int64) error {
	if upTo < st.done {
		return nil
	}
	keys := make([]int64, 0, len(st.open))
	for k := range st.open {
		if k <= upTo {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := b.writeInterval(st, k); err != nil {
			return err
		}
	}
	st.done = upTo + 1
	return nil
}

// writeInterval writes interval k of a stage, and counts it in the
// stage's totals. The first interval starts at the stage's first sample,
// and the last ends at its last sample's end, as a run's do.
func (b *builder) writeInterval(st *stage, k int64) error {
	cells := st.open[k]
	delete(st.open, k)
	start := st.t0.Add(time.Duration(k) * b.o.Interval)
	end := start.Add(b.o.Interval)
	if st.written == 0 && st.first.After(start) {
		start = st.first
	}
	if st.end.Before(end) && st.end.After(start) {
		end = st.end
	}
	iv := &metrics.Interval{Index: st.written, Start: start, End: end, Ops: make([]*metrics.Stats, len(cells)), Partial: end.Sub(start) < b.o.Interval}
	st.written++
	// The interval's statistics are made from its counts by value, its
	// histograms only as the digests written.
	for i, c := range cells {
		if c == nil {
			continue
		}
		st.totals[i].merge(c)
		iv.Ops[i], b.outs = c.stats(b.outs)
	}
	return st.sink.Interval(iv)
}

// finish writes the intervals left and makes the run.
func (b *builder) finish(id, name, source string) (*metrics.Run, error) {
	b.size()
	run := &metrics.Run{ID: id, PlanName: name, PlanSource: []byte(source), Interval: b.o.Interval, Status: metrics.StatusCompleted}
	for _, st := range b.stages {
		if err := b.flush(st, int64(1)<<62); err != nil {
			return nil, err
		}
		for i, c := range st.totals {
			vals := slices.SortedFunc(maps.Keys(c.counts), func(a, b value) int { return cmp.Or(cmp.Compare(a.ek, b.ek), cmp.Compare(a.ns, b.ns)) })
			for j, v := range vals {
				bytes := int64(0)
				if j == 0 {
					bytes = c.bytes
				}
				st.ph.Totals[i].AddN(time.Duration(v.ns), v.ek, bytes, c.counts[v])
			}
			st.ph.Totals[i].OK, st.ph.Totals[i].Failed = c.ok, c.failed
		}
		ph := st.ph
		var names []string
		for _, n := range slices.Sorted(maps.Keys(st.scenarios)) {
			sc := st.scenarios[n]
			ph.Spans[n] = sc.last.Sub(sc.first)
			ph.Load = append(ph.Load, metrics.Load{Scenario: n, VUs: len(sc.threads)})
			if len(sc.threads) > 0 {
				n = fmt.Sprintf("%s=%d", n, len(sc.threads))
			}
			names = append(names, n)
		}
		ph.Name = strings.Join(names, ",") // its thread groups and their threads
		if len(b.stages) == 1 {
			ph.Name = "all" // as a perflab run without a sweep: compared with one stage by stage
		}
		ph.Start, ph.End = st.first, st.end
		run.Stages = append(run.Stages, ph)
		if run.Start.IsZero() || ph.Start.Before(run.Start) {
			run.Start = ph.Start
		}
		if ph.End.After(run.End) {
			run.End = ph.End
		}
	}
	return run, nil
}

// notes say what the placing of samples changed.
func (b *builder) notes() []string {
	var out []string
	if b.late > 0 {
		out = append(out, fmt.Sprintf("%d samples started more than %v before a sample read earlier: each is counted in the first interval not yet written, after its own (a longer --lag keeps intervals open longer)", b.late, b.o.Lag))
	}
	return out
}
