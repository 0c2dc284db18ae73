package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/perflab/perflab/engine"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/store"
)

// setFlags collects repeated --set name=value flags.
type setFlags []plan.Override

func (s *setFlags) String() string { return "" }

// Map returns the flags as a map of names to values (labels).
func (s setFlags) Map() map[string]string {
	m := make(map[string]string, len(s))
	for _, o := range s {
		m[o.Name] = o.Value
	}
	return m
}
func (s *setFlags) Set(v string) error {
	o, err := plan.ParseOverride(v)
	if err != nil {
		return err
	}
	*s = append(*s, o)
	return nil
}

type runFlags struct {
	set        setFlags
	labels     setFlags
	store      string
	out        string
	quiet      bool
	progress   string
	cpuprofile string
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.set, "set", "override a plan variable: --set users=20, --set 'users=[1,5,8,20]' sweeps it (repeatable)")
	fs.StringVar(&f.out, "out", "runs", "directory under which each run gets its own directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	fs.StringVar(&f.progress, "progress", "auto", "progress display: auto, live (redraw in place), plain (a line every 10s), none")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of perflab itself to this file (go tool pprof)")
	fs.Var(&f.labels, "label", "label the run, as release=Honeysuckle (repeatable); compare and runs select by labels")
	fs.StringVar(&f.store, "store", "", "run history: a SQLite file (default OUT/perflab.db), a postgres:// URL, or off")
}

func cmdRun(std *stdio, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab run PLAN.yaml [flags]\n\nRuns a plan and writes its run directory (summary.json, summary.txt, latency.hlog, plan.yaml).\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	p, err := plan.Load(fs.Arg(0), plan.Options{Set: f.set})
	if err != nil {
		fmt.Fprintln(std.err, err)
		return exitInvalidPlan
	}
	code, _ := execute(p, f, std.out, std.err)
	return code
}

