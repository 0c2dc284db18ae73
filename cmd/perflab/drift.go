package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
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
	save := fs.Bool("save", false, "store this verdict with the run even when judged with options other than the defaults (with the defaults it always is)")
	path := storeFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab drift RUN_DIR|RUN_ID [--window first:2h --window last:12h]... [flags]

Did the system degrade over a long run? Each operation's figures per window,
then every series of every stage (throughput, error ratio, each operation's
mean and percentiles of latency, each monitored resource of the system under
test) tested for a trend and for a change of level, with a sentence each,
and the verdict: degraded when one got worse by at least the minimum effect
at the family's significance. A series needs 12 intervals, a rate per hour
10 minutes of data. Changes that did not last (an outage, a burst of errors,
a latency excursion, a service not ready at the start) are incidents, each
with its start, end and size. Judged with the defaults, the verdict is the
run's own, and is stored with it (its summary.json and the history).

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
	d, judgeErr := judgeDrift(rd, o)
	var errs []string
	if judgeErr != nil {
		errs = append(errs, judgeErr.Error())
	}
	// The verdict with the defaults is the run's own: it is stored with
	// the run, replacing the one it ended with (one whose analysis failed
	// gets it here).
	defaults, storeSet := true, false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "store":
			storeSet = true
		case "alpha", "min-effect", "min-error-rise", "percentile":
			defaults = false
		}
	})
	if o.First > 0 || o.Last > 0 {
		defaults = false
	}
	var saved []string
	if judgeErr == nil && (defaults || *save) {
		var err error
		switch saved, err = saveDrift(rd, d, *path, storeSet); {
		case err != nil && *save:
			errs = append(errs, "storing the verdict: "+err.Error())
		case err != nil: // a run kept read-only is still judged
			fmt.Fprintln(std.err, "perflab drift: warning: the verdict is not stored with the run:", err)
		}
	}
	code := exitOK
	if d != nil && d.Degraded && *failDegraded {
		code = exitThresholds
	}
	if len(errs) > 0 {
		code = exitUsage
	}
	if *asJSON {
		doc := struct {
			Windows []judge.OpWindows `json:"windows"`
			Drift   *results.Drift    `json:"drift"`
			Saved   []string          `json:"saved,omitempty"`
			Errors  []string          `json:"errors,omitempty"`
		}{ws, d, saved, errs}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil { // a verdict JSON cannot hold: said, not lost
			doc.Drift, doc.Errors = nil, append(doc.Errors, "the verdict does not encode: "+err.Error())
			if b, err = json.MarshalIndent(doc, "", "  "); err != nil {
				b, _ = json.Marshal(map[string][]string{"errors": doc.Errors})
			}
			code = exitUsage
		}
		std.out.Write(append(b, '\n'))
		return code
	}
	for _, e := range errs {
		fmt.Fprintln(std.err, "perflab drift:", e)
	}
	for _, where := range saved {
		fmt.Fprintln(std.err, "perflab drift: the verdict is stored with the run in", where)
	}
	if err := report.WriteWindows(std.out, ws); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitUsage
	}
	if judgeErr != nil {
		return code
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

// judgeDrift judges a run's drift; a verdict that fails (a panic, a
// number JSON cannot hold) is an error, not a crash.
func judgeDrift(rd *results.Run, o judge.LongevityOptions) (d *results.Drift, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("judging the drift: panic: %v", r)
		}
	}()
	d = judge.Longevity(rd, o)
	if _, err := json.Marshal(d); err != nil {
		return nil, fmt.Errorf("the verdict does not encode: %w", err)
	}
	return d, nil
}

// saveDrift stores a run's drift verdict with it: in its directory's
// summary.json when it was read from one, and in the history that holds
// it: the one named (storeSet), else, for a run directory, the one beside
// it where perflab run keeps it. It returns where.
func saveDrift(rd *results.Run, d *results.Drift, storePath string, storeSet bool) ([]string, error) {
	sum := rd.Summary
	if sum == nil {
		return nil, errors.New("the run has no summary: it did not finish")
	}
	sum.Drift = d
	judge.OneVerdict(sum)
	sum.SetAnalysisError(results.AnalysisDrift, nil)
	var b bytes.Buffer
	if err := sum.WriteJSON(&b); err != nil {
		return nil, err
	}
	var where []string
	if fi, err := os.Stat(rd.Source); err == nil && fi.IsDir() {
		if err := writeFileAtomic(filepath.Join(rd.Source, "summary.json"), b.Bytes()); err != nil {
			return nil, err
		}
		where = append(where, filepath.Join(rd.Source, "summary.json"))
	}
	if fi, err := os.Stat(rd.Source); err == nil && fi.IsDir() && !storeSet {
		storePath = store.DefaultPath(filepath.Dir(rd.Source))
	}
	st, err := openExisting(storePath)
	if err != nil {
		if len(where) > 0 { // a run directory without a history
			return where, nil
		}
		return nil, err
	}
	defer st.Close()
	switch err := st.SetSummary(sum.RunID, b.Bytes()); {
	case err == nil:
		where = append(where, "the run history")
	case errors.Is(err, store.ErrNotFound) && len(where) > 0:
	default:
		return where, err
	}
	return where, nil
}

// writeFileAtomic replaces a file with data, whole or not at all.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".summary-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
