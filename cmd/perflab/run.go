package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	"github.com/perflab/perflab/results"
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

// secretFlags collects repeated --secret name=value flags into the --set
// list, each marked secret: its value is used as --set's is, taken as it
// is (a list is no sweep), and not kept.
type secretFlags struct{ set *setFlags }

func (s secretFlags) String() string { return "" }
func (s secretFlags) Set(v string) error {
	o, err := plan.ParseOverride(v)
	if err != nil {
		return err
	}
	o.Secret = true
	*s.set = append(*s.set, o)
	return nil
}

// secretUsage is --secret's usage.
const secretUsage = "override a plan variable with a secret, as --set does (repeatable): the value is sent, and kept as [redacted] (summary.json, the run directory, the history), as a --set of a name such as token, api_key or password is"

// labelFlags collects repeated --label name=value flags: a run's labels,
// each name and value one line (plan.CheckName).
type labelFlags struct{ setFlags }

func (l *labelFlags) Set(v string) error {
	o, err := plan.ParseOverride(v)
	if err == nil {
		err = errors.Join(plan.CheckName("label", o.Name), plan.CheckName("label value", o.Value))
	}
	if err != nil {
		return err
	}
	l.setFlags = append(l.setFlags, o)
	return nil
}

// listFlag collects names: repeated, or separated by commas.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			*l = append(*l, n)
		}
	}
	return nil
}

type runFlags struct {
	set        setFlags
	load       loadFlags
	labels     labelFlags
	store      string
	out        string
	quiet      bool
	progress   string
	cpuprofile string
	memprofile string
	monitors   monitorFlags
	// a distributed run: --segment and --run-id make a worker; --workers
	// starts workers on this machine
	segment     string
	runID       string
	joinTimeout time.Duration
	workers     int
	worker      *lab.Worker
	// args are the flags as given, for the workers --workers starts
	args []string
	// --serve: the web UI beside the run
	serve       serveFlag
	serveToken  string
	servePublic bool
	serveHosts  listFlag
	// --metrics-listen: Prometheus' /metrics
	metrics       metricsListen
	metricsLinger time.Duration
	remoteWrite   string
	// --dump-failures: failed requests to failures.jsonl
	failures failuresFlag
}

// failuresFlag is --dump-failures: alone, the first DefaultFailures
// failed requests; --dump-failures=N, the first N, at most MaxFailures.
// A value it does not take is said by check, after the flags are parsed:
// the flag package calls any error of a boolean flag an "invalid boolean
// value".
type failuresFlag struct {
	n   int
	err error
}

func (f *failuresFlag) String() string   { return strconv.Itoa(f.n) }
func (f *failuresFlag) IsBoolFlag() bool { return true }
func (f *failuresFlag) Set(v string) error {
	switch v {
	case "true":
		f.n = phttp.DefaultFailures
	case "false":
		f.n = 0
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && n > phttp.MaxFailures:
			f.err = fmt.Errorf("--dump-failures=%s: at most %d failed requests (%d KiB of each request and of its response: up to %.0f MB of %s, read whole by every report); the errors by kind and by message count every failure",
				v, phttp.MaxFailures, phttp.FailureBytes>>10, 2*phttp.FailureBytes*phttp.MaxFailures/1e6, lab.FailuresFile)
		case err != nil:
			f.err = fmt.Errorf("--dump-failures=%s: want a number of failed requests from 0 to %d, or --dump-failures alone for the first %d", v, phttp.MaxFailures, phttp.DefaultFailures)
		default:
			f.n = int(n)
		}
	}
	return nil
}

// check says what was wrong with the flag's value, or with a count
// given after a space (--dump-failures 5), which a boolean flag does not
// take: it stays among the positional arguments, pos.
func (f *failuresFlag) check(fs *flag.FlagSet, pos []string) error {
	if f.err != nil {
		return f.err
	}
	if !flagSet(fs, "dump-failures") {
		return nil
	}
	for _, a := range pos {
		if _, err := strconv.ParseUint(a, 10, 64); err == nil {
			return fmt.Errorf("--dump-failures %s: give the count as --dump-failures=%s (alone, --dump-failures writes the first %d)", a, a, phttp.DefaultFailures)
		}
	}
	return nil
}

