package results

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/csvcell"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// IntervalData is one interval histogram of an operation, kept compressed:
// a day of 10 s intervals for 20 operations is 172,800 histograms, far too
// many to hold decoded. Decode one at a time with Histogram.
type IntervalData struct {
	StartMs, EndMs int64
	// Count is every operation of the interval, failed ones included, and
	// Errors the failed ones; the histogram holds the successful ones only.
	// Count is -1 when unknown (a run directory without intervals.csv).
	Count, Errors int64
	// PeakVUs is, on a scenario's own row, the most VUs in an iteration
	// at once during the interval (metrics.Interval.PeakVUs; the sum of
	// the parts' in a merged run); -1 when unknown (another operation, a
	// run before perflab kept it).
	PeakVUs int64
	// Bytes is the bytes received in response bodies during the
	// interval (metrics.Stats.Bytes); -1 when unknown (a run before
	// perflab kept it).
	Bytes int64
	// Failures are the interval's failures by kind and message
	// (metrics.Stats.Failures: an entry without a message is a kind's
	// failures counted without their words); nil when none failed, or
	// when not known (a run before perflab kept them: Errors > 0).
	Failures []metrics.ErrorMessage
	enc      string // HdrHistogram V2 compressed, base64
	// q are the histogram's quantiles where they were stored beside it
	// (the history, intervals.csv); nil: decode it.
	q *metrics.Quantiles
}

// NewIntervalData wraps an encoded histogram with its counts.
func NewIntervalData(startMs, endMs, count, errors int64, encoded string) *IntervalData {
	return &IntervalData{StartMs: startMs, EndMs: endMs, Count: count, Errors: errors, PeakVUs: -1, Bytes: -1, enc: encoded}
}

// NewIntervalQuantiles is NewIntervalData with the histogram's
// quantiles, as they were stored beside it (nil: not known).
func NewIntervalQuantiles(startMs, endMs, count, errors int64, encoded string, q *metrics.Quantiles) *IntervalData {
	return &IntervalData{StartMs: startMs, EndMs: endMs, Count: count, Errors: errors, PeakVUs: -1, Bytes: -1, enc: encoded, q: q}
}

// Quantiles are the interval's main percentiles and count of successful
// operations: as stored beside its histogram, or taken from it. Charts
// over a long run read these rather than decode every interval.
func (d *IntervalData) Quantiles() (metrics.Quantiles, error) {
	if d.q != nil {
		return *d.q, nil
	}
	h, err := d.Histogram()
	if err != nil {
		return metrics.Quantiles{}, err
	}
	return metrics.QuantilesOf(h), nil
}

// Encoded is the interval's histogram as the log holds it: HdrHistogram
// V2 compressed, in base64.
func (d *IntervalData) Encoded() string { return d.enc }

// Histogram decodes the interval's histogram into a sparse (packed)
// histogram: an interval holds a few hundred distinct values at most, and
// decoding into a dense one would allocate its whole counts array each time.
// Merge it into a dense accumulator with MergeInto.
func (d *IntervalData) Histogram() (*hdr.PackedHistogram, error) {
	return metrics.DecodePacked([]byte(d.enc))
}

