// Command cps reproduces the CPS basic load test report (README.md): its
// flow run twice against examples/configstore, remote (over REST) and
// embedded (its steps bound to the store's Go API), with the report's table
// of min, max and average ms and operations per second per operation and
// thread count, embedded beside remote. Both runs go to one history,
// labelled mode=remote and mode=embedded, for
// `perflab compare --store OUT/perflab.db mode=remote mode=embedded`.
//
//	go run ./examples/cps [-circles 100] [-threads '[2,10,20,50]'] [-out runs]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/perflab/perflab"
	"github.com/perflab/perflab/examples/configstore"
	"github.com/perflab/perflab/results"
)

func main() {
	circles := flag.String("circles", "100", "iterations of the flow per thread")
	threads := flag.String("threads", "[2,10,20,50]", "thread counts, one stage each")
	out := flag.String("out", "runs", "directory of the run directories and history")
	flag.Parse()
	_, self, _, _ := runtime.Caller(0)
	planFile := filepath.Join(filepath.Dir(self), "plan.yaml")
	if _, err := os.Stat(planFile); err != nil {
		planFile = "examples/cps/plan.yaml"
	}
	if err := run(context.Background(), planFile, *out, *circles, *threads, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves a fresh in-memory store on a free port and runs the plan over
// REST, then embedded, and prints the side-by-side table.
func run(ctx context.Context, planFile, out, circles, threads string, w io.Writer) error {
	store := configstore.NewMemory()
	defer store.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: configstore.NewHandler(store, nil)}
	go srv.Serve(ln)
	defer srv.Close()

	set := []string{"base=http://" + ln.Addr().String(), "circles=" + circles, "threads=" + threads}
	p, err := perflab.LoadPlan(planFile, set...)
	if err != nil {
		return err
	}
	network, err := os.ReadFile(filepath.Join(filepath.Dir(planFile), "network.json"))
	if err != nil {
		return err
	}
	anchor := func(vu *perflab.VU) string { return fmt.Sprintf("anchor-%d-%d", vu.ID(), vu.Iteration()) }
	embedded := map[string]perflab.StepFunc{
		"create dataspace": func(ctx context.Context, vu *perflab.VU) error {
			if err := store.CreateDataspace(ctx, "perf"); err != nil && !strings.Contains(err.Error(), "exists") {
				return err
			}
			return nil
		},
		"CREATE ANCHOR": func(ctx context.Context, vu *perflab.VU) error { return store.CreateAnchor(ctx, "perf", anchor(vu)) },
		"CREATE NODE": func(ctx context.Context, vu *perflab.VU) error {
			return store.CreateNode(ctx, "perf", anchor(vu), "/", network)
		},
		"UPDATE NODE": func(ctx context.Context, vu *perflab.VU) error {
			return store.ReplaceNode(ctx, "perf", anchor(vu), "/network",
				[]byte(`{"nodes":[{"node-id":"n3","name":"device-3","status":"down","vendor":"acme","software-version":"22.1.0"}]}`))
		},
		"DELETE ANCHOR": func(ctx context.Context, vu *perflab.VU) error { return store.DeleteAnchor(ctx, "perf", anchor(vu)) },
	}
	results := map[string]*perflab.Result{}
	for _, mode := range []string{"remote", "embedded"} {
		o := perflab.Options{Out: out, Labels: map[string]string{"mode": mode}}
		if mode == "embedded" {
			o.Steps = embedded
		}
		res, err := perflab.Run(ctx, p, o)
		if err != nil {
			return err
		}
		if res.Outcome != perflab.Completed {
			return fmt.Errorf("the %s run did not complete (outcome %d): %v", mode, res.Outcome, res.Err)
		}
		results[mode] = res
	}
	return sideBySide(w, results["embedded"].Summary, results["remote"].Summary)
}

// sideBySide prints the CPS basic load test's table: per thread count and
// operation, min, max and average ms and average operations per second,
// embedded and remote.
func sideBySide(w io.Writer, emb, rem *results.Summary) error {
	fmt.Fprintln(w, "| Threads | Operation | Embedded min ms | max ms | avg ms | avg ops/s | Remote min ms | max ms | avg ms | avg ops/s |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
	for i, ph := range emb.Stages {
		for _, op := range ph.Operations {
			if op.Kind != "step" {
				continue
			}
			r := find(rem.Stages[i].Operations, op.Name)
			if r == nil {
				continue
			}
			e, rl := op.Latency, r.Latency
			fmt.Fprintf(w, "| %s | %s | %.3f | %.3f | %.3f | %.1f | %.3f | %.3f | %.3f | %.1f |\n", strings.TrimPrefix(ph.Name, "threads="), op.Name,
				e.Min, e.Max, e.Mean, op.OpRate.Avg, rl.Min, rl.Max, rl.Mean, r.OpRate.Avg)
		}
	}
	return nil
}

func find(ops []results.Operation, name string) *results.Operation {
	for i := range ops {
		if ops[i].Name == name {
			return &ops[i]
		}
	}
	return nil
}
