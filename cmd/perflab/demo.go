package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/perflab/perflab/examples/demo"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/sim"
)

func cmdDemo(std *stdio, args []string) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	var f runFlags
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab demo [flags]\n\nStarts the built-in simulator on 127.0.0.1 and runs the bundled demo plan\n(examples/demo/plan.yaml, the 4-step flow of the CPS basic load test) against it.\n\nFlags:")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if err := f.failures.check(fs, fs.Args()); err != nil {
		return fail(std, err)
	}
	cfg, err := sim.Parse(demo.Stubs(), "examples/demo/stubs.yaml")
	if err != nil {
		return fail(std, err)
	}
	cfg.Listen = "127.0.0.1:0"
	srv, err := sim.New(cfg)
	if err != nil {
		return fail(std, err)
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(std.err, "perflab: starting the simulator:", err)
		return exitRunFailed
	}
	defer srv.Close()
	fmt.Fprintf(std.err, "perflab demo: simulator (examples/demo/stubs.yaml) listening on %s\n", srv.URL())

	tmp, err := os.MkdirTemp("", "perflab-demo-")
	if err != nil {
		return fail(std, err)
	}
	defer os.RemoveAll(tmp)
	path, err := demo.WriteTo(tmp)
	if err != nil {
		return fail(std, err)
	}
	set := append(setFlags{{Name: "base", Value: srv.URL()}}, f.set...)
	p, err := plan.Load(path, plan.Options{Set: set})
	if err != nil {
		fmt.Fprintln(std.err, err)
		return exitInvalidPlan
	}
	p.File = "examples/demo/plan.yaml"
	f.set = set
	code, dir := execute(p, f, std.out, std.err)

	fmt.Fprintln(std.out, "\nWhat the simulator counted (a cross-check of perflab's request counts):")
	for _, st := range srv.Stats() {
		fmt.Fprintf(std.out, "  %-18s %-6s %6d requests\n", st.Name, st.Method, st.Requests)
	}
	if dir != "" {
		fmt.Fprintf(std.out, "\nRun directory: %s (summary.json, summary.txt, latency.hlog, intervals.csv, totals.jsonl, resources.csv, plan.yaml, run.json)\n", dir)
	}
	return code
}

func cmdSim(std *stdio, args []string) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	listen := fs.String("listen", "", "address to listen on, overriding the file's listen (loopback only)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab sim STUBS.yaml [--listen 127.0.0.1:PORT]\n\nServes the HTTP routes and gRPC methods of STUBS.yaml until interrupted, then prints what each saw.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	cfg, err := sim.Load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(std.err, err)
		return exitInvalidPlan
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	srv, err := sim.New(cfg, sim.WithLog(std.err))
	if err != nil {
		fmt.Fprintln(std.err, err)
		return exitInvalidPlan
	}
	if err := srv.Start(); err != nil {
		fmt.Fprintln(std.err, "perflab:", err)
		return exitRunFailed
	}
	where := srv.URL()
	if g := srv.GRPCAddr(); g != "" {
		where += " and gRPC on " + g
	}
	fmt.Fprintf(std.err, "perflab sim: serving %s on %s; Ctrl-C stops\n", fs.Arg(0), where)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	srv.Close()
	for _, st := range srv.Stats() {
		fmt.Fprintf(std.out, "%-24s %-6s %-50s %8d requests %6d injected errors\n", st.Name, st.Method, st.Path, st.Requests, st.InjectedErrors)
	}
	return exitOK
}
