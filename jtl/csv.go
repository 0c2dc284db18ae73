package jtl

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// defaultColumns are the columns of a CSV file JMeter 5 writes with its
// default jmeter.save.saveservice settings, in order: a file without a
// header line must have them.
var defaultColumns = []string{"timeStamp", "elapsed", "label", "responseCode", "responseMessage", "threadName", "dataType",
	"success", "failureMessage", "bytes", "sentBytes", "grpThreads", "allThreads", "URL", "Latency", "IdleTime", "Connect"}

// csvReader reads a CSV result file.
type csvReader struct {
	name string
	o    Options
	r    *lines.CSV
	// col is each field's column, -1 where the file has none.
	col   struct{ ts, elapsed, label, code, msg, thread, success, failure, bytes int }
	first []string // the first record, when it was a sample
	strs  map[string]string
}

func newCSV(r io.Reader, name string, o Options) (*csvReader, error) {
	c := &csvReader{name: name, o: o, r: lines.NewCSV(r), strs: map[string]string{}}
	rec, err := c.r.Read()
	if err != nil {
		return nil, c.fail(err)
	}
	// A tab or semicolon delimited file reads as one field.
	if len(rec) == 1 {
		for _, d := range []rune{'\t', ';', '|'} {
			if strings.ContainsRune(rec[0], d) {
				return nil, &Error{name, 1, fmt.Errorf("fields delimited by %q: perflab reads JMeter's default comma (jmeter.save.saveservice.default_delimiter=,)", d)}
			}
		}
	}
	cols := rec
	if column(rec, "timeStamp") < 0 { // no header line
		if len(rec) != len(defaultColumns) {
			return nil, &Error{name, 1, fmt.Errorf("no header line, and %d columns where JMeter's default has %d (%s): save the file with jmeter.save.saveservice.print_field_names=true",
				len(rec), len(defaultColumns), strings.Join(defaultColumns, ","))}
		}
		cols = defaultColumns
		c.first = append([]string(nil), rec...)
	}
	var missing []string
	for _, f := range []struct {
		p    *int
		name string
		need bool
	}{{&c.col.ts, "timeStamp", true}, {&c.col.elapsed, "elapsed", true}, {&c.col.label, "label", true}, {&c.col.code, "responseCode", false},
		{&c.col.msg, "responseMessage", false}, {&c.col.thread, "threadName", false}, {&c.col.success, "success", true},
		{&c.col.failure, "failureMessage", false}, {&c.col.bytes, "bytes", false}} {
		*f.p = column(cols, f.name)
		if *f.p < 0 && f.need {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, &Error{name, 1, fmt.Errorf("the header line has no %s column: perflab needs timeStamp, elapsed, label and success", strings.Join(missing, ", "))}
	}
	return c, nil
}

// column is where a column is, -1 if the file has none of that name.
func column(cols []string, name string) int {
	for i, c := range cols {
		if c == name {
			return i
		}
	}
	return -1
}

func (c *csvReader) fail(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{c.name, pe.Line, pe.Err}
	}
	if errors.Is(err, lines.ErrTooLong) || errors.Is(err, lines.ErrNoLineEnd) {
		return &Error{c.name, c.r.Line(), err}
	}
	if errors.Is(err, io.EOF) {
		return &Error{c.name, 1, errors.New("empty: not a JMeter result file")}
	}
	return fmt.Errorf("%s: %w", c.name, err)
}

// intern keeps one copy of each label, thread name, code and message
// of up to 1 KiB: a longer one (a message with the request's id) is the
// sample's own, so that the copies kept are at most 64 MiB.
func (c *csvReader) intern(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	if len(c.strs) > 1<<16 || len(s) > 1<<10 { // names that never repeat (a label per request): keep none
		return strings.Clone(s)
	}
	s = strings.Clone(s)
	c.strs[s] = s
	return s
}

func (c *csvReader) Next() (Sample, error) {
	rec := c.first
	line := 1
	if rec != nil {
		c.first = nil
	} else {
		var err error
		if rec, err = c.r.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				return Sample{}, io.EOF
			}
			return Sample{}, c.fail(err)
		}
		line = c.r.Line()
	}
	get := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return rec[i]
	}
	need := max(c.col.ts, c.col.elapsed, c.col.label, c.col.success)
	if len(rec) <= need {
		return Sample{}, &Error{c.name, line, fmt.Errorf("%d fields, fewer than the header's columns: the file is cut short", len(rec))}
	}
	var s Sample
	var err error
	if s.Start, err = parseStamp(rec[c.col.ts], c.o.Location); err != nil {
		return Sample{}, &Error{c.name, line, err}
	}
	ms, ok := parseInt(rec[c.col.elapsed])
	if !ok || ms < 0 {
		return Sample{}, &Error{c.name, line, fmt.Errorf("elapsed %q is not a number of milliseconds", rec[c.col.elapsed])}
	}
	s.Elapsed = time.Duration(ms) * time.Millisecond
	switch v := rec[c.col.success]; v {
	case "true":
		s.Success = true
	case "false":
	default:
		return Sample{}, &Error{c.name, line, fmt.Errorf("success %q is neither true nor false", v)}
	}
	if err := names(rec[c.col.label], get(c.col.thread)); err != nil {
		return Sample{}, &Error{c.name, line, err}
	}
	s.Label, s.Thread = c.intern(rec[c.col.label]), c.intern(get(c.col.thread))
	s.Code, s.Message = c.intern(get(c.col.code)), c.intern(get(c.col.msg))
	if f := get(c.col.failure); f != "" {
		s.Failure = strings.Clone(f)
	}
	s.Bytes, _ = parseInt(get(c.col.bytes))
	s.Line = line
	finish(&s, c.o)
	return s, nil
}
