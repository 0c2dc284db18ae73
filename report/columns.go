package report

import (
	"fmt"
	"io"
	"strings"
)

// Header is a table's column as the HTML and Markdown reports head it:
// its name, and what it is where the name does not say: Help in the
// legend under the table, and the HTML report's hover title (Short if
// not empty, else Help).
type Header struct {
	Name, Help, Short string
}

// Title is the column's hover title.
func (h Header) Title() string {
	if h.Short != "" {
		return h.Short
	}
	return h.Help
}

// pct is a percentile column of the operations table.
func pct(name string, p int) Header {
	return Header{name, helpLatency, fmt.Sprintf("%d%% of the successful operations took at most this, ms (see the legend under the table)", p)}
}

// What the operations tables' columns are (docs/results.md says the
// same): the HTML report's, the Markdown report's, the terminal's.
const (
	helpKind    = "step: one request or message; transaction: a group of steps, its time the sum of theirs (think time left out); scenario: one whole iteration, think time included"
	helpCount   = "operations that ended in the stage, the failed ones included"
	helpErrors  = "of Count, those that failed (by kind and message: the Errors section)"
	helpRate    = "operations per second over the stage, the throughput: (Count − those never sent) / the time the operation's scenario was active in the stage (its first start to its last end), all its VUs and their pauses included"
	helpLatency = "latency in ms of the successful operations (OK): a request's from its send to its response's last byte (open models: see their table), a transaction's the sum of its steps', a scenario's its whole iteration; min, mean and max exact, percentiles from HDR histograms within 0.1%; a row marked KO gives the failed ones' (those sent)"
	helpOpRate  = "1000 / Mean (ms): the operations per second one VU would complete doing only this operation back to back, without pauses (the CPS report's \"ops/s avg\"); not the throughput, which is Rate /s: a mean of 4.15 ms reads 240.96 here whatever the load"
)

// operationHeaders are the HTML report's operations table's columns.
var operationHeaders = []Header{
	{"Operation", "", ""},
	{"Kind", helpKind, ""},
	{"Count", helpCount, ""},
	{"Errors", helpErrors, ""},
	{"Rate /s", helpRate, ""},
	{"Min", helpLatency, "the fastest successful operation, ms (see the legend under the table)"},
	{"Mean", helpLatency, "the successful operations' mean, ms (see the legend under the table)"},
	pct("p50", 50), pct("p75", 75), pct("p90", 90), pct("p95", 95), pct("p99", 99),
	{"Max", helpLatency, "the slowest successful operation, ms (see the legend under the table)"},
	{"1000 / Mean", helpOpRate, ""},
}

// operationLegend is what the operations table's columns are, under it:
// a line per explanation, the columns it is of named together.
var operationLegend = legend(operationHeaders)

// markdownLegend is the Markdown report's operations table's legend (its
// columns are the CPS report's).
var markdownLegend = legend([]Header{
	{"Count", helpCount, ""},
	{"Errors", helpErrors, ""},
	{"Min ms, Max ms, Average ms, p50 ms, p95 ms, p99 ms", helpLatency, ""},
	{"Min ops/s, Max ops/s, Average ops/s", "1000 / Max, Min and Average ms: the operations per second one VU would complete doing only this operation back to back, without pauses (Min ops/s is the slowest operation's, Max ops/s the fastest's); not the throughput", ""},
	{"Throughput /s", helpRate, ""},
})

// Legend is a line of a table's legend: the columns it explains and what
// they are.
type Legend struct {
	Columns, Help string
}

// legend makes a table's legend from its headers: the columns of one
// explanation together, in order, those without one left out.
func legend(hs []Header) []Legend {
	var out []Legend
	at := map[string]int{}
	for _, h := range hs {
		if h.Help == "" {
			continue
		}
		if i, ok := at[h.Help]; ok {
			out[i].Columns += ", " + h.Name
			continue
		}
		at[h.Help] = len(out)
		out = append(out, Legend{h.Name, h.Help})
	}
	return out
}

// writeMarkdownLegend writes a table's legend as a Markdown list.
func writeMarkdownLegend(w io.Writer, l []Legend) {
	var b strings.Builder
	for _, e := range l {
		fmt.Fprintf(&b, "- **%s**: %s.\n", mdEscape(e.Columns), mdEscape(e.Help))
	}
	fmt.Fprintf(w, "%s\n", b.String())
}

// Hover titles of the other tables' columns that need one.
var columnHelp = map[string]string{
	// open models
	"Latency p50":      "from each iteration's due time: start delay + service time",
	"Latency p99":      "from each iteration's due time: start delay + service time",
	"Service time p50": "from the send to the response",
	"Service time p99": "from the send to the response",
	"Start delay p50":  "from the due time to the send: waiting for a VU or for the generator",
	"Start delay p99":  "from the due time to the send: waiting for a VU or for the generator",
	"Start delay max":  "from the due time to the send: waiting for a VU or for the generator",
	"Dropped":          "iterations due while every VU was busy, never sent (in no other figure): N of M due",
	"Queued":           "iterations due while every VU was busy that waited for one",
	// errors
	"Share": "Count / the operation's requests in the stage",
	"First": "when the message was first seen: the start of the first interval that had one, clock time (UTC) and time into the run (+m:ss); to within an interval",
	"Last":  "when the message was last seen: the end of the last interval that had one, clock time (UTC) and time into the run; to within an interval",
	// thresholds
	"Actual": "the value the threshold judged, in its metric's unit (or what a regression was compared with)",
	// drift
	"Start":  "the series' level at the stage's start: the median over the stretch compared there",
	"End":    "the series' level at the stage's end: the median over the stretch compared there",
	"Change": "where the level changed, if it did",
	// scaling
	"Wall s":     "the stage's wall time in seconds",
	"Speedup":    "Requests/s over the first stage's",
	"Efficiency": "Speedup / (VUs over the first stage's VUs)",
	// resources
	"window":            "the stretch of the run the row is of",
	"cpu s":             "CPU seconds used in the window",
	"cores":             "cpu s / the window's wall seconds: the cores busy on average",
	"cpu ms/tx":         "CPU ms per transaction completed",
	"memory avg MB":     "the mean of the memory metric named (heap, cgroup memory, PSS or RSS)",
	"peak MB":           "its greatest sample",
	"slope MB/h":        "its trend over the window, MB an hour",
	"leak?":             "whether the slope says memory grows steadily",
	"gc young (avg ms)": "young collections: their count and mean pause",
	"gc full (avg ms)":  "full collections: their count and mean pause",
	"busy avg/max":      "the host's CPU busy share, mean and max of its samples",
}

// help is a column's hover title, "" when its name says it.
func help(name string) string { return columnHelp[name] }
