package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"strconv"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

// windowFlags collects repeated --window flags.
type windowFlags []judge.Window

func (w *windowFlags) String() string { return "" }
func (w *windowFlags) Set(s string) error {
	win, err := judge.ParseWindow(s)
	if err != nil {
		return err
	}
	*w = append(*w, win)
	return nil
}

// floatFlags collects repeated float flags.
type floatFlags []float64

func (f *floatFlags) String() string { return "" }
func (f *floatFlags) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v >= 100 {
		return fmt.Errorf("%q: want a percentile between 0 and 100", s)
	}
	*f = append(*f, v)
	return nil
}

func cmdDrift(std *stdio, args []string) int {
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	var windows windowFlags
	fs.Var(&windows, "window", "a window of each stage: first:2h, last:12h or all (repeatable; default all); first: and last: are also the stretches whose levels the verdict compares (default: each stage's first and last tenth)")
	var pcts floatFlags
	fs.Var(&pcts, "percentile", "a percentile of latency judged beside the mean (repeatable; default 95)")
	alpha := fs.Float64("alpha", judge.DefaultDriftAlpha, "family-wise significance level of the tests (Holm's correction over all of them)")
	minEffect := fs.Float64("min-effect", judge.DefaultMinEffect, "smallest relative change that counts as degraded (0.2: 20%)")
	minErrors := fs.Float64("min-error-rise", judge.DefaultMinErrorRise, "smallest rise of an error ratio that counts, absolute (0.01: one percentage point)")
	failDegraded := fs.Bool("fail-degraded", false, "exit with code 4 when the run degraded")
	asJSON := fs.Bool("json", false, "print the windows and the verdict as JSON")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab drift RUN_DIR|RUN_ID [--window first:2h --window last:12h]... [flags]

Did the system degrade over a long run? Each operation's figures per window,
then every series of every stage (throughput, error ratio, each operation's
mean and percentiles of latency, each monitored resource of the system under
test) tested for a trend and for a change of level, with a sentence each,
and the verdict: degraded when one got worse by at least the minimum effect
at the family's significance. A series needs 12 intervals, a rate per hour
10 minutes of data.

Flags:`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if *alpha <= 0 || *alpha >= 1 || *minEffect <= 0 || *minErrors <= 0 {
		fmt.Fprintln(std.err, "perflab drift: --alpha must be between 0 and 1, --min-effect and --min-error-rise above 0")
		return exitUsage
	}
	if len(windows) == 0 {
		windows = windowFlags{{}}
	}
	rd, err := loadOneRun(fs.Arg(0), *path)
	if err != nil {
		return fail(std, err)
	}
	for _, w := range judge.WindowWarnings(rd, windows) {
		fmt.Fprintln(std.err, "perflab drift: warning:", w)
	}
	o := judge.LongevityOptions{Percentiles: pcts, Alpha: *alpha, MinEffect: *minEffect, MinErrorRise: *minErrors}
	for _, w := range windows {
		switch {
		case w.Length == 0:
		case w.Last:
			o.Last = w.Length
		default:
			o.First = w.Length
		}
	}
	ws := judge.Windows(rd, windows)
	d := judge.Longevity(rd, o)
	code := exitOK
	if d != nil && d.Degraded && *failDegraded {
		code = exitThresholds
	}
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Windows []judge.OpWindows `json:"windows"`
			Drift   *results.Drift    `json:"drift"`
		}{ws, d}); err != nil {
			return exitUsage
		}
		return code
	}
	if err := report.WriteWindows(std.out, ws); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	if d == nil {
		fmt.Fprintf(std.out, "\ndrift over time: too short to judge: no stage has %d intervals\n", judge.MinDriftValues)
		return code
	}
	if err := report.WriteDrift(std.out, d); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	return code
}
