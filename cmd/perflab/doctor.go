package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/perflab/perflab/doctor"
	"github.com/perflab/perflab/plan"
)

func cmdDoctor(std *stdio, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	var pf planFlags
	pf.register(fs, "override a plan variable, as perflab run does (repeatable)")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	sample := fs.Duration("sample", time.Second, "how long to measure the other processes' CPU and the swapping (0: not measured)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab doctor [PLAN.yaml] [--set name=value]... [--vus N] ... [--json] [--sample 1s]

Checks this host as a load generator before a run, and says what to fix:
the open-file limit and the local ports (with tcp_tw_reuse) against the
plan's peak VUs and new connections a second, the CPU frequency governor,
the clock source, the cores, swap, and what else keeps the CPUs busy
(measured over --sample). Without a plan, against generic limits (1,000
VUs). Exit code 0 when nothing fails (warnings included), 4 when a check
fails, 2 when the plan is invalid.

Flags:`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() > 1 || *sample < 0 {
		fs.Usage()
		return exitUsage
	}
	l := doctor.Generic()
	if fs.NArg() == 0 && pf.given() {
		fmt.Fprintln(std.err, "perflab doctor: --set and the load flags change a plan: name one")
		return exitUsage
	}
	if fs.NArg() == 1 {
		p, err := pf.plan(fs.Arg(0))
		if err != nil {
			return planFailed(std, err)
		}
		l = doctor.FromPlan(p, plan.Segment{})
	}
	findings := doctor.Check(l, doctor.Options{Sample: *sample})
	var err error
	if *asJSON {
		enc := json.NewEncoder(std.out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		err = enc.Encode(findings)
	} else {
		err = doctor.WriteTable(std.out, l, findings)
	}
	if err != nil {
		return fail(std, err)
	}
	if doctor.Worst(findings) == doctor.Fail {
		return exitThresholds
	}
	return exitOK
}
