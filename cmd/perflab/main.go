// Command perflab is a performance-test lab in one binary: it runs load
// plans, simulates services and reports exact statistics.
package main

import (
	"fmt"
	"os"

	"github.com/perflab/perflab/report"
)

// Exit codes. Documented in the README; keep them stable.
const (
	exitOK          = 0
	exitUsage       = 1 // bad command line or internal error
	exitInvalidPlan = 2 // the plan did not validate; nothing was sent
	exitRunFailed   = 3 // the run could not complete (setup failed, output not writable, ...)
	exitThresholds  = 4 // reserved: a threshold failed
	exitInterrupted = 130
)

var version = "dev"

type command struct {
	name, summary string
	run           func(args []string) int
}

var commands []command

func init() {
	commands = []command{
		{"run", "run a plan: perflab run PLAN.yaml [--set name=value]... [--out DIR]", cmdRun},
		{"validate", "check a plan without sending anything: perflab validate PLAN.yaml", cmdValidate},
		{"demo", "start the built-in simulator and run the bundled demo plan against it", cmdDemo},
		{"sim", "serve HTTP stubs from a YAML file: perflab sim STUBS.yaml", cmdSim},
		{"version", "print perflab's version", func([]string) int { fmt.Println("perflab", version); return exitOK }},
	}
}

func usage() {
	fmt.Fprintf(os.Stderr, "perflab %s: a performance-test lab in one binary\n\nUsage: perflab COMMAND [flags]\n\nCommands:\n", version)
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "  %-9s %s\n", "help", "help COMMAND shows a command's flags")
	fmt.Fprintf(os.Stderr, "\nExit codes: 0 ok, 1 usage or internal error, 2 invalid plan, 3 run failed, 4 threshold failed, 130 interrupted.\n")
}

func main() {
	report.Version = version
	os.Exit(dispatch(os.Args[1:]))
}

func dispatch(args []string) int {
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(rest) > 0 {
			return dispatch([]string{rest[0], "-h"})
		}
		usage()
		return exitOK
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(rest)
		}
	}
	fmt.Fprintf(os.Stderr, "perflab: unknown command %q\n\n", name)
	usage()
	return exitUsage
}