// readHistogramLog reads an HdrHistogram interval log into compressed
// intervals by tag, without decoding them. It follows the log format's
// BaseTime/StartTime headers, as HdrHistogram's own readers do.
func readHistogramLog(r io.Reader) (map[string][]*IntervalData, error) {
	out := map[string][]*IntervalData{}
	var base, start float64
	var haveBase bool
	lists := map[string]*[]*IntervalData{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	// A line is read in place: what an interval keeps is its encoding
	// alone, a string of its own, and its tag is the map's key, made once
	// (a long run's log has hundreds of thousands of lines).
	for sc.Scan() {
		line++
		text := sc.Bytes()
		switch {
		case len(text) == 0:
			continue
		case bytes.HasPrefix(text, []byte("#[BaseTime: ")):
			v, err := strconv.ParseFloat(firstField(string(text[len("#[BaseTime: "):])), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			base, haveBase = v, true
			continue
		case bytes.HasPrefix(text, []byte("#[StartTime: ")):
			v, err := strconv.ParseFloat(firstField(string(text[len("#[StartTime: "):])), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			start = v
			continue
		case text[0] == '#', bytes.HasPrefix(text, []byte(`"StartTimestamp"`)):
			continue
		}
		var tag []byte
		if bytes.HasPrefix(text, []byte("Tag=")) {
			i := bytes.IndexByte(text, ',')
			if i < 0 {
				return nil, fmt.Errorf("line %d: malformed tag", line)
			}
			tag, text = text[4:i], text[i+1:]
		}
		tsB, rest, ok1 := bytes.Cut(text, []byte{','})
		lengthB, rest, ok2 := bytes.Cut(rest, []byte{','})
		_, enc, ok3 := bytes.Cut(rest, []byte{','})
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("line %d: want start,length,max,histogram", line)
		}
		ts, err1 := strconv.ParseFloat(string(tsB), 64)
		length, err2 := strconv.ParseFloat(string(lengthB), 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: malformed timestamps", line)
		}
		b := base
		if !haveBase {
			b = start
		}
		startMs := int64((ts + b) * 1000)
		d := &IntervalData{StartMs: startMs, EndMs: startMs + int64(length*1000+0.5), Count: -1, PeakVUs: -1, Bytes: -1, enc: string(enc)}
		if list, ok := lists[string(tag)]; ok { // a lookup: no string made
			*list = append(*list, d)
		} else {
			lists[string(tag)] = &[]*IntervalData{d}
		}
	}
	for tag, list := range lists {
		out[tag] = *list
	}
	return out, sc.Err()
}

// IntervalsCSV is the run directory file with every operation's counts and
// main percentiles per interval, for spreadsheets and for the error counts
// the histogram log cannot hold.
const IntervalsCSV = "intervals.csv"

// IntervalsHeader is intervals.csv's header. rps is over the interval's
// own length; the percentiles p50_ms to max_ms are of the successful
// operations (OK), ko_count and ko_p50_ms to ko_max_ms of the failed ones
// that were sent (KO; empty when none was); partial is 1 for an interval
// shorter than the run's (cut short by its stage's end), 0 for the others;
// peak_vus, on a scenario's own row (kind scenario), is the most VUs in
// an iteration at once during the interval, empty on the other rows;
// bytes_received the bytes of the response bodies received during the
// interval.
var IntervalsHeader = []string{"stage", "scenario", "operation", "kind", "interval", "start_ms", "end_ms", "count", "errors", "rps", "p50_ms", "p95_ms", "p99_ms", "max_ms", "partial",
	"ko_count", "ko_p50_ms", "ko_p95_ms", "ko_p99_ms", "ko_max_ms", "peak_vus", "bytes_received"}

// peakVUsCol and bytesCol are intervals.csv's columns of peak_vus and
// bytes_received.
const (
	peakVUsCol = 20
	bytesCol   = 21
)

// WithBytes sets a row of intervals.csv's bytes_received: bytes when
// known (not negative).
func WithBytes(row []string, bytes int64) []string {
	if bytes >= 0 {
		row[bytesCol] = strconv.FormatInt(bytes, 10)
	}
	return row
}

// WithPeakVUs sets a row of intervals.csv's peak_vus: vus when known (not
// negative).
func WithPeakVUs(row []string, vus int64) []string {
	if vus >= 0 {
		row[peakVUsCol] = strconv.FormatInt(vus, 10)
	}
	return row
}

// IntervalRow is one line of intervals.csv, of the histograms of the
// successful operations (h) and of the failed ones (ko).
func IntervalRow(stage int, scenario, operation string, kind metrics.Kind, ivl int, startMs, endMs, count, errors int64, h metrics.Percentiler, ko metrics.Quantiles, partial bool) []string {
	return QuantilesRow(stage, scenario, operation, kind, ivl, startMs, endMs, count, errors, metrics.QuantilesOf(h), ko, partial)
}

// QuantilesRow is IntervalRow of the histograms' quantiles.
func QuantilesRow(stage int, scenario, operation string, kind metrics.Kind, ivl int, startMs, endMs, count, errors int64, q, ko metrics.Quantiles, partial bool) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	row := []string{strconv.Itoa(stage), csvcell.Escape(scenario), csvcell.Escape(operation), string(kind), strconv.Itoa(ivl), strconv.FormatInt(startMs, 10), strconv.FormatInt(endMs, 10),
		strconv.FormatInt(count, 10), strconv.FormatInt(errors, 10), "", "", "", "", "", "0", "0", "", "", "", "", "", ""}
	if secs := float64(endMs-startMs) / 1e3; secs > 0 {
		row[9] = f(float64(count) / secs)
	}
	quantiles := func(at int, q metrics.Quantiles) {
		if q.N > 0 {
			row[at], row[at+1], row[at+2], row[at+3] = f(float64(q.P50)/1e3), f(float64(q.P95)/1e3), f(float64(q.P99)/1e3), f(float64(q.Max)/1e3)
		}
	}
	quantiles(10, q)
	if partial {
		row[14] = "1"
	}
	row[15] = strconv.FormatInt(ko.N, 10)
	quantiles(16, ko)
	return row
}

// FailedTag is the tag suffix, in latency.hlog, of the histogram of an
// operation's failed operations (KO) that were sent, beside the successful
// ones' (TAG): in the intervals that had some.
const FailedTag = "/.failed"

// FailedOf is an operation's interval histograms of failed operations in
// a stage (those intervals that had some).
func (rd *Run) FailedOf(stage int, op Operation) []*IntervalData {
	return rd.Intervals[StageTag(stage, op.Scenario, op.Name, op.Kind)+FailedTag]
}

// FailedQuantilesAt are the quantiles of an operation's failed operations
// in its interval of a stage that starts at startMs: none when it had
// none.
func (rd *Run) FailedQuantilesAt(stage int, op Operation, startMs int64) (metrics.Quantiles, error) {
	if d := findInterval(rd.FailedOf(stage, op), startMs); d != nil {
		return d.Quantiles()
	}
	return metrics.Quantiles{}, nil
}

// Partial reports whether the interval is shorter than nominal, the run's
// interval (Summary.IntervalLength): cut short by its stage's end, or by
// its start (another tool's results). Its counts are whole, its rate is
// over its own length, but its percentiles are of fewer requests, and
// other ones (those still in flight at the end of the load), than a whole
// interval's: the charts draw it apart from their lines. Lengths are
// kept in milliseconds: one within a millisecond of nominal is whole. No
// interval is partial when nominal is not known (0).
func (d *IntervalData) Partial(nominal time.Duration) bool {
	return nominal > 0 && time.Duration(d.EndMs-d.StartMs)*time.Millisecond < nominal-time.Millisecond
}

// Seconds is the interval's own length, in seconds.
func (d *IntervalData) Seconds() float64 { return float64(d.EndMs-d.StartMs) / 1e3 }

// IntervalStart is where an interval of a stage starts: the Index-th of
// stage Phase, at StartMs.
type IntervalStart struct {
	Phase, Index int
	StartMs      int64
}

// InferInterval is the interval of a run that has not said it (a run
// still going, or killed before its summary): a stage's interval k starts
// k intervals after its first, as perflab cuts them, so the spacing of a
// stage's first and last starts gives it. 0 when no stage has two
// intervals.
func InferInterval(starts []IntervalStart) time.Duration {
	first, last := map[int]IntervalStart{}, map[int]IntervalStart{}
	for _, s := range starts {
		if f, ok := first[s.Phase]; !ok || s.Index < f.Index {
			first[s.Phase] = s
		}
		if l, ok := last[s.Phase]; !ok || s.Index > l.Index {
			last[s.Phase] = s
		}
	}
	var best time.Duration
	span := 0
	for ph, f := range first {
		l := last[ph]
		if n := l.Index - f.Index; n > span && l.StartMs > f.StartMs {
			span = n
			best = time.Duration(math.Round(float64(l.StartMs-f.StartMs)/float64(n))) * time.Millisecond
		}
	}
	return best
}

// readIntervalCounts fills the intervals' counts from intervals.csv, if the
// run directory has one.
func readIntervalCounts(path string, ivs map[string][]*IntervalData) error {
	tags := tagCache{}
	return eachIntervalRow(path, func(r *store.Histogram) {
		if d := findSorted(ivs[tags.of(r.Phase, r.Scenario, r.Operation, r.Kind)], r.Start.UnixMilli()); d != nil {
			d.Count, d.Errors, d.q, d.PeakVUs, d.Bytes = r.Count, r.Errors, r.Quantiles, r.PeakVUs, r.Bytes
		}
	})
}

// findSorted is the interval of list, in order of start, that starts at
// startMs (nil: none), found by bisection: a long run's lists hold
// thousands.
func findSorted(list []*IntervalData, startMs int64) *IntervalData {
	i, ok := slices.BinarySearchFunc(list, startMs, func(d *IntervalData, t int64) int { return cmp.Compare(d.StartMs, t) })
	if !ok {
		return nil
	}
	return list[i]
}

// sortByStart puts each list of ivs in order of start, as a run's log
// has them already.
func sortByStart(ivs map[string][]*IntervalData) {
	byStart := func(a, b *IntervalData) int { return cmp.Compare(a.StartMs, b.StartMs) }
	for _, list := range ivs {
		if !slices.IsSortedFunc(list, byStart) {
			slices.SortStableFunc(list, byStart)
		}
	}
}

// tagCache is StageTag of the rows of a CSV file of a run directory, made
// once for each operation rather than for each row.
type tagCache map[tagKey]string

type tagKey struct {
	phase                     int
	scenario, operation, kind string
}

func (c tagCache) of(phase int, scenario, operation, kind string) string {
	k := tagKey{phase, scenario, operation, kind}
	if t, ok := c[k]; ok {
		return t
	}
	t := StageTag(phase, scenario, operation, metrics.Kind(kind))
	c[tagKey{phase, strings.Clone(scenario), strings.Clone(operation), strings.Clone(kind)}] = t
	return t
}

// readIntervalRows reads intervals.csv (none when there is no such file):
// a row per stage, operation and interval, as the history's rows without
// their histograms (PeakVUs -1 where peak_vus is empty). The last
// row of a run that was killed may be cut short: it is left out.
func readIntervalRows(path string) ([]store.Histogram, error) {
	var out []store.Histogram
	err := eachIntervalRow(path, func(r *store.Histogram) {
		c := *r
		c.Scenario, c.Operation, c.Kind = strings.Clone(r.Scenario), strings.Clone(r.Operation), strings.Clone(r.Kind)
		out = append(out, c)
	})
	return out, err
}

// eachIntervalRow streams the rows of intervals.csv (readIntervalRows) to
// f, one at a time: a long run's file is never held whole. The strings of
// the row f gets are valid only during the call.
func eachIntervalRow(path string, f func(*store.Histogram)) error {
	kinded := false
	var h store.Histogram // the row f gets, made once
	return eachCSVRow(path, func(i int, r []string) error {
		if i == 0 {
			// Files before the kind column: stage,scenario,operation,interval,...
			kinded = len(r) > 3 && r[3] == "kind"
			return nil
		}
		need := 8 // stage,scenario,operation,interval,start_ms,end_ms,count,errors
		if kinded {
			need = 9
		}
		if len(r) < need {
			return nil // a row cut short (a killed run's last)
		}
		kind, cols := metrics.Kind(r[3]), r[4:]
		if !kinded {
			kind, cols = metrics.KindStep, r[3:]
		}
		stage, err1 := strconv.Atoi(r[0])
		ivl, err2 := strconv.Atoi(cols[0])
		start, err3 := strconv.ParseInt(cols[1], 10, 64)
		end, err4 := strconv.ParseInt(cols[2], 10, 64)
		count, err5 := strconv.ParseInt(cols[3], 10, 64)
		errs, err6 := strconv.ParseInt(cols[4], 10, 64)
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			return err
		}
		vus := int64(-1)
		if len(r) > peakVUsCol && r[peakVUsCol] != "" && kinded {
			if v, err := strconv.ParseInt(r[peakVUsCol], 10, 64); err == nil {
				vus = v
			}
		}
		bytes := int64(-1)
		if len(r) > bytesCol && r[bytesCol] != "" && kinded {
			if v, err := strconv.ParseInt(r[bytesCol], 10, 64); err == nil {
				bytes = v
			}
		}
		h = store.Histogram{Phase: stage, Scenario: csvcell.Unescape(r[1]), Operation: csvcell.Unescape(r[2]), Kind: string(kind), Interval: ivl,
			Start: time.UnixMilli(start), End: time.UnixMilli(end), Count: count, Errors: errs, Quantiles: csvQuantiles(count-errs, cols), PeakVUs: vus, Bytes: bytes}
		f(&h)
		return nil
	})
}

