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
	format := fs.String("format", "md", "md (Markdown tables for a wiki), html (a self-contained page with charts) or csv (every operation of every stage)")
	out := fs.String("o", "", "write to this file instead of standard output")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab report RUN_DIR|RUN_ID [--format md|html|csv] [-o FILE]\n\nWrites a run's tables in the seed reports' shapes.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	rd, err := loadOneRun(fs.Arg(0), *path)
	if err != nil {
		return fail(std, err)
	}
	var write func(io.Writer, *report.RunData) error
	switch *format {
	case "md":
		write = func(w io.Writer, rd *report.RunData) error { return report.WriteMarkdown(w, rd.Summary) }
	case "csv":
		write = func(w io.Writer, rd *report.RunData) error { return report.WriteCSV(w, rd.Summary) }
	case "html":
		write = report.WriteHTML
	default:
		fmt.Fprintf(std.err, "perflab: --format %q: want md, html or csv\n", *format)
		return exitUsage
	}
	w := std.out
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return fail(std, err)
		}
		defer f.Close()
		w = f
	}
	if err := write(w, rd); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	return exitOK
}
