package judge

import (
	"fmt"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/analyze"
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

// OpDrift is how one operation behaved over a stage's time.
type OpDrift struct {
	Stage        string        `json:"stage"`
	Operation    string        `json:"operation"`
	Windows      []WindowStats `json:"windows"`
	Trend        analyze.Trend `json:"trend"`
	SlopePerHour float64       `json:"slope_ms_per_hour"`
	Changes      []string      `json:"changes"`
}

// Drift analyses each step and transaction of each stage of a run over
// time: figures per window, a trend test of the per-interval percentile,
// and the points where it changed level.
func Drift(rd *results.Run, pct float64, windows []Window) []OpDrift {
	var out []OpDrift
	for _, ph := range rd.Summary.Stages {
		for _, op := range results.UniqueOps(ph.Operations) {
			if op.Kind == metrics.KindScenario {
				continue
			}
			hs := rd.IntervalsOf(ph.Index, op)
			if len(hs) == 0 {
				continue
			}
			d := OpDrift{Stage: ph.Name, Operation: op.Name}
			start := ph.Start.UnixMilli()
			end := ph.End.UnixMilli()
			// One pass, one interval decoded at a time: each window's
			// merged histogram and the series of the percentile.
			merged := make([]*hdr.Histogram, len(windows))
			series := make([]float64, 0, len(hs))
			offsets := make([]time.Duration, 0, len(hs))
			var step time.Duration
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
				if h.TotalCount() == 0 {
					continue
				}
				// A sliver of a last interval is in the windows, not in the
				// series the trend and change points test.
				if nominal := rd.Summary.Interval; nominal > 0 && float64(iv.EndMs-iv.StartMs)/1e3 < nominal/2 {
					continue
				}
				series = append(series, float64(h.ValueAtPercentile(pct))/1e3)
				offsets = append(offsets, time.Duration(iv.StartMs-start)*time.Millisecond)
				step = time.Duration(iv.EndMs-iv.StartMs) * time.Millisecond
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
			d.Trend = analyze.MannKendall(series)
			// The slope is per interval: the run's interval, not the last
			// one's length (a stage's last interval is usually short).
			if iv := time.Duration(rd.Summary.Interval * float64(time.Second)); iv > 0 {
				step = iv
			}
			if step > 0 {
				d.SlopePerHour = d.Trend.Slope * float64(time.Hour) / float64(step)
			}
			for _, cp := range analyze.ChangePoints(series, 0.01, 5) {
				verb := "rose"
				if cp.After < cp.Before {
					verb = "fell"
				}
				d.Changes = append(d.Changes, fmt.Sprintf("p%g %s from %s to %s after %s", pct, verb, results.Human(cp.Before), results.Human(cp.After), elapsed(offsets[cp.Index])))
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
