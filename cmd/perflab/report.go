package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
)

func cmdReport(std *stdio, args []string) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "md", "md (Markdown tables for a wiki), html (a self-contained page with charts), csv (one table) or junit (the thresholds, for CI); without it, -o FILE's extension (.md, .html, .csv, .xml) chooses")
	out := fs.String("o", "", "write to this file instead of standard output")
	table := fs.String("table", "operations", "csv: the table to write: "+strings.Join(report.CSVTables, ", "))
	chartsDir := fs.String("charts", "", "md: write the charts as SVG files into this directory and show them in the Markdown (default with -o FILE.md: FILE-charts beside it)")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab report RUN_DIR|RUN_ID [--format md|html|csv|junit] [-o FILE] [--charts DIR] [--table NAME]\n\nWrites a run's tables in the shapes of hand-written performance reports:\nMarkdown for a wiki (with its charts as SVG files beside it), a\nself-contained HTML page with charts, or one table as CSV.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if !flagSet(fs, "format") && *out != "" {
		if f, ok := map[string]string{".md": "md", ".html": "html", ".htm": "html", ".csv": "csv", ".xml": "junit"}[strings.ToLower(filepath.Ext(*out))]; ok {
			*format = f
		}
	}
	rd, err := loadOneRun(fs.Arg(0), *path)
	if err != nil {
		return fail(std, err)
	}
	var write func(io.Writer, *results.Run) error
	switch *format {
	case "md":
		dir := *chartsDir
		if dir == "" && *out != "" {
			dir = strings.TrimSuffix(*out, filepath.Ext(*out)) + "-charts"
		}
		write = func(w io.Writer, rd *results.Run) error {
			if err := report.WriteMarkdown(w, rd.Summary); err != nil || dir == "" {
				return err
			}
			rel := dir
			if *out != "" {
				if r, err := filepath.Rel(filepath.Dir(*out), dir); err == nil {
					rel = r
				}
			}
			return report.WriteMarkdownCharts(w, rd, dir, rel)
		}
	case "csv":
		write = func(w io.Writer, rd *results.Run) error { return report.WriteCSVTable(w, rd, *table) }
	case "html":
		write = report.WriteHTML
	case "junit":
		write = func(w io.Writer, rd *results.Run) error { return report.WriteSummaryJUnit(w, rd.Summary) }
	default:
		fmt.Fprintf(std.err, "perflab: --format %q: want md, html, csv or junit\n", *format)
		return exitUsage
	}
	w := std.out
	if *out != "" {
		if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
			return fail(std, err)
		}
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

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
