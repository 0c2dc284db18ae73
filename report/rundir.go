package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
)

// RunDir is the directory one run writes: plan.yaml, latency.hlog (every
// interval's histograms, written as the run goes), summary.json and
// summary.txt (written at the end).
type RunDir struct {
	Path string

	mu   sync.Mutex
	f    *os.File
	bw   *bufio.Writer
	hlog *hdr.HistogramLogWriter
	base time.Time
}

// CreateRunDir makes dir and opens its interval log.
func CreateRunDir(dir string, start time.Time, planSource []byte) (*RunDir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.yaml"), planSource, 0o644); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "latency.hlog"))
	if err != nil {
		return nil, err
	}
	rd := &RunDir{Path: dir, f: f, bw: bufio.NewWriter(f), base: start}
	rd.hlog = hdr.NewHistogramLogWriter(rd.bw)
	// The log's header holds whole seconds: offsets must be from a whole
	// second too, or readers place every interval up to 1 s off.
	baseMs := start.UnixMilli() / 1000 * 1000
	rd.hlog.SetBaseTime(baseMs)
	for _, err := range []error{
		rd.hlog.OutputComment("perflab interval histograms: latency of successful operations in microseconds (the Interval_Max column is in seconds)"),
		rd.hlog.OutputComment("tags are STAGE/SCENARIO/OPERATION with characters other than letters, digits and ._-/ replaced by _"),
		rd.hlog.OutputLogFormatVersion(),
		rd.hlog.OutputStartTime(baseMs),
		rd.hlog.OutputBaseTime(baseMs),
		rd.hlog.OutputLegend(),
	} {
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return rd, rd.bw.Flush()
}

var tagUnsafe = regexp.MustCompile(`[^A-Za-z0-9._/-]`)

// Tag is the histogram log tag of an operation in a phase.
func Tag(phase string, op metrics.Op) string {
	return tagUnsafe.ReplaceAllString(phase+"/"+op.Scenario+"/"+op.Name, "_")
}

// Sink returns the interval sink of a phase.
func (rd *RunDir) Sink(ph *metrics.Phase) metrics.Sink {
	return sinkFunc(func(iv *metrics.Interval) error {
		rd.mu.Lock()
		defer rd.mu.Unlock()
		for i, st := range iv.Ops {
			if st.OK.N == 0 {
				continue
			}
			h := st.Hist
			h.SetTag(Tag(fmt.Sprintf("s%d", ph.Index), ph.Ops[i]))
			h.SetStartTimeMs(iv.Start.UnixMilli())
			h.SetEndTimeMs(iv.End.UnixMilli())
			err := rd.hlog.OutputIntervalHistogram(h)
			h.SetTag("")
			if err != nil {
				return err
			}
		}
		// Flush every interval: a crash loses at most the current one.
		return rd.bw.Flush()
	})
}

type sinkFunc func(iv *metrics.Interval) error

func (f sinkFunc) Interval(iv *metrics.Interval) error { return f(iv) }

// Finish writes summary.json and summary.txt and closes the log.
func (rd *RunDir) Finish(s *Summary) error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.f != nil {
		if err := rd.bw.Flush(); err != nil {
			return err
		}
		if err := rd.f.Close(); err != nil {
			return err
		}
		rd.f = nil
	}
	if err := writeFile(filepath.Join(rd.Path, "summary.json"), s.WriteJSON); err != nil {
		return err
	}
	return writeFile(filepath.Join(rd.Path, "summary.txt"), func(w io.Writer) error { return WriteTable(w, s) })
}

// WriteFile writes a further file into the run directory.
func (rd *RunDir) WriteFile(name string, write func(io.Writer) error) error {
	return writeFile(filepath.Join(rd.Path, name), write)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
