package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/report"
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

func cmdDrift(std *stdio, args []string) int {
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	var windows windowFlags
	fs.Var(&windows, "window", "a window of each stage: first:2h, last:12h or all (repeatable; default all)")
	pct := fs.Float64("percentile", 95, "the percentile followed over time")
	asJSON := fs.Bool("json", false, "print the analysis as JSON")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab drift RUN_DIR|RUN_ID [--window first:2h --window last:12h]...\n\nShows how a long run behaved over time: figures per window, a trend test of each\ninterval's percentile, and the points where it changed level.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
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
	ds := judge.Drift(rd, *pct, windows)
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(ds); err != nil {
			return exitUsage
		}
		return exitOK
	}
	if err := report.WriteDrift(std.out, ds, *pct); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	return exitOK
}
