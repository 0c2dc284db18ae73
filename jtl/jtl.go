// Package jtl reads JMeter's result files (JTL), CSV with or without a
// header line and XML, one sample at a time in bounded memory.
//
// A sample's timeStamp is taken as its start, as JMeter's shipped
// jmeter.properties has it (sampleresult.timestamp.start=true); a file
// written with end time stamps is read with Options.EndStamps.
package jtl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// Sample is one sample of a result file.
type Sample struct {
	Start   time.Time
	Elapsed time.Duration
	Label   string
	// Code is the response code ("200", or "Non HTTP response code: ..."),
	// Message the response message, Failure the first failed assertion's
	// message.
	Code, Message, Failure string
	// Thread is the thread's name ("users 1-3"); Group its thread group
	// ("users").
	Thread, Group string
	Success       bool
	Bytes         int64
	// Transaction marks a Transaction Controller's sample.
	Transaction bool
	// Line is where the sample is in its file (the line of a CSV record,
	// the line of an XML element).
	Line int
}

// Options say how a file was written where it cannot tell.
type Options struct {
	// EndStamps: the time stamps are the samples' ends
	// (sampleresult.timestamp.start=false).
	EndStamps bool
	// Location is the zone of time stamps written as dates (JMeter writes
	// them in its JVM's); nil is the local zone.
	Location *time.Location
}

// Reader gives a file's samples in its order; Next returns io.EOF after
// the last.
type Reader interface {
	Next() (Sample, error)
}

// NewReader reads a result file, CSV or XML (told by its first byte).
func NewReader(r io.Reader, name string, o Options) (Reader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%s: empty: not a JMeter result file", name)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n', 0xef, 0xbb, 0xbf: // blanks, a byte-order mark
			br.ReadByte()
			continue
		case '<':
			return newXML(br, name, o), nil
		}
		return newCSV(br, name, o)
	}
}

// Error is a sample that cannot be read, with its place.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// names checks a sample's label and thread name, which name its
// operation and its scenario, against lines.MaxName.
func names(label, thread string) error {
	if err := lines.Name("label", label); err != nil {
		return err
	}
	return lines.Name("thread name", thread)
}

// groupOf is a thread's thread group: its name without JMeter's " G-T"
// numbering ("users 1-3" is users'; "setUp Thread Group 1-1" is "setUp
// Thread Group"'s).
func groupOf(thread string) string {
	i := strings.LastIndexByte(thread, ' ')
	if i < 0 {
		return thread
	}
	num := thread[i+1:]
	dash := strings.IndexByte(num, '-')
	if dash <= 0 || dash == len(num)-1 || !digits(num[:dash]) || !digits(num[dash+1:]) {
		return thread
	}
	return thread[:i]
}

func digits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// transactionMessage is how a Transaction Controller's sample begins its
// response message (when it does not generate a parent sample).
const transactionMessage = "Number of samples in transaction"

// timeLayouts are the date forms of jmeter.save.saveservice.timestamp_format
// met in practice (SimpleDateFormat patterns in Go's terms).
var timeLayouts = []string{
	"2006/01/02 15:04:05.000", "2006-01-02 15:04:05.000", "2006/01/02 15:04:05", "2006-01-02 15:04:05",
	"2006-01-02T15:04:05.000Z07:00", time.RFC3339Nano, "01/02/2006 15:04:05.000", "01/02/2006 15:04:05",
}

// parseStamp reads a time stamp: milliseconds since the epoch, or a date.
func parseStamp(s string, loc *time.Location) (time.Time, error) {
	if digits(s) {
		var ms int64
		for _, c := range []byte(s) {
			ms = ms*10 + int64(c-'0')
		}
		return time.UnixMilli(ms), nil
	}
	if loc == nil {
		loc = time.Local
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time stamp %q is neither milliseconds nor a date perflab knows (yyyy/MM/dd HH:mm:ss.SSS and the like)", s)
}

// parseInt reads a count or a duration in ms: a JMeter number, digits
// with an optional minus.
func parseInt(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if !digits(s) || len(s) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range []byte(s) {
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// finish sets what a sample's fields imply: its group, whether it is a
// transaction, and its start.
func finish(s *Sample, o Options) {
	s.Group = groupOf(s.Thread)
	if strings.HasPrefix(s.Message, transactionMessage) {
		s.Transaction = true
	}
	if o.EndStamps {
		s.Start = s.Start.Add(-s.Elapsed)
	}
}
