package judge

import (
	"fmt"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// Window selects the intervals of a stage: the first or last Length of it,
// or all of it when Length is 0.
type Window struct {
	Last   bool
	Length time.Duration
}

// ParseWindow reads "first:2h", "last:12h" or "all".
func ParseWindow(s string) (Window, error) {
	if s == "all" {
		return Window{}, nil
	}
	where, d, ok := strings.Cut(s, ":")
	length, err := time.ParseDuration(d)
	if !ok || err != nil || length <= 0 || where != "first" && where != "last" {
		return Window{}, fmt.Errorf("window %q: want first:DURATION, last:DURATION or all (first:2h, last:12h)", s)
	}
	return Window{Last: where == "last", Length: length}, nil
}

func (w Window) String() string {
	switch {
	case w.Length == 0:
		return "all"
	case w.Last:
		return "last " + w.Length.String()
	}
	return "first " + w.Length.String()
}

// WindowWarnings says where the windows do not split a stage as asked: a
// window as long as the stage covers all of it, and a first and a last
// window that together exceed it overlap (both then share intervals).
func WindowWarnings(rd *results.Run, windows []Window) []string {
	var out []string
	for _, ph := range rd.Summary.Stages {
		span := ph.End.Sub(ph.Start)
		var first, last time.Duration
		for _, w := range windows {
			if w.Length == 0 {
				continue
			}
			if w.Length >= span {
				out = append(out, fmt.Sprintf("stage %s lasted %v: window %q covers all of it", ph.Name, span.Round(time.Millisecond), w.String()))
			}
			if w.Last {
				last = max(last, w.Length)
			} else {
				first = max(first, w.Length)
			}
		}
		if first > 0 && last > 0 && first < span && last < span && first+last > span {
			out = append(out, fmt.Sprintf("stage %s lasted %v: its first %v and last %v overlap", ph.Name, span.Round(time.Millisecond), first, last))
		}
	}
	return out
}

// WindowStats is an operation's figures over one window.
type WindowStats struct {
	Window string        `json:"window"`
	Stats  WindowLatency `json:"latency_ms"`
	Count  int64         `json:"count"`
}

// WindowLatency is a few figures of a merged histogram, in ms.
type WindowLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// OpWindows is one operation's figures over each window of a stage.
type OpWindows struct {
	Stage     string        `json:"stage"`
	Operation string        `json:"operation"`
	Windows   []WindowStats `json:"windows"`
}

// Windows gives each step and transaction of each stage of a run its
// figures over each window (its first hours, its last): the comparison a
// longevity report tabulates beside its verdict (Longevity).
func Windows(rd *results.Run, windows []Window) []OpWindows {
	var out []OpWindows
	for _, ph := range rd.Summary.Stages {
		for _, op := range results.UniqueOps(ph.Operations) {
			if op.Kind == metrics.KindScenario {
				continue
			}
			hs := rd.IntervalsOf(ph.Index, op)
			if len(hs) == 0 {
				continue
			}
			d := OpWindows{Stage: ph.Name, Operation: op.Name}
			start := ph.Start.UnixMilli()
			end := ph.End.UnixMilli()
			// One pass, one interval decoded at a time, into each
			// window's merged histogram.
			merged := make([]*hdr.Histogram, len(windows))
			for _, iv := range hs {
				h, err := iv.Histogram()
				if err != nil {
					continue
				}
				for i, w := range windows {
					in := w.Length == 0 ||
						!w.Last && iv.StartMs-start < w.Length.Milliseconds() ||
						w.Last && iv.EndMs > end-w.Length.Milliseconds()
					if !in {
						continue
					}
					if merged[i] == nil {
						merged[i] = metrics.NewHistogram()
					}
					h.MergeInto(merged[i])
				}
			}
			for i, w := range windows {
				m := merged[i]
				if m == nil {
					m = metrics.NewHistogram()
				}
				d.Windows = append(d.Windows, WindowStats{Window: w.String(), Count: m.TotalCount(), Stats: WindowLatency{
					Mean: m.Mean() / 1e3, P50: float64(m.ValueAtPercentile(50)) / 1e3, P95: float64(m.ValueAtPercentile(95)) / 1e3,
					P99: float64(m.ValueAtPercentile(99)) / 1e3, Max: float64(m.Max()) / 1e3,
				}})
			}
			out = append(out, d)
		}
	}
	return out
}

// elapsed formats a time into a run as the reports the examples reproduce
// do: "2 h 05 m",
// "4 m 10 s", "1.2 s".
func elapsed(d time.Duration) string {
	switch {
	case d >= time.Hour:
		m := int64(d.Round(time.Minute) / time.Minute)
		return fmt.Sprintf("%d h %02d m", m/60, m%60)
	case d >= time.Minute:
		s := int64(d.Round(time.Second) / time.Second)
		return fmt.Sprintf("%d m %02d s", s/60, s%60)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
