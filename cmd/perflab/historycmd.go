package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func cmdHistory(std *stdio, args []string) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	path := storeFlag(fs)
	pct := fs.Float64("percentile", 95, "the percentile followed across runs: 50, 75, 90, 95, 99 or 99.9")
	minRuns := fs.Int("min-runs", 3, "the fewest runs on each side of a change")
	asJSON := fs.Bool("json", false, "print JSON")
	var labels setFlags
	fs.Var(&labels, "label", "only runs with this label (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab history PLAN_NAME [--percentile 95] [--min-runs 3] [--label k=v]...\n\nFollows each operation of a plan across its stored runs, oldest first, and names\nthe run where each change of level began. A change needs --min-runs runs on\neach side of it and Mann-Whitney significance (alpha 0.05, corrected for the\nnumber of places tried): even a clean step needs 6 runs on each side.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if !judge.HistoryPercentile(*pct) {
		fmt.Fprintf(std.err, "perflab history: --percentile %g: the history keeps 50, 75, 90, 95, 99 and 99.9 of each run\n", *pct)
		return exitUsage
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	sums, err := results.Completed(st, store.Filter{Plan: fs.Arg(0), Labels: labels.Map()})
	if err != nil {
		return fail(std, err)
	}
	if len(sums) == 0 {
		fmt.Fprintf(std.err, "perflab: no completed run of plan %q in %s\n", fs.Arg(0), *path)
		return exitUsage
	}
	hs := judge.History(sums, *pct, *minRuns)
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		enc.Encode(hs)
		return exitOK
	}
	report.WriteHistory(std.out, hs, *pct)
	return exitOK
}
