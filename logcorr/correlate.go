package logcorr

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/inputfile"
)

// Source is a set of log files and the pattern that finds requests in them.
type Source struct {
	// Files are paths or globs (path/filepath.Match syntax, relative to the
	// working directory), read in the order given, a glob's files in
	// lexical order. Start and end lines pair across the files of a
	// source, so list rotated logs oldest first. Files ending in .gz are
	// decompressed.
	Files   []string `yaml:"files" json:"files"`
	Pattern `yaml:",inline"`
}

// Result is the correlation of perflab's requests with the service's logs.
type Result struct {
	Ops []OpResult `json:"ops"` // in the order operations first appear in the requests
	// Lines is the number of log lines read.
	Lines int64 `json:"lines"`
	// LogRecords counts the complete records found in the logs (a matching
	// line, or an end line paired with its start); LogRecordsUnmatched
	// those whose id is no request's. LogRecords is the sum of Matched
	// and Duplicates over Ops, plus LogRecordsUnmatched.
	LogRecords          int `json:"log_records"`
	LogRecordsUnmatched int `json:"log_records_unmatched"`
	// Duplicates counts records for requests that already had one.
	Duplicates int `json:"duplicates"`
	// UnpairedStarts are start lines of requests never followed by their
	// end line; UnpairedEnds end lines of requests with no start line
	// pending. Neither matches a request.
	UnpairedStarts int `json:"unpaired_starts"`
	UnpairedEnds   int `json:"unpaired_ends"`
	// ErrorCount counts the lines of requests that matched a pattern but
	// could not be read (a timestamp that does not parse, an end before its
	// start, a line too long); Errors describes the first few, as
	// FILE:LINE: what.
	ErrorCount int      `json:"error_count"`
	Errors     []string `json:"errors,omitempty"`
}

// OpResult is the correlation of one operation's requests.
type OpResult struct {
	Operation  string `json:"operation"`
	Requests   int    `json:"requests"`
	Matched    int    `json:"matched"`    // requests with a record in the logs
	Unmatched  int    `json:"unmatched"`  // requests without one
	Failed     int    `json:"failed"`     // requests perflab counted as failed (ok false)
	Duplicates int    `json:"duplicates"` // records beyond the first for a request
	// Processing is the service's time from its logs, matched requests only.
	Processing Stats `json:"processing"`
	// EndToEndMatched and EndToEndUnmatched are perflab's times (End -
	// Start) of the matched and of the unmatched requests.
	EndToEndMatched   Stats `json:"end_to_end_matched"`
	EndToEndUnmatched Stats `json:"end_to_end_unmatched"`
	// Overhead is end-to-end minus processing, per matched request: the
	// time outside the logged processing (network, queues, the client).
	Overhead Stats `json:"overhead"`
}

// maxErrors is how many error lines a Result keeps.
const maxErrors = 10

// maxLine is the longest log line read; longer lines are skipped and
// reported.
const maxLine = 4 << 20

// Correlate finds each request's processing in the sources' logs, by id,
// and summarizes per operation. Sources are read in order, each file line
// by line; a request's first complete record wins and later ones count as
// duplicates (requests sharing an id take that id's records in turn). It
// fails before reading any log on a bad pattern, a glob that matches no
// file or a file that does not exist, and on a file it cannot read; lines
// it cannot make sense of are counted in the Result instead.
func Correlate(reqs []Request, sources []Source) (*Result, error) {
	if len(sources) == 0 {
		return nil, errors.New("no log sources")
	}
	type job struct {
		c     *compiled
		files []string
	}
	jobs := make([]job, len(sources))
	for i, src := range sources {
		c, err := src.Pattern.compile()
		if err != nil {
			return nil, fmt.Errorf("source %d: %w", i+1, err)
		}
		files, err := expand(src.Files)
		if err != nil {
			return nil, fmt.Errorf("source %d: %w", i+1, err)
		}
		jobs[i] = job{c, files}
	}
	s := newState(reqs)
	for _, j := range jobs {
		s.c = j.c
		s.pend = map[int32][]time.Time{}
		for _, f := range j.files {
			if err := s.scanFile(f); err != nil {
				return nil, err
			}
		}
		for _, q := range s.pend {
			s.res.UnpairedStarts += len(q)
		}
	}
	return s.result(reqs), nil
}

