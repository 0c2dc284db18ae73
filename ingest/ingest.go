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
	"regexp"
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
	// Interval is the length of the run's intervals (10 s if zero).
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
}

// Run reads every sample of src and writes them as a run directory under
// o.Out, of the tool and file named. Nothing is left under o.Out if it
// fails: the run is written aside and moved in place when whole.
func Run(src Source, tool, file string, o Options, notes []string) (dir string, s *results.Summary, err error) {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
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
	b := newBuilder(first.Start, o)
	id := first.Start.Format("20060102-150405.000") + "-" + strings.Trim(unsafe.ReplaceAllString(o.Name, "-"), "-")
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
	b.write = func(iv *metrics.Interval) error { return w.Sink(b.ph).Interval(iv) }
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

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// value is a count of samples of one latency (in ms, as other tools
// give it, or finer) and outcome.
type value struct {
	ns int64
	ek metrics.ErrKind
}

// cell is an operation's samples in an interval, counted by value: small
// whatever the rate, since other tools time to the millisecond.
type cell struct {
	counts map[value]int64
	bytes  int64
}

// scenario is what a scenario's samples say of it: its threads (its VUs)
// and its span.
type scenario struct {
	threads     map[string]struct{}
	first, last time.Time
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// builder places samples in intervals and writes each interval once no
// sample can come for it any more.
type builder struct {
	o         Options
	t0        time.Time
	ph        *metrics.Phase
	ops       map[metrics.Key]int
	open      map[int64][]*cell // by interval index, by operation
	done      int64             // intervals below this one are written
	newest    time.Time
	write     func(*metrics.Interval) error
	scenarios map[string]*scenario
	samples   int64
	late      int64
	// minStart and maxEnd are the earliest start and the latest end read;
	// the first interval written starts at minStart, the last ends at
	// maxEnd, as a run's first and last intervals do.
	minStart, maxEnd time.Time
	written          int
	// totals are each operation's counts by value over the run; outs is
	// writeInterval's scratch.
	totals []*cell
	outs   []metrics.Outcome
}

func newBuilder(first time.Time, o Options) *builder {
	// Intervals are aligned to the first sample read, with room before it
	// for the samples that started before it, up to the lag.
	back := (o.Lag + o.Interval - 1) / o.Interval
	t0 := first.Add(-back * o.Interval)
	return &builder{o: o, t0: t0, ph: &metrics.Phase{Index: 1, Name: "all", Spans: map[string]time.Duration{}},
		ops: map[metrics.Key]int{}, open: map[int64][]*cell{}, scenarios: map[string]*scenario{},
		newest: first, minStart: first, maxEnd: first}
}

func (b *builder) add(s Sample) error {
	k := metrics.Key{Scenario: s.Scenario, Name: s.Name, Kind: s.Kind}
	i, ok := b.ops[k]
	if !ok {
		i = len(b.ph.Ops)
		b.ops[k] = i
		b.ph.Ops = append(b.ph.Ops, metrics.Op{Scenario: s.Scenario, Name: s.Name, Kind: s.Kind})
		b.ph.Totals = append(b.ph.Totals, metrics.NewStats())
	}
	ivl := int64(s.Start.Sub(b.t0) / b.o.Interval)
	if ivl < b.done { // later than the lag allows: the oldest interval not yet written
		ivl = b.done
		b.late++
	}
	cells := b.open[ivl]
	if len(cells) <= i {
		cells = append(cells, make([]*cell, i+1-len(cells))...)
		b.open[ivl] = cells
	}
	c := cells[i]
	if c == nil {
		c = &cell{counts: map[value]int64{}}
		cells[i] = c
	}
	c.counts[value{int64(s.Elapsed), s.Err}]++
	c.bytes += s.Bytes
	b.samples++
	end := s.Start.Add(s.Elapsed)
	sc := b.scenarios[s.Scenario]
	if sc == nil {
		sc = &scenario{threads: map[string]struct{}{}, first: s.Start, last: end}
		b.scenarios[s.Scenario] = sc
	}
	if _, ok := sc.threads[s.Thread]; !ok && s.Thread != "" {
		sc.threads[s.Thread] = struct{}{}
	}
	if s.Start.Before(sc.first) {
		sc.first = s.Start
		b.minStart = minTime(b.minStart, s.Start)
	}
	if end.After(sc.last) {
		sc.last = end
		if end.After(b.maxEnd) {
			b.maxEnd = end
		}
	}
	if s.Start.After(b.newest) {
		b.newest = s.Start
		// Write what no sample can come for any more.
		return b.flush(int64(b.newest.Add(-b.o.Lag).Sub(b.t0)/b.o.Interval) - 1)
	}
	return nil
}

// flush writes the intervals up to upTo.
func (b *builder) flush(upTo int64) error {
	if upTo < b.done {
		return nil
	}
	keys := make([]int64, 0, len(b.open))
	for k := range b.open {
		if k <= upTo {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := b.writeInterval(k); err != nil {
			return err
		}
	}
	b.done = upTo + 1
	return nil
}

// writeInterval writes interval k and adds it to the totals.
func (b *builder) writeInterval(k int64) error {
	cells := b.open[k]
	delete(b.open, k)
	start := b.t0.Add(time.Duration(k) * b.o.Interval)
	end := start.Add(b.o.Interval)
	if b.written == 0 && b.minStart.After(start) {
		start = b.minStart
	}
	if b.maxEnd.Before(end) && b.maxEnd.After(start) {
		end = b.maxEnd // the last interval
	}
	iv := &metrics.Interval{Index: b.written, Start: start, End: end, Ops: make([]*metrics.Stats, len(cells))}
	b.written++
	// The interval's statistics are made from its counts by value, its
	// histograms only as the digests written; the totals keep counts by
	// value too, made into histograms at the end.
	for len(b.totals) < len(cells) {
		b.totals = append(b.totals, &cell{counts: map[value]int64{}})
	}
	for i, c := range cells {
		if c == nil {
			continue
		}
		b.outs = b.outs[:0]
		for v, n := range c.counts {
			b.outs = append(b.outs, metrics.Outcome{Latency: time.Duration(v.ns), Kind: v.ek, N: n})
			b.totals[i].counts[v] += n
		}
		b.totals[i].bytes += c.bytes
		iv.Ops[i] = metrics.FromCounts(b.outs, c.bytes)
	}
	if b.write != nil {
		return b.write(iv)
	}
	return nil
}

// finish writes the intervals left and makes the run.
func (b *builder) finish(id, name, source string) (*metrics.Run, error) {
	if err := b.flush(int64(1) << 62); err != nil {
		return nil, err
	}
	for i, c := range b.totals {
		vals := slices.SortedFunc(maps.Keys(c.counts), func(a, b value) int { return cmp.Or(cmp.Compare(a.ek, b.ek), cmp.Compare(a.ns, b.ns)) })
		for j, v := range vals {
			bytes := int64(0)
			if j == 0 {
				bytes = c.bytes
			}
			b.ph.Totals[i].AddN(time.Duration(v.ns), v.ek, bytes, c.counts[v])
		}
	}
	start, end := b.minStart, b.maxEnd
	for _, name := range slices.Sorted(maps.Keys(b.scenarios)) {
		sc := b.scenarios[name]
		b.ph.Spans[name] = sc.last.Sub(sc.first)
		b.ph.Load = append(b.ph.Load, metrics.Load{Scenario: name, VUs: len(sc.threads)})
	}
	b.ph.Start, b.ph.End = start, end
	return &metrics.Run{ID: id, PlanName: name, PlanSource: []byte(source), Interval: b.o.Interval,
		Start: start, End: end, Status: metrics.StatusCompleted, Stages: []*metrics.Phase{b.ph}}, nil
}

// notes say what the placing of samples changed.
func (b *builder) notes() []string {
	var out []string
	if b.late > 0 {
		out = append(out, fmt.Sprintf("%d samples started more than %v before a sample read earlier: each is counted in the first interval not yet written, after its own (a longer --lag keeps intervals open longer)", b.late, b.o.Lag))
	}
	return out
}
