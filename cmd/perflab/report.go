package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/perflab/perflab/report"
)

func cmdReport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "md", "md (Markdown tables for a wiki) or csv (every operation of every stage)")
	out := fs.String("o", "", "write to this file instead of standard output")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab report RUN_DIR|RUN_ID [--format md|csv] [-o FILE]\n\nWrites a run's tables in the seed reports' shapes.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	rds, err := loadRuns(fs.Arg(0), *path)
	if err != nil || len(rds) != 1 {
		if err == nil {
			err = fmt.Errorf("report shows one run; %s names %d", fs.Arg(0), len(rds))
		}
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	var write func(io.Writer, *report.Summary) error
	switch *format {
	case "md":
		write = report.WriteMarkdown
	case "csv":
		write = report.WriteCSV
	default:
		fmt.Fprintf(std.err, "perflab: --format %q: want md or csv\n", *format)
		return exitUsage
	}
	w := std.out
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(std.err, "perflab:", err)
			return exitUsage
		}
		defer f.Close()
		w = f
	}
	if err := write(w, rds[0].Summary); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	return exitOK
}