// expand resolves globs, keeping each file once, and checks that the
// files exist.
func expand(patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, errors.New("no log files")
	}
	var out []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			add(p)
			continue
		}
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("glob %q: %v", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("glob %q matches no files", p)
		}
		sort.Strings(m)
		for _, f := range m {
			add(f)
		}
	}
	for _, f := range out {
		// A log is read to its end: a device (/dev/zero) or a pipe has none.
		if _, err := inputfile.Stat(f); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// state is what a correlation holds while it reads: the ids to look for,
// each request's record, and the current source's pending starts.
type state struct {
	head    map[string]int32 // id → its first request
	next    []int32          // the next request with the same id, or -1
	opOf    []int32          // request → index in ops
	ops     []string
	matched []bool
	proc    []time.Duration
	dups    []int // per op

	c    *compiled
	pend map[int32][]time.Time // head request → start times, oldest first
	file string
	line int
	res  Result
}

func newState(reqs []Request) *state {
	s := &state{
		head:    make(map[string]int32, len(reqs)),
		next:    make([]int32, len(reqs)),
		opOf:    make([]int32, len(reqs)),
		matched: make([]bool, len(reqs)),
		proc:    make([]time.Duration, len(reqs)),
	}
	opIndex := map[string]int32{}
	tail := make([]int32, len(reqs)) // head → the last request with its id
	for i, r := range reqs {
		oi, ok := opIndex[r.Operation]
		if !ok {
			oi = int32(len(s.ops))
			opIndex[r.Operation] = oi
			s.ops = append(s.ops, r.Operation)
		}
		s.opOf[i] = oi
		s.next[i] = -1
		if r.ID == "" {
			continue
		}
		if h, ok := s.head[r.ID]; ok {
			s.next[tail[h]] = int32(i)
			tail[h] = int32(i)
		} else {
			s.head[r.ID] = int32(i)
			tail[i] = int32(i)
		}
	}
	s.dups = make([]int, len(s.ops))
	return s
}

func (s *state) errorf(format string, args ...any) {
	s.res.ErrorCount++
	if len(s.res.Errors) < maxErrors {
		s.res.Errors = append(s.res.Errors, fmt.Sprintf("%s:%d: ", s.file, s.line)+fmt.Sprintf(format, args...))
	}
}

// A file is read by one goroutine into batches of lines, matched by
// GOMAXPROCS workers (regexes, id lookups and timestamps: the costly part,
// reading only what does not change while scanning), and the workers'
// events applied in file order by the calling goroutine, so that the
// results do not depend on the scheduling.

const (
	batchBytes = 256 << 10
	batchLines = 4096
)

// batch is consecutive lines of a file and, once matched, their events.
type batch struct {
	buf   []byte
	ends  []int // end of each line in buf; tooLong for a skipped line
	first int   // the number of the line before the first
	out   chan []event
}

const tooLong = -1

type eventKind uint8

const (
	evUnknown eventKind = iota // a record of no request's id
	evDur                      // a record with its processing time d
	evSpan                     // a record from t1 to t2
	evStart                    // a start line at t1
	evEnd                      // an end line at t1
	evEndBad                   // an end line whose time is unreadable (err)
	evError                    // an unreadable line (err)
)

type event struct {
	kind eventKind
	h    int32 // the first request with the id
	line int
	d    time.Duration
	t1   time.Time
	t2   time.Time
	err  string
}

func (s *state) scanFile(path string) error {
	f, err := inputfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *batch, workers)
	order := make(chan *batch, 2*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				b.out <- s.matchBatch(b)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		readErr = readBatches(bufio.NewReaderSize(r, maxLine), func(b *batch) {
			work <- b
			order <- b
		})
	}()
	s.file = path
	lines := 0
	for b := range order {
		for _, ev := range <-b.out {
			s.apply(ev)
		}
		lines = b.first + len(b.ends)
	}
	wg.Wait()
	s.res.Lines += int64(lines)
	if readErr != nil {
		return fmt.Errorf("reading %s: %w", path, readErr)
	}
	return nil
}

// readBatches reads br's lines, without their line ends, into batches.
func readBatches(br *bufio.Reader, send func(*batch)) error {
	n := 0
	b := &batch{}
	flush := func() {
		if len(b.ends) > 0 {
			b.out = make(chan []event, 1)
			send(b)
			n += len(b.ends)
			b = &batch{first: n, buf: make([]byte, 0, batchBytes+batchBytes/4)}
		}
	}
	b.buf = make([]byte, 0, batchBytes+batchBytes/4)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			b.ends = append(b.ends, tooLong)
		} else if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte{'\n'})
			line = bytes.TrimSuffix(line, []byte{'\r'})
			b.buf = append(b.buf, line...)
			b.ends = append(b.ends, len(b.buf))
		}
		if len(b.buf) >= batchBytes || len(b.ends) >= batchLines {
			flush()
		}
		if err == io.EOF {
			flush()
			return nil
		}
		if err != nil {
			flush()
			return err
		}
	}
}

// matchBatch runs on a worker: it may read s.head and s.c, nothing else.
func (s *state) matchBatch(b *batch) []event {
	var evs []event
	start := 0
	for i, end := range b.ends {
		no := b.first + i + 1
		if end == tooLong {
			evs = append(evs, event{kind: evError, line: no, err: fmt.Sprintf("line longer than %d bytes skipped", maxLine)})
			continue
		}
		line := b.buf[start:end]
		start = end
		var ev event
		if s.c.line != nil {
			ev = s.matchLine(line)
		} else {
			ev = s.matchPair(line)
		}
		if ev.line < 0 {
			continue
		}
		ev.line = no
		evs = append(evs, ev)
	}
	return evs
}

// match runs m on line, nil when it does not match.
func match(m *matcher, line []byte) []int {
	if m.lit != nil && !bytes.Contains(line, m.lit) {
		return nil
	}
	return m.re.FindSubmatchIndex(line)
}

