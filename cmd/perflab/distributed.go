package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// localWorkersEnv tells the workers perflab run --workers starts that they
// share this machine, so a SQLite history serves them all: its value is
// the run's id.
const localWorkersEnv = "PERFLAB_LOCAL_RUN"

// distributed runs a plan as one worker of a distributed run (--segment,
// --run-id) or as workers on this machine (--workers). Whatever cannot
// work is refused before anything is sent.
func distributed(std *stdio, planPath string, p *plan.Plan, f *runFlags) int {
	bad := func(format string, a ...any) int {
		fmt.Fprintf(std.err, "perflab: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case f.workers != 0 && f.segment != "":
		return bad("--workers starts its workers itself (each with its --segment): give one of --workers and --segment")
	case f.workers < 0:
		return bad("--workers %d: the count of workers must be at least 1", f.workers)
	case f.workers == 1:
		fmt.Fprintln(std.err, "perflab: --workers 1: one worker is a run of its own")
		code, _ := execute(p, *f, std.out, std.err)
		return code
	case f.workers > 1:
		return runWorkers(std, planPath, p, f)
	case f.segment == "":
		return bad("--run-id names a distributed run: give this worker's --segment INDEX/COUNT too")
	}
	seg, err := plan.ParseSegment(f.segment)
	if err != nil {
		return bad("--%v", err)
	}
	if f.runID == "" {
		return bad("--segment %s needs --run-id ID, the same for every worker of the run", f.segment)
	}
	if !store.IsPostgres(f.store) && os.Getenv(localWorkersEnv) != f.runID {
		return bad("a distributed run needs a run history all its workers share: --store postgres://... (on one machine, perflab run --workers N shares a SQLite file)")
	}
	// The workers of --workers: their parent has said what splitting does.
	if !splits(std, p, seg.Count, os.Getenv(localWorkersEnv) == f.runID) {
		return exitInvalidPlan
	}
	f.worker = &lab.Worker{RunID: f.runID, Segment: seg, JoinTimeout: f.joinTimeout}
	code, _ := execute(p, *f, std.out, std.err)
	return code
}

// splits says what splitting the plan over count workers does, and
// whether it can be.
func splits(std *stdio, p *plan.Plan, count int, quiet bool) bool {
	errs, notes := p.CheckSegments(count)
	for _, n := range notes {
		if !quiet {
			fmt.Fprintf(std.err, "perflab: note: %s\n", n)
		}
	}
	for _, e := range errs {
		fmt.Fprintf(std.err, "%s: cannot run on %d workers: %s\n", p.File, count, e)
	}
	return len(errs) == 0
}

// runWorkers runs the plan as f.workers worker processes of this binary,
// one distributed run meeting in the history, and prints the merged run.
// Interrupts are passed on to the workers; the exit code is the worst of
// theirs (the worker that merges the run exits as a single run would).
func runWorkers(std *stdio, planPath string, p *plan.Plan, f *runFlags) int {
	n := f.workers
	if !splits(std, p, n, false) {
		return exitInvalidPlan
	}
	storePath := f.store
	switch {
	case storePath == "off":
		fmt.Fprintln(std.err, "perflab: --workers: the workers meet in the run history: --store off has none")
		return exitUsage
	case storePath == "":
		storePath = store.DefaultPath(f.out)
	}
	if !store.IsPostgres(storePath) {
		if abs, err := filepath.Abs(storePath); err == nil {
			storePath = abs
		}
	}
	id := f.runID
	if id == "" {
		id = results.RunIDBase(time.Now(), p.Name)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(std, err)
	}
	progress := "plain"
	if f.quiet || f.progress == "none" {
		progress = "none"
	}
	args := []string{"run", planPath, "--out", f.out, "--store", storePath, "--run-id", id,
		"--join-timeout", f.joinTimeout.String(), "--progress", progress}
	for _, o := range f.set {
		args = append(args, "--set", o.Name+"="+o.Value)
	}
	args = append(args, f.load.Args()...)
	for _, o := range f.labels.setFlags {
		args = append(args, "--label", o.Name+"="+o.Value)
	}
	for _, m := range f.monitors.raw {
		args = append(args, "--monitor", m)
	}
	fmt.Fprintf(std.err, "perflab: run %s on %d workers (history %s)\n", id, n, store.Redact(storePath))
	var mu sync.Mutex // the workers' lines, one at a time
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		cmd := exec.Command(exe, append(slices.Clone(args), "--segment", fmt.Sprintf("%d/%d", i, n))...)
		cmd.Env = append(os.Environ(), localWorkersEnv+"="+id)
		// A group of its own: a terminal's Ctrl-C reaches the workers
		// once, passed on by this process, not twice (a second one quits
		// a worker at once).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout = io.Discard // each part's tables are in its directory; the run's follow
		cmd.Stderr = &prefixed{w: std.err, mu: &mu, prefix: fmt.Sprintf("[worker %d] ", i)}
		if err := cmd.Start(); err != nil {
			for _, c := range cmds[:i] {
				c.Process.Kill()
			}
			return fail(std, err)
		}
		cmds[i] = cmd
	}
	// Passed on to the workers as one request to stop, and again as a
	// second (they quit at once).
	forward := func(sig os.Signal) {
		for _, c := range cmds {
			c.Process.Signal(sig)
		}
	}
	stopSignals := onStopSignals(forward, forward)
	// Each worker is waited for as it ends: one killed is seen at once.
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Wait(); err != nil && c.ProcessState == nil {
				codes[i] = exitRunFailed
				return
			}
			if codes[i] = c.ProcessState.ExitCode(); codes[i] < 0 { // killed by a signal
				codes[i] = exitRunFailed
			}
		}()
	}
	wg.Wait()
	stopSignals()
	code := exitOK
	for i, c := range cmds {
		for _, w := range c.Stderr.(*prefixed).flush() {
			fmt.Fprint(std.err, w)
		}
		code = worse(code, codes[i])
	}
	st, err := store.Open(storePath)
	if err != nil {
		fmt.Fprintf(std.err, "perflab: %v\n", err)
		return worse(code, exitRunFailed)
	}
	defer st.Close()
	rd, err := results.FromStore(st, id)
	if err != nil {
		fmt.Fprintf(std.err, "perflab: run %s: %v\n", id, err)
		return worse(code, exitRunFailed)
	}
	s := rd.Summary
	fmt.Fprintf(std.out, "run %s of plan %s on %d workers: %s\n", s.RunID, s.Plan.Name, n, s.StatusLine())
	if s.Error != "" {
		fmt.Fprintf(std.out, "error: %s\n", s.Error)
	}
	if err := report.WriteTable(std.out, s); err != nil {
		fmt.Fprintf(std.err, "perflab: %v\n", err)
	}
	report.WriteThresholds(std.out, p.Thresholds, s.Thresholds)
	fmt.Fprintf(std.err, "run %s %s; results in %s (each worker's part in %s-w0 ... -w%d)\n", id, s.StatusLine(), filepath.Join(f.out, id), filepath.Join(f.out, id), n-1)
	return code
}

// worse is the worse of two exit codes: a run that could not complete,
// then failed thresholds, then an interrupt.
func worse(a, b int) int {
	rank := func(c int) int {
		switch c {
		case exitOK:
			return 0
		case exitInterrupted:
			return 1
		case exitThresholds:
			return 2
		default:
			return 3
		}
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// prefixed writes each line a worker writes with the worker's prefix.
type prefixed struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    bytes.Buffer
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Write(b)
	for {
		line, err := p.buf.ReadBytes('\n')
		if err != nil { // no newline yet: keep it
			rest := append([]byte(nil), line...)
			p.buf.Reset()
			p.buf.Write(rest)
			return len(b), nil
		}
		fmt.Fprintf(p.w, "%s%s", p.prefix, line)
	}
}

// flush returns what is left without a newline.
func (p *prefixed) flush() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.buf.Len() == 0 {
		return nil
	}
	s := p.prefix + p.buf.String() + "\n"
	p.buf.Reset()
	return []string{s}
}
