// Command perflab is a performance-test lab in one binary: it runs load
// plans, simulates services and reports exact statistics.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/perflab/perflab/results"
)

// Exit codes. Documented in the README; keep them stable.
const (
	exitOK          = 0
	exitUsage       = 1 // bad command line or internal error
	exitInvalidPlan = 2 // the plan did not validate; nothing was sent
	exitRunFailed   = 3 // the run could not complete (setup failed, output not writable, ...)
	exitThresholds  = 4 // a threshold failed (perflab drift --fail-degraded: degraded; perflab doctor: a check failed)
	exitInterrupted = 130
)

var version = "dev"

type command struct {
	name, summary string
	run           func(std *stdio, args []string) int
}

// stdio is where a command writes: the process's streams, or buffers in tests.
type stdio struct {
	out, err io.Writer
}

var commands []command

func init() {
	commands = []command{
		{"run", "run a plan: perflab run PLAN.yaml [--set name=value]... [--out DIR]", cmdRun},
		{"validate", "check a plan without sending anything: perflab validate PLAN.yaml", cmdValidate},
		{"doctor", "check this host as a load generator, and say what to fix: perflab doctor [PLAN.yaml] [--json]", cmdDoctor},
		{"runs", "list the run history: perflab runs [--label release=X] [--plan NAME]", cmdRuns},
		{"show", "print a stored run: perflab show RUN_ID", cmdShow},
		{"import", "record run directories, or JMeter results and HdrHistogram logs, in the history: perflab import [--from jmeter|hdr] FILE...", cmdImport},
		{"convert", "a perflab plan from a JMeter test plan, an OpenAPI description or a browser recording: perflab convert jmeter|openapi|har FILE", cmdConvert},
		{"export", "write a stored run as a run directory: perflab export RUN_ID DIR", cmdExport},
		{"serve", "a web UI over the run history, live while runs go: perflab serve [--store ...] [--listen 127.0.0.1:5665]", cmdServe},
		{"merge", "merge the runs of several load generators into one, exactly: perflab merge RUN_DIR...", cmdMerge},
		{"k8s", "the Kubernetes manifests of a distributed run on N pods: perflab k8s PLAN.yaml --workers N | kubectl apply -f -", cmdK8s},
		{"history", "an operation across a plan's stored runs, and where it changed: perflab history PLAN", cmdHistory},
		{"report", "a run as Markdown for a wiki, HTML with charts, CSV or JUnit: perflab report RUN [--format md|html|csv|junit] [-o FILE]", cmdReport},
		{"compare", "compare runs with a statistical verdict: perflab compare BASE CANDIDATE (run dirs, run ids or labels: release=A release=B)", cmdCompare},
		{"drift", "did the system degrade over a long run: each series' trend and change of level, and the verdict: perflab drift RUN", cmdDrift},
		{"demo", "start the built-in simulator and run the bundled demo plan against it", cmdDemo},
		{"sim", "serve HTTP and gRPC stubs from a YAML file: perflab sim STUBS.yaml", cmdSim},
		{"version", "print perflab's version", func(std *stdio, _ []string) int { fmt.Fprintln(std.out, "perflab", version); return exitOK }},
	}
}

func usage(std *stdio) {
	fmt.Fprintf(std.err, "perflab %s: a performance-test lab in one binary\n\nUsage: perflab COMMAND [flags]\n\nCommands:\n", version)
	for _, c := range commands {
		fmt.Fprintf(std.err, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(std.err, "  %-9s %s\n", "help", "help COMMAND shows a command's flags")
	fmt.Fprintf(std.err, "\nExit codes: 0 ok, 1 usage or internal error, 2 invalid plan, 3 run failed, 4 threshold failed (doctor: a check failed), 130 interrupted.\nRUN arguments are run directories, run ids in the history, or label selectors such as release=Goldenrod.\n")
}

// fail reports an error of a command's input and returns the usage exit code.
func fail(std *stdio, err error) int {
	fmt.Fprintln(std.err, "perflab:", err)
	return exitUsage
}

// parseFlags parses a command's flags, which may follow its arguments; -h
// prints the command's help and exits 0.
func parseFlags(std *stdio, fs *flag.FlagSet, args []string) (int, bool) {
	fs.SetOutput(std.err)
	if err := fs.Parse(interleaved(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return 0, true
}

func main() {
	results.Version = version
	os.Exit(dispatch(&stdio{out: os.Stdout, err: os.Stderr}, os.Args[1:]))
}

func dispatch(std *stdio, args []string) int {
	if len(args) == 0 {
		usage(std)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(rest) > 0 {
			return dispatch(std, []string{rest[0], "-h"})
		}
		usage(std)
		return exitOK
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(std, rest)
		}
	}
	fmt.Fprintf(std.err, "perflab: unknown command %q\n\n", name)
	usage(std)
	return exitUsage
}