// lookup returns the first request with id, or -1.
func (s *state) lookup(id []byte) int32 {
	if len(id) == 0 {
		return -1
	}
	if h, ok := s.head[string(id)]; ok {
		return h
	}
	return -1
}

// none is the event of a line that is not a record.
var none = event{line: -1}

func (s *state) matchLine(line []byte) event {
	m := s.c.line
	loc := match(m, line)
	if loc == nil {
		return none
	}
	h := s.lookup(group(line, loc, m.id))
	if h < 0 {
		return event{kind: evUnknown}
	}
	if m.dur >= 0 {
		d, err := parseDuration(group(line, loc, m.dur), s.c.unit)
		if err != nil {
			return event{kind: evError, err: err.Error()}
		}
		return event{kind: evDur, h: h, d: d}
	}
	start, err := s.c.time.parse(group(line, loc, m.start))
	if err != nil {
		return event{kind: evError, err: "start: " + err.Error()}
	}
	end, err := s.c.time.parse(group(line, loc, m.end))
	if err != nil {
		return event{kind: evError, err: "end: " + err.Error()}
	}
	return event{kind: evSpan, h: h, t1: start, t2: end}
}

func (s *state) matchPair(line []byte) event {
	if loc := match(s.c.start, line); loc != nil {
		m := s.c.start
		h := s.lookup(group(line, loc, m.id))
		if h < 0 {
			return none
		}
		ts, err := s.c.time.parse(group(line, loc, m.ts))
		if err != nil {
			return event{kind: evError, err: "start: " + err.Error()}
		}
		return event{kind: evStart, h: h, t1: ts}
	}
	m := s.c.end
	loc := match(m, line)
	if loc == nil {
		return none
	}
	h := s.lookup(group(line, loc, m.id))
	if h < 0 {
		return event{kind: evUnknown}
	}
	ts, err := s.c.time.parse(group(line, loc, m.ts))
	if err != nil {
		return event{kind: evEndBad, h: h, err: "end: " + err.Error()}
	}
	return event{kind: evEnd, h: h, t1: ts}
}

// apply takes a worker's event into the results, in file order.
func (s *state) apply(ev event) {
	s.line = ev.line
	switch ev.kind {
	case evUnknown:
		s.res.LogRecords++
		s.res.LogRecordsUnmatched++
	case evDur:
		s.record(ev.h, ev.d)
	case evSpan:
		s.span(ev.h, ev.t1, ev.t2)
	case evStart:
		s.pend[ev.h] = append(s.pend[ev.h], ev.t1)
	case evEnd, evEndBad:
		q := s.pend[ev.h]
		if len(q) == 0 {
			s.res.UnpairedEnds++
			return
		}
		start := q[0]
		if len(q) == 1 {
			delete(s.pend, ev.h)
		} else {
			s.pend[ev.h] = q[1:]
		}
		if ev.kind == evEndBad {
			s.errorf("%s", ev.err) // its start is dropped: it would pair with the next end
			return
		}
		s.span(ev.h, start, ev.t1)
	case evError:
		s.errorf("%s", ev.err)
	}
}

// span records the processing from start to end.
func (s *state) span(h int32, start, end time.Time) {
	d := end.Sub(start)
	if d < -12*time.Hour && s.c.time.dateless {
		d += 24 * time.Hour // a time of day only: crossed midnight (a small step back is an error)
	}
	if d < 0 {
		s.errorf("end %s is before start %s", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
		return
	}
	s.record(h, d)
}

// record gives a record to the first request with its id that has none.
func (s *state) record(h int32, d time.Duration) {
	s.res.LogRecords++
	for i := h; i >= 0; i = s.next[i] {
		if !s.matched[i] {
			s.matched[i] = true
			s.proc[i] = d
			return
		}
	}
	s.dups[s.opOf[h]]++
	s.res.Duplicates++
}

func (s *state) result(reqs []Request) *Result {
	res := s.res
	type vals struct{ proc, e2eM, e2eU, over []float64 }
	v := make([]vals, len(s.ops))
	res.Ops = make([]OpResult, len(s.ops))
	for i, name := range s.ops {
		res.Ops[i] = OpResult{Operation: name, Duplicates: s.dups[i]}
	}
	for i, r := range reqs {
		oi := s.opOf[i]
		op := &res.Ops[oi]
		op.Requests++
		if !r.OK {
			op.Failed++
		}
		e2e := ms(r.End.Sub(r.Start))
		if s.matched[i] {
			op.Matched++
			p := ms(s.proc[i])
			v[oi].proc = append(v[oi].proc, p)
			v[oi].e2eM = append(v[oi].e2eM, e2e)
			v[oi].over = append(v[oi].over, e2e-p)
		} else {
			op.Unmatched++
			v[oi].e2eU = append(v[oi].e2eU, e2e)
		}
	}
	for i := range res.Ops {
		op := &res.Ops[i]
		op.Processing = newStats(v[i].proc)
		op.EndToEndMatched = newStats(v[i].e2eM)
		op.EndToEndUnmatched = newStats(v[i].e2eU)
		op.Overhead = newStats(v[i].over)
	}
	return &res
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
