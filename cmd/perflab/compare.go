package main

import (
	"encoding/json"
	"flag"
	"fmt"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

func cmdCompare(std *stdio, args []string) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	pct := fs.Float64("percentile", 75, "the percentile compared (the check-in/check-out report of examples/circulation compares p75)")
	alpha := fs.Float64("alpha", 0.05, "significance level of the verdicts")
	minChange := fs.Float64("min-change", 0.05, "smallest change (a fraction of the baseline) called better or worse")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab compare BASE CANDIDATE [flags]\n\nBASE and CANDIDATE are run directories, stored run ids, or label selectors such as\nrelease=Goldenrod (every stored run with that label); several, comma-separated, are pooled.\n\nCompares runs stage by stage and operation by operation: a percentile and the mean,\nwith a verdict (better, worse, no significant change) from a Mann-Whitney U test over\nthe runs' interval values.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	read := func(arg string) ([]*results.Run, error) { return loadRuns(arg, *path) }
	base, err := read(fs.Arg(0))
	if err != nil {
		return fail(std, err)
	}
	cand, err := read(fs.Arg(1))
	if err != nil {
		return fail(std, err)
	}
	rc, err := judge.Compare(base, cand, *pct, *alpha, *minChange)
	if err != nil {
		return fail(std, err)
	}
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rc); err != nil {
			fmt.Fprintln(std.err, "perflab:", err)
			return exitUsage
		}
		return exitOK
	}
	if err := report.WriteComparison(std.out, rc); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	return exitOK
}