// csvQuantiles are the percentiles of a row of intervals.csv (cols from
// its interval column: ..., rps, p50_ms, p95_ms, p99_ms, max_ms), nil
// where the row has none to read; n is its count of successes.
func csvQuantiles(n int64, cols []string) *metrics.Quantiles {
	if len(cols) < 10 {
		return nil
	}
	if n == 0 {
		return &metrics.Quantiles{}
	}
	var us [4]int64
	for i, c := range cols[6:10] {
		ms, err := strconv.ParseFloat(c, 64)
		if err != nil {
			return nil
		}
		us[i] = int64(math.Round(ms * 1e3))
	}
	return &metrics.Quantiles{N: n, P50: us[0], P95: us[1], P99: us[2], Max: us[3]}
}

// eachCSVRow streams a CSV file of a run directory to f a row at a time,
// the header as row 0 (nothing when the run did not write the file); rows
// may differ in length, and r is reused from row to row: f copies what it
// keeps. An error f returns for a row fails the read unless that row is
// the file's last: a killed run's last row may be cut short.
func eachCSVRow(path string, f func(i int, r []string) error) error {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	cr := csv.NewReader(bufio.NewReaderSize(file, 64<<10))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var held error // a row's error, forgiven if it was the last
	for i := 0; ; i++ {
		r, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if held != nil {
			return held
		}
		if err := f(i, r); err != nil {
			held = fmt.Errorf("%s: line %d: %w", path, i+1, err)
		}
	}
}

// OpCount is an interval's count of operations, failed ones included, or
// of successful ones when the counts are unknown.
func (d *IntervalData) OpCount(h metrics.Percentiler) int64 {
	if d.Count >= 0 {
		return d.Count
	}
	return h.TotalCount()
}

// firstField is the first space-separated field of s, "" if none.
func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
