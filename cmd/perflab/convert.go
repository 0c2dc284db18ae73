package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/plan"
)

func cmdConvert(std *stdio, args []string) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	out := fs.String("o", "", "write the plan to this file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab convert jmeter PLAN.jmx [-o plan.yaml]\n       perflab convert openapi API.yaml [-o plan.yaml]\n\n"+
			"Writes a perflab plan that makes the requests of a JMeter test plan, or a starting plan that calls\n"+
			"each operation of an OpenAPI 3 description once. What is not converted is listed on standard\n"+
			"error and as comments at the top of the plan, with where it is.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 || fs.Arg(0) != "jmeter" && fs.Arg(0) != "openapi" {
		fs.Usage()
		return exitUsage
	}
	file := fs.Arg(1)
	f, err := os.Open(file)
	if err != nil {
		return fail(std, err)
	}
	defer f.Close()
	conv := convert.JMeter
	if fs.Arg(0) == "openapi" {
		conv = convert.OpenAPI
	}
	res, err := conv(f, file)
	if err != nil {
		return fail(std, err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(std.err, "perflab: not converted: %s\n", s)
	}
	if *out == "" {
		std.out.Write(res.Plan)
		return exitOK
	}
	if err := os.WriteFile(*out, res.Plan, 0o644); err != nil {
		return fail(std, err)
	}
	// The plan written must load as any plan does.
	if _, err := plan.Load(*out, plan.Options{}); err != nil {
		fmt.Fprintf(std.err, "perflab: the converted plan does not load: %v\n", err)
		return exitInvalidPlan
	}
	fmt.Fprintf(std.err, "wrote %s (%d elements or parts not converted)\n", *out, len(res.Skipped))
	return exitOK
}
