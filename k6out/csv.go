package k6out

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// csvReader reads k6's CSV output: a header line naming the columns
// (metric_name, timestamp, metric_value, then one per system tag:
// check, error, error_code, expected_response, group, method, name,
// proto, scenario, service, status, ..., extra_tags, metadata), then a
// point a line. The time stamps are as K6_CSV_TIME_FORMAT had them:
// seconds since the epoch (k6's default), ms, µs or ns, or RFC 3339.
func (k *Reader) csvReader(br *bufio.Reader) (func() (Point, error), error) {
	r := lines.NewCSV(br)
	fail := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &Error{File: k.name, Line: pe.Line, Err: pe.Err}
		}
		if errors.Is(err, lines.ErrTooLong) || errors.Is(err, lines.ErrNoLineEnd) {
			return &Error{File: k.name, Line: r.Line(), Err: err}
		}
		return fmt.Errorf("%s: %w", k.name, err)
	}
	head, err := r.Read()
	if err != nil {
		return nil, &Error{File: k.name, Line: 1, Err: fmt.Errorf("not a k6 result file (k6 run --out json=FILE or csv=FILE): %v", err)}
	}
	head = slices.Clone(head)
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range []string{"metric_name", "timestamp", "metric_value"} {
		if _, ok := col[c]; !ok {
			return nil, &Error{File: k.name, Line: 1, Err: fmt.Errorf("no %s column: not k6's CSV output (its header is metric_name,timestamp,metric_value,check,error,...)", c)}
		}
	}
	field := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	return func() (Point, error) {
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return Point{}, io.EOF
			}
			if err != nil {
				return Point{}, fail(err)
			}
			line := r.Line()
			if len(rec) < len(head) {
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("%d fields, where the header has %d: the file is cut short", len(rec), len(head))}
			}
			name := rec[col["metric_name"]]
			if name == "" {
				return Point{}, &Error{File: k.name, Line: line, Err: errors.New("a point without its metric_name")}
			}
			if !k.kept(name) {
				continue
			}
			p := Point{Metric: name, Line: line}
			if p.Time, err = csvTime(rec[col["timestamp"]]); err != nil {
				return Point{}, &Error{File: k.name, Line: line, Err: err}
			}
			if p.Value, err = strconv.ParseFloat(rec[col["metric_value"]], 64); err != nil {
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("metric_value %q is not a number", rec[col["metric_value"]])}
			}
			p.Tags = Tags{Name: field(rec, "name"), Method: field(rec, "method"), Status: field(rec, "status"),
				Scenario: field(rec, "scenario"), Group: field(rec, "group"), ExpectedResponse: field(rec, "expected_response"),
				ErrorCode: field(rec, "error_code"), Error: field(rec, "error"), Check: field(rec, "check"), VU: field(rec, "vu")}
			if err := p.names(); err != nil {
				return Point{}, &Error{File: k.name, Line: line, Err: err}
			}
			return p, nil
		}
	}, nil
}

// csvTime reads a CSV time stamp: digits since the epoch, whose count
// tells the unit (up to 10 seconds, 13 ms, 16 µs, 19 ns), or RFC 3339.
func csvTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		switch d := len(s); {
		case d <= 10:
			return time.Unix(n, 0), nil
		case d <= 13:
			return time.UnixMilli(n), nil
		case d <= 16:
			return time.UnixMicro(n), nil
		default:
			return time.Unix(0, n), nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("timestamp %q is neither a time since the epoch nor RFC 3339 (K6_CSV_TIME_FORMAT unix, unix_milli, unix_micro, unix_nano or rfc3339_nano)", s)
}
