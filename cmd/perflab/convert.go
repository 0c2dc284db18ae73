package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/plan"
)

func cmdConvert(std *stdio, args []string) int {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	out := fs.String("o", "", "write the plan to this file (default: standard output)")
	static := fs.Bool("static", false, "with har: keep static assets (style sheets, scripts, images, fonts)")
	allHosts := fs.Bool("all-hosts", false, "with har: keep requests to hosts other than the first request's")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab convert jmeter PLAN.jmx [-o plan.yaml]\n       perflab convert openapi API.yaml [-o plan.yaml]\n       perflab convert har RECORDING.har [--static] [--all-hosts] [-o plan.yaml]\n\n"+
			"Writes a perflab plan that makes the requests of a JMeter test plan, a starting plan that calls\n"+
			"each operation of an OpenAPI 3 description once, or a flow of a browser recording's requests with\n"+
			"its pauses. What is not converted is listed on standard error and as comments at the top of the\n"+
			"plan, with where it is.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 || fs.Arg(0) != "jmeter" && fs.Arg(0) != "openapi" && fs.Arg(0) != "har" {
		fs.Usage()
		return exitUsage
	}
	file := fs.Arg(1)
	// A file or a pipe, read within a limit: it is decoded whole.
	src, err := inputfile.ReadStream(file, convert.MaxInputBytes)
	if err != nil {
		return fail(std, inputfile.Explain(err, "perflab convert reads "+inputfile.FormatSize(convert.MaxInputBytes)+" at most"))
	}
	conv := convert.JMeter
	switch fs.Arg(0) {
	case "openapi":
		conv = convert.OpenAPI
	case "har":
		conv = func(r io.Reader, file string) (*convert.Result, error) {
			return convert.HAR(r, file, convert.HAROptions{Static: *static, AllHosts: *allHosts})
		}
	}
	res, err := conv(bytes.NewReader(src), file)
	var nothing *convert.NothingToSendError
	if errors.As(err, &nothing) {
		for _, s := range nothing.Skipped {
			fmt.Fprintf(std.err, "perflab: not converted: %s\n", s)
		}
	}
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
