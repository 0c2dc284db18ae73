// Package k6out reads k6's result streams, one point at a time in bounded
// memory: the JSON lines of `k6 run --out json=FILE` and the CSV of
// `--out csv=FILE`.
//
// A point is one value of one metric at one time, with its tags: a
// request gives k6's http_req_duration, http_reqs, http_req_failed and
// the phases of the request (http_req_blocked ... http_req_receiving),
// each a point of its own, stamped with the request's end.
package k6out

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// Point is one value of a metric.
type Point struct {
	Metric string
	// Time is when k6 took the value: a request's end for its metrics.
	Time time.Time
	// Value is in ms for time metrics (Metric.Contains "time").
	Value float64
	Tags  Tags
	// Line is the point's line in its file.
	Line int
}

// Tags are the tags of k6's system tag set that a point's meaning
// depends on; others (url, proto, tls_version, a script's own) are not
// kept.
type Tags struct {
	Name     string `json:"name"`
	Method   string `json:"method"`
	Status   string `json:"status"`
	Scenario string `json:"scenario"`
	Group    string `json:"group"`
	// ExpectedResponse is "true" or "false" as the script's response
	// callback judged the status (by default 200-399); "" before k6 0.31.
	ExpectedResponse string `json:"expected_response"`
	// ErrorCode is k6's error code (1050 a timeout, 1212 a refused
	// connection, 1500 a 5xx status ...); Error its message.
	ErrorCode string `json:"error_code"`
	Error     string `json:"error"`
	Check     string `json:"check"`
	// VU is the VU's number, when k6 was told to tag it (--system-tags
	// with vu).
	VU string `json:"vu"`
}

// names checks the point's metric and the tags that name something in a
// run (a step, a scenario, a transaction, a check, a VU) against
// lines.MaxName.
func (p *Point) names() error {
	for _, f := range []struct{ what, s string }{{"metric name", p.Metric}, {"name tag", p.Tags.Name},
		{"scenario tag", p.Tags.Scenario}, {"group tag", p.Tags.Group}, {"check tag", p.Tags.Check}, {"vu tag", p.Tags.VU}} {
		if err := lines.Name(f.what, f.s); err != nil {
			return err
		}
	}
	return nil
}

// Metric is what the file says of a metric: its type (counter, gauge,
// rate, trend) and what it contains (time, data, default). A CSV file
// does not say: the types of k6's own metrics are known, a script's own
// are "".
type Metric struct {
	Name, Type, Contains string
}

// Time reports whether the metric's values are durations in ms.
func (m Metric) Time() bool { return m.Type == "trend" && m.Contains == "time" }

// builtin are k6's own metrics, for files that do not describe them.
var builtin = map[string]Metric{}

func init() {
	def := func(typ, contains string, names ...string) {
		for _, n := range names {
			builtin[n] = Metric{Name: n, Type: typ, Contains: contains}
		}
	}
	def("gauge", "default", "vus", "vus_max")
	def("counter", "default", "iterations", "dropped_iterations", "http_reqs", "ws_sessions", "ws_msgs_sent", "ws_msgs_received", "grpc_streams", "grpc_streams_msgs_sent", "grpc_streams_msgs_received")
	def("counter", "data", "data_sent", "data_received")
	def("rate", "default", "checks", "http_req_failed")
	def("trend", "time", "iteration_duration", "group_duration", "http_req_duration", "http_req_blocked", "http_req_connecting",
		"http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving", "grpc_req_duration",
		"ws_connecting", "ws_session_duration", "ws_ping")
}

// Builtin reports whether a metric is one of k6's own.
func Builtin(name string) bool {
	_, ok := builtin[name]
	return ok
}

// Reader gives a file's points in its order; Next returns io.EOF after
// the last.
type Reader struct {
	name    string
	next    func() (Point, error)
	keep    func(Metric) bool
	metrics map[string]Metric
	skipped map[string]int64
	format  string
}

// NewReader reads a k6 result stream, JSON or CSV (told by its first
// byte; a gzipped file is read through gzip.Reader). Points of the metrics keep refuses are counted
// (Skipped) and not decoded: keep nil keeps all.
func NewReader(r io.Reader, name string, keep func(Metric) bool) (*Reader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if keep == nil {
		keep = func(Metric) bool { return true }
	}
	k := &Reader{name: name, keep: keep, metrics: map[string]Metric{}, skipped: map[string]int64{}}
	first, err := br.Peek(1)
	switch {
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: empty: not a k6 result file", name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case first[0] == '{':
		k.format = "json"
		k.next = k.jsonReader(br)
	default:
		k.format = "csv"
		if k.next, err = k.csvReader(br); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Next is the next point kept.
func (k *Reader) Next() (Point, error) { return k.next() }

// Name is the file's name.
func (k *Reader) Name() string { return k.name }

// Format is json or csv.
func (k *Reader) Format() string { return k.format }

// Metric is what is known of a metric: the file's description of it, or
// k6's own metrics'.
func (k *Reader) Metric(name string) Metric {
	if m, ok := k.metrics[name]; ok {
		return m
	}
	if m, ok := builtin[name]; ok {
		return m
	}
	return Metric{Name: name}
}

// Skipped counts the points not kept, by metric.
func (k *Reader) Skipped() map[string]int64 { return k.skipped }

// kept says whether a metric's points are decoded, and counts them if
// not.
func (k *Reader) kept(name string) bool {
	if k.keep(k.Metric(name)) {
		return true
	}
	k.skipped[name]++
	return false
}

// Error is a point that cannot be read, with its place.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// metricOf is the metric a JSON line names, found without decoding it:
// k6 writes `{"metric":"NAME",` first in a point's line, or (before 0.40)
// `,"metric":"NAME"}` last. false if neither: the line is decoded.
func metricOf(line []byte) (string, bool) {
	line = bytes.TrimRight(line, " \r\n")
	var name []byte
	if rest, ok := bytes.CutPrefix(line, []byte(`{"metric":"`)); ok {
		j := bytes.IndexByte(rest, '"')
		if j < 0 {
			return "", false
		}
		name = rest[:j]
	} else if rest, ok := bytes.CutSuffix(line, []byte(`"}`)); ok {
		const key = `,"metric":"`
		i := bytes.LastIndex(rest, []byte(key))
		if i < 0 {
			return "", false
		}
		name = rest[i+len(key):]
	} else {
		return "", false
	}
	if bytes.ContainsAny(name, `"\`) {
		return "", false
	}
	return string(name), true
}