func (f *runFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.set, "set", "override a plan variable: --set users=20, --set 'users=[1,5,8,20]' sweeps it (repeatable)")
	fs.Var(secretFlags{&f.set}, "secret", secretUsage)
	fs.StringVar(&f.out, "out", "runs", "directory under which each run gets its own directory")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	fs.StringVar(&f.progress, "progress", "auto", "progress display: auto, live (redraw in place), plain (a line per interval), none")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of perflab itself to this file (go tool pprof)")
	fs.StringVar(&f.memprofile, "memprofile", "", "write a heap profile of perflab itself to this file as the run ends, what it allocated and what it held (go tool pprof -sample_index=alloc_space)")
	fs.Var(&f.labels, "label", "label the run, as release=Honeysuckle (repeatable); compare and runs select by labels")
	fs.StringVar(&f.store, "store", "", "run history: a SQLite file (default OUT/perflab.db), a postgres:// URL, or off")
	fs.Var(&f.failures, "dump-failures", fmt.Sprintf("write the first failed HTTP requests and their responses (%d, or --dump-failures=N, N at most %d) to the run directory's %s, %d KiB of each, secrets redacted", phttp.DefaultFailures, phttp.MaxFailures, lab.FailuresFile, phttp.FailureBytes>>10))
	fs.Var(&f.monitors, "monitor", "watch the system under test besides the plan's monitors: KIND:KEY=VALUE,... such as process:pattern=java, jvm:pid=4242, postgres:dsn=postgres://..., cgroup:path=/sys/fs/cgroup/x, prometheus:url=http://...,series=a;b (repeatable)")
}

// registerDistributed adds run's flags of a distributed run.
func (f *runFlags) registerDistributed(fs *flag.FlagSet) {
	fs.StringVar(&f.segment, "segment", "", "run as worker INDEX/COUNT of a distributed run (0-based: 0/3, 1/3, 2/3), its share of every scenario; needs --run-id and a shared --store postgres://...")
	fs.StringVar(&f.runID, "run-id", "", "the distributed run's id, the same for every worker (with --segment)")
	fs.DurationVar(&f.joinTimeout, "join-timeout", 2*time.Minute, "how long the workers of a distributed run wait for each other to start")
	fs.IntVar(&f.workers, "workers", 0, "run the plan as N worker processes on this machine, one distributed run (a SQLite or PostgreSQL --store)")
}