// interleaved lets flags follow positional arguments (perflab run plan.yaml --set a=1).
func interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") {
				if fl := fs.Lookup(name); fl != nil {
					if bf, ok := fl.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
						if i+1 < len(args) {
							flags = append(flags, args[i+1])
							i++
						}
					}
				}
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// execute runs a validated plan, prints the results and writes the run
// directory. It returns the exit code and the run directory.
func execute(p *plan.Plan, f runFlags, stdout, stderr io.Writer) (int, string) {
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
			return exitUsage, ""
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
			return exitUsage, ""
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	// Milliseconds keep run ids unique in the history even for runs started
	// in the same second.
	runID := start.Format("20060102-150405.000") + "-" + strings.Trim(unsafeID.ReplaceAllString(p.Name, "-"), "-")
	dir := filepath.Join(f.out, runID)
	rd, err := report.CreateRunDir(dir, start, p.Source)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
		return exitRunFailed, ""
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		fmt.Fprintln(stderr, "\ninterrupted: stopping the load, running teardown, writing results (interrupt again to quit at once)")
		cancel()
		if _, ok := <-sigs; ok {
			fmt.Fprintln(stderr, "perflab: quit; results of this run may be incomplete in", dir)
			os.Exit(exitInterrupted)
		}
	}()

	mode := f.progress
	if f.quiet {
		mode = "none"
	}
	isTerm := false
	if file, ok := stderr.(*os.File); ok {
		isTerm = term.IsTerminal(int(file.Fd()))
	}
	if mode == "auto" {
		mode = "plain"
		if isTerm {
			mode = "live"
		}
	}
	st := openStore(f, stderr)
	if st != nil {
		defer st.Close()
		if err := st.Begin(runID, p.Name, p.Source, start, f.labels.Map()); err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v; the run is not recorded in the history\n", err)
			st.Close()
			st = nil
		}
	}
	storeFailed := false
	prog := &report.Progress{W: stderr, Terminal: mode == "live", Every: min(10*time.Second, p.Interval.D)}
	opts := engine.Options{
		RunID: runID,
		Sink: func(ph *metrics.Phase) metrics.Sink {
			sinks := []metrics.Sink{rd.Sink(ph)}
			if st != nil {
				sinks = append(sinks, storeSink{st, runID, ph, &storeFailed, stderr})
			}
			return multiSink(sinks)
		},
		OnEvent: func(msg string) {
			prog.Done()
			fmt.Fprintln(stderr, msg)
		},
	}
	if mode != "none" {
		opts.OnTick = prog.Tick
	}
	fmt.Fprintf(stderr, "perflab: running %s (%d stage(s)); results go to %s\n", p.Name, len(p.Stages()), dir)
	run, runErr := engine.Run(ctx, p, opts)
	prog.Done()
	for _, o := range f.set {
		run.Overrides = append(run.Overrides, metrics.KV{Name: o.Name, Value: o.Value})
	}
	sum := report.Summarize(run, report.HostFacts())
	sum.Thresholds = report.CheckThresholds(p.Thresholds, sum)
	if err := report.WriteTable(stdout, sum); err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
	}
	report.WriteThresholds(stdout, p.Thresholds, sum.Thresholds)
	if len(sum.Thresholds) > 0 {
		if err := rd.WriteFile("junit.xml", func(w io.Writer) error { return report.WriteJUnit(w, p.Thresholds, sum.Thresholds) }); err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
		}
	}
	if err := rd.Finish(sum); err != nil {
		fmt.Fprintf(stderr, "perflab: writing results: %v\n", err)
		return exitRunFailed, dir
	}
	if st != nil && !storeFailed {
		var b bytes.Buffer
		if err := sum.WriteJSON(&b); err == nil {
			err = st.Finish(runID, run.Status, run.Error, run.End, b.Bytes(), run.Stages)
		}
		if err != nil {
			fmt.Fprintf(stderr, "perflab: store: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "run %s %s; results in %s\n", runID, run.Status, dir)
	switch {
	case runErr != nil:
		fmt.Fprintf(stderr, "perflab: %v\n", runErr)
		if errors.Is(runErr, engine.ErrSetupFailed) || run.Status == metrics.StatusFailed {
			return exitRunFailed, dir
		}
		return exitRunFailed, dir
	case run.Status == metrics.StatusInterrupted:
		return exitInterrupted, dir
	case report.Failed(sum.Thresholds) > 0:
		fmt.Fprintf(stderr, "perflab: %d threshold(s) failed\n", report.Failed(sum.Thresholds))
		return exitThresholds, dir
	}
	return exitOK, dir
}

func cmdValidate(std *stdio, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var set setFlags
	fs.Var(&set, "set", "override a plan variable (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab validate PLAN.yaml [--set name=value]...\n\nChecks a plan without sending anything and prints its stages.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	p, err := plan.Load(fs.Arg(0), plan.Options{Set: set})
	if err != nil {
		fmt.Fprintln(std.err, err)
		return exitInvalidPlan
	}
	describe(std.out, p)
	return exitOK
}

// describe prints what a plan will do.
func describe(w io.Writer, p *plan.Plan) {
	stages := p.Stages()
	fmt.Fprintf(w, "%s: plan %q is valid: %d scenario(s), %d stage(s)\n", p.File, p.Name, len(p.Scenarios), len(stages))
	if len(p.Setup) > 0 || len(p.Teardown) > 0 {
		when := "once around the run"
		if p.SetupPerStage {
			when = "around every stage (it uses a swept variable)"
		}
		fmt.Fprintf(w, "  setup (%d steps) and teardown (%d steps) run %s\n", len(p.Setup), len(p.Teardown), when)
	}
	for _, st := range stages {
		vars := p.VarsFor(st)
		var parts []string
		for _, sc := range p.Scenarios {
			l, _ := sc.LoadFor(vars) // validated
			parts = append(parts, sc.Name+": "+l.String())
		}
		fmt.Fprintf(w, "  stage %d %s: %s\n", st.Index, st.Name(), strings.Join(parts, "; "))
	}
}

// openStore opens the run history named by --store (default beside the run
// directories); nil when it is off or cannot be opened, which is said once.
func openStore(f runFlags, stderr io.Writer) *store.Store {
	path := f.store
	if path == "off" {
		return nil
	}
	if path == "" {
		path = store.DefaultPath(f.out)
	}
	st, err := store.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: %v; the run is not recorded in the history\n", err)
		return nil
	}
	return st
}

// storeSink writes a stage's intervals to the run history. The run
// directory is the record that must not fail: a history that cannot be
// written is reported once and the load goes on.
type storeSink struct {
	st     *store.Store
	runID  string
	ph     *metrics.Phase
	failed *bool
	stderr io.Writer
}

func (s storeSink) Interval(iv *metrics.Interval) error {
	if *s.failed {
		return nil
	}
	if err := s.st.Interval(s.runID, s.ph, iv); err != nil {
		*s.failed = true
		fmt.Fprintf(s.stderr, "perflab: store: %v; the run goes on, recorded in its directory only\n", err)
	}
	return nil
}

// multiSink hands each interval to several sinks.
type multiSink []metrics.Sink

func (m multiSink) Interval(iv *metrics.Interval) error {
	for _, s := range m {
		if err := s.Interval(iv); err != nil {
			return err
		}
	}
	return nil
}
