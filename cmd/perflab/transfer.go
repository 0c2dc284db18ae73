package main

import (
	"flag"
	"fmt"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func cmdImport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	path := fs.String("store", store.DefaultPath("runs"), "run history: a SQLite file or a postgres:// URL")
	var labels setFlags
	fs.Var(&labels, "label", "label the imported run, as release=Goldenrod (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab import RUN_DIR... [--label k=v]...\n\nRecords run directories (from another machine, or from before the history) in the history.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	st, err := store.Open(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	for _, dir := range fs.Args() {
		id, err := results.Import(st, dir, labels.Map())
		if err != nil {
			fmt.Fprintf(std.err, "perflab: %s: %v\n", dir, err)
			return exitUsage
		}
		fmt.Fprintf(std.out, "imported %s as run %s\n", dir, id)
	}
	return exitOK
}

func cmdExport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab export RUN_ID DIR\n\nWrites a stored run as a run directory (summary.json, plan.yaml, latency.hlog).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	s, err := results.Export(st, fs.Arg(0), fs.Arg(1))
	if err == nil {
		err = report.WriteRunFiles(fs.Arg(1), s)
	}
	if err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	fmt.Fprintf(std.out, "exported run %s to %s\n", fs.Arg(0), fs.Arg(1))
	return exitOK
}

func cmdMerge(std *stdio, args []string) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	out := fs.String("out", "runs", "directory under which the merged run gets its own")
	storePath := fs.String("store", "", "run history: a SQLite file (default OUT/perflab.db), a postgres:// URL, or off")
	var labels setFlags
	fs.Var(&labels, "label", "label the merged run, as release=Goldenrod (repeatable; added to the first run's labels)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab merge RUN_DIR... [--out DIR] [--store FILE] [--label k=v]...

Merges the runs of one plan made at the same time by several load
generators (each running its share of the load) into one run, exactly:
each operation's counts, errors and HDR histograms add up, so the merged
percentiles are those of all the samples. The merged run gets its own
directory and its place in the history; its thresholds are judged on the
whole. The runs must have finished (their totals.jsonl).`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return exitUsage
	}
	res, err := lab.Merge(fs.Args(), lab.Config{Out: *out, Store: *storePath, Labels: labels.Map(), Stdout: std.out, Stderr: std.err})
	if err != nil {
		return fail(std, err)
	}
	return exitCodes[res.Outcome]
}
