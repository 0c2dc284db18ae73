package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// resourceTable prints what the monitors saw per window: CPU (and per
// transaction, the Drools PDP report's "CPU per ONSET"), memory with
// its trend and a leak suspicion (as the check-in/check-out report),
// garbage collections (as the Drools PDP report), the generator's host;
// then the slow queries (as the check-in/check-out report) and the warnings.
func resourceTable(w io.Writer, s *results.Summary) error {
	if a := s.Resources; a != nil && len(a.Windows) > 0 {
		fmt.Fprintln(w, "\nresources (what the monitors saw; CPU ms per transaction completed)")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  "+strings.Join(ResourceHeader, "\t"))
		for _, row := range ResourceRows(a) {
			fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(a.SlowQueries) > 0 {
			fmt.Fprintln(w, "slow queries (mean time during the run above the monitor's threshold)")
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "monitor\tcalls\tmean ms\ttotal ms\t  query")
			for _, q := range a.SlowQueries {
				fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t  %s\n", q.Monitor, q.Calls, q.MeanMS, q.TotalMS, trim(strings.Join(strings.Fields(q.Query), " "), 100))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	return nil
}

// ResourceHeader names the columns of ResourceRows.
var ResourceHeader = []string{"window", "monitor", "cpu s", "cores", "cpu ms/tx", "memory avg MB", "peak MB", "slope MB/h", "leak?", "gc young (avg ms)", "gc full (avg ms)", "busy avg/max"}

// ResourceRows are the monitors' figures, a row per window and monitor,
// for the text, Markdown and HTML tables.
//
// The load generator's two monitors make one row, "generator (perflab)":
// perflab's own process (SelfMonitor) gives its CPU, cores, CPU ms per
// transaction and memory, and the generator's host (GeneratorMonitor) its
// busy column. They are the same generator: apart, the host's row showed
// only "busy" and the process's row did not say it was the generator's.
// A merged run's parts each have their row ("generator#2 (perflab)").
// The host's own CPU seconds are not shown instead: they would count
// everything else on the machine, the system under test too when it runs
// beside perflab, as the generator's. The analysis, resources.csv and the
// charts keep both monitors under their own names.
func ResourceRows(a *monitor.Analysis) [][]string {
	var rows [][]string
	for _, win := range a.Windows {
		// The generator's monitors by the part of a merged run they are
		// of ("#2"; "" in a run of one generator).
		self := map[string]*monitor.MonitorFigures{}
		host := map[string]bool{}
		for i, m := range win.Monitors {
			if part, ok := partOf(m.Monitor, results.SelfMonitor); ok {
				self[part] = &win.Monitors[i]
			}
			if part, ok := partOf(m.Monitor, results.GeneratorMonitor); ok && m.Host != nil {
				host[part] = true
			}
		}
		for _, m := range win.Monitors {
			hp, isHost := partOf(m.Monitor, results.GeneratorMonitor)
			sp, isSelf := partOf(m.Monitor, results.SelfMonitor)
			switch {
			case isHost && m.Host != nil && self[hp] != nil:
				cells := resourceCells(win.Window, *self[hp])
				cells[1] = m.Monitor + " (" + results.SelfMonitor + ")"
				cells[11] = busyCell(m.Host)
				rows = append(rows, cells)
			case isSelf && host[sp]: // in the generator's row
			default:
				rows = append(rows, resourceCells(win.Window, m))
			}
		}
	}
	return rows
}

// partOf tells whether a monitor is the one named name, of a run or of a
// part of a merged run ("perflab#2"), and which part ("" or "#2").
func partOf(monitor, name string) (string, bool) {
	rest, ok := strings.CutPrefix(monitor, name)
	return rest, ok && (rest == "" || strings.HasPrefix(rest, "#"))
}

// resourceCells is one monitor's row of ResourceRows.
func resourceCells(window string, m monitor.MonitorFigures) []string {
	cells := []string{window, m.Monitor, "", "", "", "", "", "", "", "", "", ""}
	if c := m.CPU; c != nil {
		cells[2], cells[3] = fmt.Sprintf("%.2f", c.Seconds), fmt.Sprintf("%.2f", c.Cores)
		if c.MSPerTx != nil {
			cells[4] = fmt.Sprintf("%.3f", *c.MSPerTx)
		}
	}
	if len(m.Memory) > 0 {
		mem := m.Memory[0]
		cells[5] = mb(mem.AvgBytes) + " (" + strings.TrimSuffix(mem.Metric, "_bytes") + ")"
		cells[6] = mb(mem.PeakBytes)
		cells[7] = "-" // too short a window for a rate
		if mem.SlopeBytesPerHour != nil {
			cells[7] = fmt.Sprintf("%+.1f", *mem.SlopeBytesPerHour/(1<<20))
		}
		switch {
		case mem.Drift != "" && mem.LeakSuspected: // the drift's verdict of the same series
			cells[8] = "SUSPECTED (drift: " + mem.Drift + ")"
		case mem.Drift != "":
			cells[8] = "no (drift: " + mem.Drift + ")"
		case mem.SlopeBytesPerHour == nil:
			cells[8] = "too short to judge"
		case mem.LeakSuspected:
			cells[8] = "SUSPECTED"
		default:
			cells[8] = "no"
		}
	}
	if g := m.GC; g != nil {
		cells[9], cells[10] = fmt.Sprintf("%d (%.1f)", g.YoungCount, g.YoungAvgMS), fmt.Sprintf("%d (%.1f)", g.FullCount, g.FullAvgMS)
	}
	if h := m.Host; h != nil {
		cells[11] = busyCell(h)
	}
	return cells
}

func busyCell(h *monitor.HostFigures) string {
	return fmt.Sprintf("%.0f%% / %.0f%%", 100*h.BusyAvg, 100*h.BusyMax)
}

func mb(b float64) string { return fmt.Sprintf("%.1f", b/(1<<20)) }

// cpuSeries turns a monitor's cumulative CPU seconds into cores used per
// sample interval, for the charts.
func cpuSeries(points []monitor.Point, start int64) map[string][]XY {
	return rateSeries(points, start, 1, monitor.MetricCPUUser, monitor.MetricCPUSystem)
}

// gcSeries is the share of each monitor's time spent in garbage
// collections (young and full), in %, per sample interval.
func gcSeries(points []monitor.Point, start int64) map[string][]XY {
	return rateSeries(points, start, 100, monitor.MetricGCYoungTime, monitor.MetricGCFullTime)
}

// rateSeries turns the sum of a monitor's cumulative metrics (seconds)
// into its rate per second of wall time, times scale, per sample interval.
func rateSeries(points []monitor.Point, start int64, scale float64, metrics ...string) map[string][]XY {
	type last struct {
		t int64
		v float64
	}
	sums := map[string]map[int64]float64{}
	for _, p := range points {
		if slices.Contains(metrics, p.Metric) {
			if sums[p.Monitor] == nil {
				sums[p.Monitor] = map[int64]float64{}
			}
			sums[p.Monitor][p.Time.UnixMilli()] += p.Value
		}
	}
	out := map[string][]XY{}
	for name, byT := range sums {
		var ts []int64
		for t := range byT {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		var prev *last
		for _, t := range ts {
			v := byT[t]
			if prev != nil && t > prev.t {
				out[name] = append(out[name], XY{float64(t-start) / 1000, scale * (v - prev.v) / (float64(t-prev.t) / 1000)})
			}
			prev = &last{t, v}
		}
	}
	return out
}

// memorySeries is each monitor's main memory level (heap, cgroup memory,
// PSS or RSS) in MB over time.
func memorySeries(points []monitor.Point, start int64) map[string][]XY {
	pick := map[string]string{}
	rank := map[string]int{monitor.MetricHeapUsed: 4, monitor.MetricCgroupMemory: 3, monitor.MetricPSS: 2, monitor.MetricRSS: 1}
	for _, p := range points {
		if r := rank[p.Metric]; r > rank[pick[p.Monitor]] {
			pick[p.Monitor] = p.Metric
		}
	}
	out := map[string][]XY{}
	for _, p := range points {
		if m, ok := pick[p.Monitor]; ok && p.Metric == m {
			out[p.Monitor] = append(out[p.Monitor], XY{float64(p.Time.UnixMilli()-start) / 1000, p.Value / (1 << 20)})
		}
	}
	return out
}

// resourceCharts draws the monitors' CPU (cores used), memory, time in
// garbage collections and hosts' busy share over a stage, on the stage's
// time axis; none when nothing was sampled.
func resourceCharts(points []monitor.Point, ph results.PhaseSummary) []Chart {
	var in []monitor.Point
	for _, p := range points {
		if !p.Time.Before(ph.Start) && !p.Time.After(ph.End) {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		return nil
	}
	series := func(m map[string][]XY) []Series {
		var out []Series
		for _, name := range slices.Sorted(maps.Keys(m)) {
			out = append(out, Series{Name: name, Points: m[name]})
		}
		return out
	}
	s := ph.Start.UnixMilli()
	busy := map[string][]XY{}
	for _, p := range in {
		if p.Metric == monitor.MetricBusy {
			busy[p.Monitor] = append(busy[p.Monitor], XY{float64(p.Time.UnixMilli()-s) / 1000, 100 * p.Value})
		}
	}
	var out []Chart
	for _, c := range []Chart{
		{Slug: "cpu-over-time", Title: "CPU used over time (cores)", YLabel: "cores", Series: series(cpuSeries(in, s))},
		{Slug: "memory-over-time", Title: "Memory over time (MB: heap, cgroup memory, PSS or RSS)", YLabel: "MB", YUnit: "MB", Series: series(memorySeries(in, s))},
		{Slug: "gc-over-time", Title: "Time in garbage collections over time (% of the wall time, young and full)", YLabel: "%", YUnit: "%", Series: series(gcSeries(in, s))},
		{Slug: "host-busy-over-time", Title: "Host CPU busy over time (%; generator: the load generator)", YLabel: "%", YUnit: "%", Series: series(busy)},
	} {
		if len(c.Series) > 0 {
			out = append(out, c.overStage(ph))
		}
	}
	return out
}
