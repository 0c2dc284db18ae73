package k6out

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/perflab/perflab/internal/lines"
)

// jsonLine is a line of k6's JSON output: a metric's description
// ({"type":"Metric","data":{"name","type","contains",...},"metric"}) or a
// point ({"type":"Point","data":{"time","value","tags"},"metric"}).
type jsonLine struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Name     string    `json:"name"`
		Type     string    `json:"type"`
		Contains string    `json:"contains"`
		Time     time.Time `json:"time"`
		Value    *float64  `json:"value"`
		Tags     *Tags     `json:"tags"`
	} `json:"data"`
}

func (k *Reader) jsonReader(br *bufio.Reader) func() (Point, error) {
	lr := lines.NewReader(br)
	return func() (Point, error) {
		for {
			b, err := lr.Next()
			line := lr.Line()
			if errors.Is(err, io.EOF) {
				return Point{}, io.EOF
			}
			if errors.Is(err, lines.ErrTooLong) {
				return Point{}, &Error{File: k.name, Line: line, Err: err}
			}
			if err != nil {
				return Point{}, fmt.Errorf("%s: %w", k.name, err)
			}
			if len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			// A point of a metric not kept is skipped undecoded. A line
			// ending without a newline is the last, and may be cut short:
			// decoded whole, so that a truncated file is an error.
			if bytes.HasSuffix(b, []byte{'\n'}) && !bytes.HasPrefix(b, []byte(`{"type":"Metric"`)) {
				if name, ok := metricOf(b); ok && !k.kept(name) {
					continue
				}
			}
			var l jsonLine
			if err := json.Unmarshal(b, &l); err != nil || l.Type == "" {
				if line == 1 && (bytes.Equal(bytes.TrimSpace(b), []byte("{")) || bytes.Contains(b, []byte(`"root_group"`))) {
					return Point{}, &Error{File: k.name, Line: line, Err: errors.New("k6's end-of-test summary (--summary-export, handleSummary), not its results (k6 run --out json=FILE): a summary holds no samples")}
				}
				if err == nil {
					err = errors.New("no type")
				}
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("not a line of k6's JSON output (k6 run --out json=FILE): %v", err)}
			}
			switch l.Type {
			case "Metric":
				name := l.Data.Name
				if name == "" {
					name = l.Metric
				}
				k.metrics[name] = Metric{Name: name, Type: l.Data.Type, Contains: l.Data.Contains}
				continue
			case "Point":
			default:
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("type %q: k6's JSON output has lines of type Metric and Point", l.Type)}
			}
			switch {
			case l.Metric == "":
				return Point{}, &Error{File: k.name, Line: line, Err: errors.New("a point without its metric")}
			case l.Data.Time.IsZero():
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("a point of %s without its time", l.Metric)}
			case l.Data.Value == nil:
				return Point{}, &Error{File: k.name, Line: line, Err: fmt.Errorf("a point of %s without its value", l.Metric)}
			}
			if !k.kept(l.Metric) {
				continue
			}
			p := Point{Metric: l.Metric, Time: l.Data.Time, Value: *l.Data.Value, Line: line}
			if l.Data.Tags != nil {
				p.Tags = *l.Data.Tags
			}
			if err := p.names(); err != nil {
				return Point{}, &Error{File: k.name, Line: line, Err: err}
			}
			return p, nil
		}
	}
}