func cmdRun(std *stdio, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	f.load.register(fs)
	f.registerDistributed(fs)
	fs.Var(&f.serve, "serve", "serve the run's live page (the web UI of perflab serve) while it goes, on "+defaultServe+" or --serve=ADDR; its URL is printed")
	fs.StringVar(&f.metrics.addr, "metrics-listen", "", "expose the run's live figures for Prometheus at http://ADDR/metrics (loopback, such as 127.0.0.1:9464; anything but loopback needs --metrics-token or --metrics-insecure-public)")
	fs.StringVar(&f.metrics.token, "metrics-token", "", "with --metrics-listen: ask every scrape for this token (Authorization: Bearer; Prometheus' authorization: {credentials: TOKEN})")
	fs.BoolVar(&f.metrics.public, "metrics-insecure-public", false, "with --metrics-listen beyond loopback: no token, anyone who reaches the address reads the run's figures")
	fs.Var(&f.metrics.allowed, "metrics-allowed-host", "with --metrics-listen: a name /metrics is reached by besides its address (and localhost on loopback): scrapes naming another host are refused, against DNS rebinding (repeatable)")
	fs.StringVar(&f.remoteWrite, "prometheus-remote-write", "", "push the run's live figures every 5 s, and at its end, to this Prometheus remote-write URL (such as http://127.0.0.1:9090/api/v1/write)")
	fs.DurationVar(&f.metricsLinger, "metrics-linger", 0, "with --metrics-listen: go on serving the run's final figures this long after it ends, for a last scrape")
	fs.StringVar(&f.serveToken, "serve-token", "", "with --serve beyond loopback: ask every request for this token")
	fs.BoolVar(&f.servePublic, "serve-insecure-public", false, "with --serve beyond loopback: no token")
	fs.Var(&f.serveHosts, "serve-allowed-host", "with --serve: a name the live server is reached by besides its address (and localhost on loopback): requests naming another host are refused, against DNS rebinding (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab run PLAN.yaml [flags]\n\nRuns a plan and writes its run directory (summary.json, summary.txt, latency.hlog, intervals.csv, totals.jsonl, resources.csv, plan.yaml, run.json).\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if err := f.failures.check(fs, fs.Args()[min(1, fs.NArg()):]); err != nil {
		return fail(std, err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	p, err := plan.Load(fs.Arg(0), plan.Options{Set: f.set, Load: f.load.LoadOverride})
	if err != nil {
		return planFailed(std, err)
	}
	warnPlan(std, p)
	if flagSet(fs, "run-id") {
		if err := results.CheckRunID(f.runID); err != nil {
			return fail(std, fmt.Errorf("--run-id: %w", err))
		}
	}
	if f.workers != 0 || f.segment != "" || f.runID != "" {
		return distributed(std, fs.Arg(0), p, &f)
	}
	code, _ := execute(p, f, std.out, std.err)
	return code
}

// loadFlags are the load of a scenario given on the command line: --vus,
// --iterations, --total-iterations, --duration, --rate, --max-vus, and
// --scenario naming the scenarios they change (plan.LoadOverride).
type loadFlags struct{ plan.LoadOverride }

// loadUsage is each load flag's help.
var loadUsage = map[string]string{
	"vus":              "run `N` VUs in the scenario, in place of its vus (in an arrival-rate scenario: the VUs started beforehand); '[1,5,10]' sweeps them",
	"iterations":       "each VU runs `N` iterations (per VU, as the plan's iterations), in place of the scenario's iterations and duration; with --duration, whichever ends first",
	"total_iterations": "the VUs share `N` iterations (as k6's --iterations), in place of the scenario's iterations and duration",
	"duration":         "run the scenario for `D` (30s, 5m), in place of its iterations and duration",
	"rate":             "start `R` iterations a second (a constant arrival rate), for --duration or the scenario's duration, in place of its load model",
	"max_vus":          "with --rate: the arrival rate may use up to `N` VUs (default: --vus, or the scenario's vus)",
}

func (l *loadFlags) register(fs *flag.FlagSet) {
	fs.Func("scenario", "give the load of scenario `NAME` with --vus, --duration, --iterations, --total-iterations, --rate and --max-vus (repeatable; needed in a plan of several scenarios)", func(v string) error {
		l.Scenarios = append(l.Scenarios, v)
		return nil
	})
	for _, f := range plan.LoadFields {
		fs.Func(strings.TrimPrefix(plan.LoadFlag(f), "--"), loadUsage[f], func(v string) error {
			if l.Values == nil {
				l.Values = map[string]string{}
			}
			l.Values[f] = v
			return nil
		})
	}
}

// planFailed prints why a plan was refused; the exit code is 1 when every
// error is a flag's (--vus 0, --set of no variable), else 2.
// warnPlan says a loaded plan's warnings, each at its place.
func warnPlan(std *stdio, p *plan.Plan) {
	for _, w := range p.Warnings {
		fmt.Fprintln(std.err, w.Warn())
	}
}

func planFailed(std *stdio, err error) int {
	fmt.Fprintln(std.err, err)
	var l plan.ErrorList
	if errors.As(err, &l) && l.CommandLine() {
		return exitUsage
	}
	return exitInvalidPlan
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

// planFlags change a plan as it loads: --set and the load flags, as
// perflab run takes them.
type planFlags struct {
	set  setFlags
	load loadFlags
}

func (f *planFlags) register(fs *flag.FlagSet, setUsage string) {
	fs.Var(&f.set, "set", setUsage)
	fs.Var(secretFlags{&f.set}, "secret", secretUsage)
	f.load.register(fs)
}

// given reports whether any of the flags was given.
func (f *planFlags) given() bool {
	return len(f.set) > 0 || f.load.Values != nil || f.load.Scenarios != nil
}

// plan loads the plan at path with the flags.
func (f *planFlags) plan(path string) (*plan.Plan, error) {
	return plan.Load(path, plan.Options{Set: f.set, Load: f.load.LoadOverride})
}

func cmdValidate(std *stdio, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	var pf planFlags
	pf.register(fs, "override a plan variable (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab validate PLAN.yaml [--set name=value]... [--vus N] [--duration D] ...\n\nChecks a plan without sending anything and prints its stages, with the load given as perflab run would run it.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	p, err := pf.plan(fs.Arg(0))
	if err != nil {
		return planFailed(std, err)
	}
	warnPlan(std, p)
	describe(std.out, p)
	return exitOK
}

// describe prints what a plan will do.
func describe(w io.Writer, p *plan.Plan) {
	stages := p.Stages()
	fmt.Fprintf(w, "%s: plan %q is valid: %d scenario(s), %d stage(s); %s\n", p.File, p.Name, len(p.Scenarios), len(stages), p.IntervalText())
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

// execute runs a validated plan (lab.Run) with the command's flags, the
// first Ctrl-C stopping the load and a second quitting at once. It returns
// the exit code and the run directory.
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
	if f.memprofile != "" {
		pf, err := os.Create(f.memprofile)
		if err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
			return exitUsage, ""
		}
		defer func() {
			if err := pprof.Lookup("heap").WriteTo(pf, 0); err != nil {
				fmt.Fprintf(stderr, "perflab: %v\n", err)
			}
			pf.Close()
		}()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer onStopSignals(func(os.Signal) {
		cancel()
		fmt.Fprintln(stderr, "\ninterrupted: stopping the load, running teardown, writing results (interrupt again to quit at once)")
	}, func(os.Signal) {
		fmt.Fprintln(stderr, "perflab: quit; the results of this run may be incomplete")
		os.Exit(exitInterrupted)
	})()
	progress := f.progress
	if f.quiet {
		progress = "none"
	}
	cfg := lab.Config{Out: f.out, Store: f.store, Labels: f.labels.Map(), Overrides: f.set,
		Progress: progress, Stdout: stdout, Stderr: stderr, Monitors: f.monitors.specs, Worker: f.worker, Failures: f.failures.n}
	if f.serve.addr != "" {
		storePath := f.store
		if storePath == "" {
			storePath = store.DefaultPath(f.out)
		}
		live, err := startLive(f.serve.addr, storePath, f.serveToken, f.servePublic, f.serveHosts, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "perflab: --serve: %v\n", err)
			return exitUsage, ""
		}
		defer live.stop()
		cfg.Started = func(id string) { fmt.Fprintf(stderr, "perflab: the run's live page: %s\n", live.URL(id)) }
	}
	if f.metrics.addr != "" || f.remoteWrite != "" {
		m, err := startMetrics(f.metrics, f.remoteWrite, p.Name, cfg.Labels, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
			return exitUsage, ""
		}
		defer m.stop(f.metricsLinger)
		started := cfg.Started
		cfg.Started = func(id string) {
			m.exp.SetRun(id)
			if m.addr != "" {
				fmt.Fprintf(stderr, "perflab: Prometheus metrics at http://%s/metrics\n", m.addr)
			}
			if started != nil {
				started(id)
			}
		}
		cfg.Observe = m.exp.Tick
	}
	res, err := lab.Run(ctx, p, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "perflab: %v\n", err)
		if res != nil {
			return exitRunFailed, res.Dir
		}
		return exitRunFailed, ""
	}
	return exitCodes[res.Outcome], res.Dir
}

// exitCodes are the exit codes of the outcomes.
var exitCodes = map[lab.Outcome]int{lab.Completed: exitOK, lab.ThresholdsFailed: exitThresholds, lab.Interrupted: exitInterrupted, lab.Failed: exitRunFailed}

// monitorFlags are --monitor KIND:KEY=VALUE,... values.
type monitorFlags struct {
	specs []monitor.Spec
	raw   []string // as given, for the workers of --workers
}

func (m *monitorFlags) String() string { return "" }

// Set reads one monitor: its kind, then comma-separated settings (name,
// pid, pattern, command (split at spaces), path, url, series (split at
// semicolons), dsn, slow_threshold).
func (m *monitorFlags) Set(v string) error {
	kind, rest, _ := strings.Cut(v, ":")
	s := monitor.Spec{Kind: kind, Name: kind}
	for _, kv := range strings.Split(rest, ",") {
		if kv == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		var err error
		switch k {
		case "name":
			s.Name = val
		case "pid":
			s.PID, err = strconv.Atoi(val)
		case "pattern":
			s.Pattern = val
		case "command":
			s.Command = strings.Fields(val)
		case "path":
			s.Path = val
		case "url":
			s.URL = val
		case "series":
			s.Series = strings.Split(val, ";")
		case "dsn":
			s.DSN = val
		case "slow_threshold":
			s.SlowThreshold, err = time.ParseDuration(val)
		default:
			return fmt.Errorf("unknown setting %q: want name, pid, pattern, command, path, url, series, dsn or slow_threshold", k)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	if err := s.Validate(); err != nil {
		return err
	}
	m.specs = append(m.specs, s)
	m.raw = append(m.raw, v)
	return nil
}
