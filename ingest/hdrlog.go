package ingest

import (
	"errors"
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// HdrLog is an HdrHistogram interval log's histograms as a Source (the
// log format of HdrHistogram's reference implementation, which wrk2,
// Gatling's and many hand-written load tools write): each tag is an
// operation of scenario "log" (untagged histograms are "all"), each
// interval's values samples of that interval, unit the unit of the
// log's values (time.Microsecond when they are µs). A log holds
// successful operations only.
func HdrLog(r io.Reader, name string, unit time.Duration) Source {
	return &hdrLog{r: hdr.NewHistogramLogReader(r), name: name, unit: unit}
}

type hdrLog struct {
	r       *hdr.HistogramLogReader
	name    string
	unit    time.Duration
	pending []Sample
	n       int
}

func (l *hdrLog) Next() (Sample, error) {
	for len(l.pending) == 0 {
		h, err := l.r.NextIntervalHistogram()
		if err != nil {
			return Sample{}, fmt.Errorf("%s: histogram %d: %w", l.name, l.n+1, err)
		}
		if h == nil {
			return Sample{}, io.EOF
		}
		l.n++
		start, end := time.UnixMilli(h.StartTimeMs()), time.UnixMilli(h.EndTimeMs())
		if !end.After(start) {
			return Sample{}, fmt.Errorf("%s: histogram %d: ends at %v, not after its start %v", l.name, l.n, end, start)
		}
		tag := h.Tag()
		if tag == "" {
			tag = "all"
		}
		// Each bucket's count at the bucket's lowest value: the values'
		// precision is the log's.
		for _, bar := range h.Distribution() {
			if bar.Count > 0 {
				l.pending = append(l.pending, Sample{Start: start, Until: end, Elapsed: time.Duration(bar.From) * l.unit,
					Scenario: "log", Name: tag, Kind: metrics.KindStep, Count: bar.Count})
			}
		}
	}
	s := l.pending[0]
	l.pending = l.pending[1:]
	return s, nil
}

// errNoUnit is the error of an unknown --unit.
var errNoUnit = errors.New("the unit of a histogram log's values: ns, us or ms")

// LogUnit reads the unit of a log's values: ns, us (µs) or ms.
func LogUnit(s string) (time.Duration, error) {
	switch s {
	case "ns":
		return time.Nanosecond, nil
	case "us", "µs":
		return time.Microsecond, nil
	case "ms":
		return time.Millisecond, nil
	}
	return 0, fmt.Errorf("%w, not %q", errNoUnit, s)
}
