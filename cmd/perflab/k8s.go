package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/k8s"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// cmdK8s writes the manifests of a distributed run on Kubernetes.
func cmdK8s(std *stdio, args []string) int {
	fs := flag.NewFlagSet("k8s", flag.ContinueOnError)
	var set setFlags
	var labels labelFlags
	var load loadFlags
	fs.Var(&set, "set", "override a plan variable, in every worker (repeatable)")
	load.register(fs)
	fs.Var(&labels, "label", "label the run, as release=Honeysuckle (repeatable)")
	workers := fs.Int("workers", 0, "the number of workers (pods), each running its share of the plan (required)")
	storeURL := fs.String("store", "", "the team's history, postgres://...: checked, never written into the manifests (the pods read it from --store-secret)")
	secret := fs.String("store-secret", "perflab-store:dsn", "the Secret (NAME:KEY) holding the history's postgres:// DSN")
	image := fs.String("image", "perflab:"+imageTag(), "perflab's image (built from the repository's Dockerfile)")
	namespace := fs.String("namespace", "", "the namespace of the objects (default: kubectl's)")
	runID := fs.String("run-id", "", "the run's id (default: the time and the plan's name)")
	cpu := fs.String("cpu", "1", "CPU each worker requests")
	memory := fs.String("memory", "512Mi", "memory each worker requests, and its limit")
	join := fs.Duration("join-timeout", 5*time.Minute, "how long the workers wait for each other to start (pods being scheduled, images pulled)")
	ttl := fs.Duration("ttl", 24*time.Hour, "how long the finished Job and its pods stay, for kubectl logs (0: until deleted)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab k8s PLAN.yaml --workers N [--store postgres://...] [--image IMG] [--namespace NS] [--set name=value]... [--vus N] [--duration D] ...

Writes to stdout the Kubernetes manifests of a distributed run: a ConfigMap
with the plan and every file it loads (the files it includes, its data
files), and an Indexed Job of N pods, pod i running perflab run --segment
i/N. The workers meet in the team's
PostgreSQL history, whose DSN they read from a Secret (--store-secret):
create it once with
  kubectl create secret generic perflab-store --from-literal=dsn='postgres://...'
then: perflab k8s plan.yaml --workers 8 | kubectl apply -f -

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
	if *workers < 1 {
		return fail(std, fmt.Errorf("--workers N: the number of workers (pods) is required, at least 1"))
	}
	if *storeURL != "" && !store.IsPostgres(*storeURL) {
		return fail(std, fmt.Errorf("--store %s: the workers of a cluster meet in a PostgreSQL history: --store postgres://...", *storeURL))
	}
	if err := k8s.CheckImage(*image); err != nil {
		return fail(std, fmt.Errorf("--image: %w", err))
	}
	secretName, secretKey, ok := strings.Cut(*secret, ":")
	if !ok || secretName == "" || secretKey == "" {
		return fail(std, fmt.Errorf("--store-secret %q: want NAME:KEY", *secret))
	}
	planPath := fs.Arg(0)
	p, err := plan.Load(planPath, plan.Options{Set: set, Load: load.LoadOverride})
	if err != nil {
		return planFailed(std, err)
	}
	if !splits(std, p, *workers, false) {
		return exitInvalidPlan
	}
	// As read (a plan through a pipe is not read twice), with the load
	// given on the command line written in: the pods run it as it is.
	// With it every file it loads: those it includes, as read, and its
	// data files, read now, each where the plan finds it in the pods'
	// directory (results.PlanLayout, as a run's record lays it out).
	src := p.Source
	var paths []string
	var files []k8s.File
	for _, f := range p.Included {
		paths, files = append(paths, f.Path), append(files, k8s.File{Path: f.Path, Data: []byte(f.Source)})
	}
	for _, f := range p.Files() {
		path := f
		if !filepath.IsAbs(f) {
			path = filepath.Join(filepath.Dir(planPath), f)
		}
		// None can be more than the ConfigMap holds.
		b, err := inputfile.ReadFile(path, k8s.MaxConfigMap)
		if err != nil {
			return fail(std, inputfile.Explain(err, k8s.TooBigForConfigMap))
		}
		paths, files = append(paths, f), append(files, k8s.File{Path: f, Data: b})
	}
	entry, placed := results.PlanLayout(paths)
	var podFiles []k8s.File
	for i, f := range files {
		if filepath.IsAbs(f.Path) || placed[i] == "" {
			return fail(std, fmt.Errorf("%s: a file the plan reads must be named from the plan's directory to go to the cluster with it (the pods have the plan's directory, not this machine's files)", f.Path))
		}
		if !slices.ContainsFunc(podFiles, func(g k8s.File) bool { return g.Path == placed[i] }) { // a file named twice (data/x.csv, ./data/x.csv)
			podFiles = append(podFiles, k8s.File{Path: placed[i], Data: f.Data})
		}
	}
	id := *runID
	if !flagSet(fs, "run-id") {
		id = results.RunIDBase(time.Now(), p.Name)
	}
	if err := results.CheckRunID(id); err != nil {
		return fail(std, fmt.Errorf("--run-id: %w", err))
	}
	var extra []string
	for _, o := range set {
		extra = append(extra, "--set", o.Name+"="+o.Value)
	}
	for _, o := range labels.setFlags {
		extra = append(extra, "--label", o.Name+"="+o.Value)
	}
	cm, job, err := k8s.Manifests(src, podFiles, k8s.Options{
		RunID: id, Plan: p.Name, PlanPath: entry, Workers: *workers, Image: *image, Namespace: *namespace,
		SecretName: secretName, SecretKey: secretKey, Args: extra,
		CPU: *cpu, Memory: *memory, JoinTimeout: *join, TTL: *ttl,
	})
	if err != nil {
		return fail(std, err)
	}
	// The plan's name is one line (the validator refuses any other), and
	// the comment is made one line whatever it holds: a line break would
	// end it, and what followed would be YAML.
	comment, _ := plan.SingleLine(fmt.Sprintf("perflab k8s: run %s of plan %s on %d workers", id, p.Name, *workers))
	fmt.Fprintf(std.out, "# %s\n", comment)
	if err := k8s.Write(std.out, cm, job); err != nil {
		return fail(std, err)
	}
	ns := ""
	if *namespace != "" {
		ns = " -n " + *namespace
	}
	fmt.Fprintf(std.err, "perflab: run %s: apply with kubectl apply%s -f -, follow with kubectl logs%s -f -l perflab.dev/run=%s --prefix --max-log-requests %d, clean up with kubectl delete%s job,configmap %s\n",
		id, ns, ns, job.Name, max(*workers, 5), ns, job.Name)
	return exitOK
}

// imageTag is the image tag of this build: its version, latest for a
// development build.
func imageTag() string {
	if version == "dev" || version == "" {
		return "latest"
	}
	return strings.TrimPrefix(version, "v")
}
