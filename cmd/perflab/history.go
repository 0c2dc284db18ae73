package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", store.DefaultPath("runs"), "run history: a SQLite file or a postgres:// URL")
}

func cmdRuns(std *stdio, args []string) int {
	fs := flag.NewFlagSet("runs", flag.ContinueOnError)
	path := storeFlag(fs)
	var labels setFlags
	fs.Var(&labels, "label", "only runs with this label, as release=Honeysuckle (repeatable)")
	planName := fs.String("plan", "", "only runs of this plan")
	limit := fs.Int("n", 50, "at most this many runs, newest first")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab runs [--label k=v]... [--plan NAME] [--store FILE]\n\nLists the runs in the history, newest first.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	f := store.Filter{Labels: labels.Map(), Plan: *planName, Limit: *limit}
	runs, err := st.Runs(f)
	if err != nil {
		return fail(std, err)
	}
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		enc.Encode(runs)
		return exitOK
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLAN\tSTATUS\tSTART\tDURATION\tLABELS")
	for _, r := range runs {
		dur := "-"
		if !r.End.IsZero() {
			dur = r.End.Sub(r.Start).Round(100 * 1e6).String()
		}
		var ls []string
		for k, v := range r.Labels {
			ls = append(ls, k+"="+v)
		}
		status := store.Status(r.Status, r.Verdict)
		if r.Status == metrics.StatusRunning {
			status = results.LiveStatus(st, r.ID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Plan, status, r.Start.Format("2006-01-02 15:04:05"), dur, strings.Join(sortStrings(ls), " "))
	}
	tw.Flush()
	return exitOK
}

func cmdShow(std *stdio, args []string) int {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	path := storeFlag(fs)
	asJSON := fs.Bool("json", false, "print the run's summary.json")
	byWorker := fs.Bool("by-worker", false, "a distributed run: each worker's part after the run's tables, to spot an unhealthy generator")
	errorsOnly := fs.Bool("errors", false, "print every message of the run's failures, with its count and its share of the operation's requests (the tables show a stage's five most frequent)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab show RUN [--store FILE] [--json] [--by-worker] [--errors]\n\nPrints a stored run's tables (or its summary.json, or its failures by message).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	// A run that did not finish is rebuilt from its stored intervals.
	rd, err := results.FromStore(st, fs.Arg(0))
	if err != nil {
		return fail(std, err)
	}
	s := rd.Summary
	if *asJSON {
		if err := s.WriteJSON(std.out); err != nil {
			fmt.Fprintln(std.err, "perflab:", err)
			return exitUsage
		}
		return exitOK
	}
	fmt.Fprintf(std.out, "run %s of plan %s: %s, %s\n", s.RunID, s.Plan.Name, s.StatusLine(), s.Start.Format("2006-01-02 15:04:05"))
	if *errorsOnly {
		if err := report.WriteErrors(std.out, s); err != nil {
			return exitUsage
		}
		return exitOK
	}
	if o := s.Origin.Sentence(); o != "" {
		fmt.Fprintln(std.out, o)
	}
	switch {
	case s.Error != "" && s.Status == "running": // rebuilt from the history: a notice, not a failure
		fmt.Fprintf(std.out, "note: %s\n", s.Error)
	case s.Error != "":
		fmt.Fprintf(std.out, "error: %s\n", s.Error)
	}
	if err := report.WriteTable(std.out, s); err != nil {
		return exitUsage
	}
	report.WriteSummaryThresholds(std.out, s)
	if *byWorker {
		return showParts(std, st, s.RunID)
	}
	return exitOK
}

// showParts prints each worker's part of a distributed run.
func showParts(std *stdio, st *store.Store, id string) int {
	parts, err := st.Runs(store.Filter{Parent: id})
	if err != nil {
		return fail(std, err)
	}
	if len(parts) == 0 {
		fmt.Fprintf(std.err, "perflab: run %s was made by one generator: it has no workers' parts\n", id)
		return exitUsage
	}
	slices.SortFunc(parts, func(a, b store.Run) int { return strings.Compare(a.ID, b.ID) })
	for _, p := range parts {
		rd, err := results.FromStore(st, p.ID)
		if err != nil {
			fmt.Fprintf(std.out, "\n=== worker part %s: %v\n", p.ID, err)
			continue
		}
		s := rd.Summary
		fmt.Fprintf(std.out, "\n=== worker part %s (on %s): %s\n", p.ID, p.Host, s.Status)
		if s.Error != "" {
			fmt.Fprintf(std.out, "error: %s\n", s.Error)
		}
		if err := report.WriteTable(std.out, s); err != nil {
			return exitUsage
		}
	}
	return exitOK
}

// openExisting opens a store that must already exist.
func openExisting(path string) (*store.Store, error) {
	if store.IsPostgres(path) {
		return store.Open(path)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no run history at %s (runs are recorded there by perflab run; --store names another)", path)
	}
	return store.Open(path)
}

// loadRuns resolves the runs named by an argument of compare or drift: run
// directories (comma-separated), or with a history, run ids or a label
// selector such as release=Goldenrod (every run with that label).
func loadRuns(arg, storePath string) ([]*results.Run, error) {
	var out []*results.Run
	var st *store.Store
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	for _, item := range strings.Split(arg, ",") {
		if fi, err := os.Stat(item); err == nil && fi.IsDir() {
			rd, err := results.ReadDir(item)
			if err != nil {
				return nil, err
			}
			out = append(out, rd)
			continue
		}
		if st == nil {
			var err error
			if st, err = openExisting(storePath); err != nil {
				return nil, fmt.Errorf("%s is not a run directory, and %w", item, err)
			}
		}
		if strings.Contains(item, "=") {
			runs, err := results.LabelledRuns(st, item, "", "")
			if err != nil {
				return nil, err
			}
			if len(runs) == 0 {
				return nil, fmt.Errorf("no stored run has the label %s", item)
			}
			out = append(out, runs...)
			continue
		}
		rd, err := results.FromStore(st, item)
		if err != nil {
			return nil, err
		}
		out = append(out, rd)
	}
	return out, nil
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// loadOneRun resolves an argument that must name exactly one run.
func loadOneRun(arg, storePath string) (*results.Run, error) {
	rds, err := loadRuns(arg, storePath)
	if err != nil {
		return nil, err
	}
	if len(rds) != 1 {
		return nil, fmt.Errorf("%s names %d runs; give one", arg, len(rds))
	}
	return rds[0], nil
}
