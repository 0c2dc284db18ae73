package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/bustest"
	"github.com/perflab/perflab/bus/kafka"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(&stdio{out: &out, err: &errb}, args)
	return code, out.String(), errb.String()
}

func readSummary(t *testing.T, dir string) *results.Summary {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "summary.json"))
	if len(matches) != 1 {
		t.Fatalf("want one run directory under %s, found %v", dir, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var s results.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func count(s *results.Summary, stage int, name string) int64 {
	for _, op := range s.Stages[stage].Operations {
		if op.Name == name {
			return op.Count
		}
	}
	return -1
}

func TestDemoCountsMatchTheSimulator(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "demo", "--out", out, "--set", "circles=5", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, out)
	if len(s.Stages) != 2 || s.Stages[0].Values["threads"] != "2" || s.Stages[1].Values["threads"] != "10" {
		t.Fatalf("stages %+v", s.Stages)
	}
	if c0, c1 := count(s, 0, "CREATE NODE"), count(s, 1, "CREATE NODE"); c0 != 10 || c1 != 50 {
		t.Errorf("CREATE NODE counts %d, %d; want 2x5 and 10x5", c0, c1)
	}
	// The simulator's own count of the route equals perflab's.
	if !regexp.MustCompile(`create node +POST +60 requests`).MatchString(stdout) {
		t.Errorf("simulator cross-check missing or different:\n%s", stdout)
	}
	if !strings.Contains(stdout, "summary = 240 in ") || !strings.Contains(stdout, "Err: 0 (0.00%)") {
		t.Errorf("summary line:\n%s", stdout)
	}
	// The run's Markdown report has the CPS basic load test's table for both thread counts.
	dirs, _ := filepath.Glob(filepath.Join(out, "*-cps-basic-demo"))
	code, md, _ := runCLI(t, "report", dirs[0])
	if code != exitOK || !strings.Contains(md, "### threads=10") || !regexp.MustCompile(`\| CREATE NODE \| 50 \| 0 \|`).MatchString(md) {
		t.Errorf("report:\n%s", md)
	}
	code, csvText, _ := runCLI(t, "report", "--format", "csv", dirs[0])
	if code != exitOK || strings.Count(csvText, "\n") != 1+2*5 {
		t.Errorf("csv: %d lines\n%s", strings.Count(csvText, "\n"), csvText)
	}
}

func TestValidate(t *testing.T) {
	code, out, _ := runCLI(t, "validate", "../../examples/demo/plan.yaml")
	if code != exitOK || !strings.Contains(out, "2 stage(s)") || !strings.Contains(out, "stage 2 threads=10: cps-flow: 10 VUs x 150 iterations") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "validate", "../../examples/demo/plan.yaml", "--set", "threads=[1,2,3]")
	if code != exitOK || !strings.Contains(out, "3 stage(s)") {
		t.Errorf("--set sweep: exit %d:\n%s", code, out)
	}
	code, _, errs := runCLI(t, "validate", "../../plan/testdata/invalid/unknown_field.yaml")
	if code != exitInvalidPlan || !strings.Contains(errs, "unknown_field.yaml:4:5: unknown field \"vsu\" (did you mean \"vus\"?)") {
		t.Errorf("exit %d: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "validate"); code != exitUsage {
		t.Errorf("no plan: exit %d", code)
	}
	if code, _, _ := runCLI(t, "help", "run"); code != exitOK {
		t.Errorf("help run: exit %d", code)
	}
	if code, _, _ := runCLI(t, "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
}

func writePlan(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runDir runs plan (perflab run PLAN --out out --quiet args...) and
// returns its run directory, the one under out named after the plan.
func runDir(t *testing.T, plan, out, name string, args ...string) string {
	t.Helper()
	if code, stdout, errs := runCLI(t, append([]string{"run", plan, "--out", out, "--quiet"}, args...)...); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-"+name))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	return dirs[0]
}

func TestRunFailureExitCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/setup" {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\nsetup: [{name: s, url: /setup}]\nscenarios: [{vus: 1, iterations: 1, flow: [{url: /a}]}]\n")
	code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitRunFailed || !strings.Contains(errs, `setup step "s": http_5xx: status 500`) {
		t.Errorf("exit %d: %s", code, errs)
	}
	if s := readSummary(t, out); s.Status != "failed" || len(s.Setup) != 1 {
		t.Errorf("a failed run still writes its summary: status %s", s.Status)
	}
}

// The binary, interrupted with SIGINT, stops the load, runs teardown and
// writes everything measured, with exit code 130.
func TestInterruptWritesResults(t *testing.T) {
	interruptedRun(t, nil, func(p *os.Process) { p.Signal(syscall.SIGINT) })
}

// SIGTERM takes the same path, and two at once are one request to stop,
// not a second Ctrl-C that quits at once. GNU timeout signals the process
// and then its process group, as it does when its time is up and when it
// is itself signalled: here perflab runs under `timeout 5m`, signalled
// once the load is under way, five times (the two signals once raced into
// a run lost without summary or teardown in one try of three).
func TestTerminatedTwiceAtOnce(t *testing.T) {
	timeout, err := exec.LookPath("timeout")
	if err != nil {
		testenv.Missing(t, "GNU timeout (coreutils) is not installed")
	}
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			interruptedRun(t, []string{timeout, "5m"}, func(p *os.Process) { p.Signal(syscall.SIGTERM) })
		})
	}
}

// interruptedRun runs the binary under load (by the command under, if
// any), calls signal with the process started once the load is under
// way, and checks that perflab stopped the load, ran teardown and wrote
// everything measured, in its directory and the history, with exit code
// 130.
func interruptedRun(t *testing.T, under []string, signal func(*os.Process)) {
	bin := perflabBin(t)
	var mu sync.Mutex
	counts := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		counts[r.URL.Path]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\nscenarios: [{vus: 3, duration: 1m, flow: [{name: a, url: /a}]}]\nteardown: [{name: t, url: /teardown}]\n")
	args := append(slices.Clone(under), bin, "run", plan, "--out", out)
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the load is under way (the signal handler is in place
	// before the first request), however slow the machine is to start it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := counts["/a"]
		mu.Unlock()
		if n >= 10 || time.Now().After(deadline) {
			break
		}
	}
	signal(cmd.Process)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "perflab: quit") {
		t.Errorf("it quit at once:\n%s", stderr.String())
	}
	s := readSummary(t, out)
	mu.Lock()
	defer mu.Unlock()
	if s.Status != "interrupted" || counts["/teardown"] != 1 {
		t.Errorf("status %s, teardown ran %d times", s.Status, counts["/teardown"])
	}
	if got := count(s, 0, "a"); got == 0 || got != int64(counts["/a"]) {
		t.Errorf("perflab counted %d, server saw %d", got, counts["/a"])
	}
	// The run directory holds every file of a run, and its interval log
	// counts each request the server saw.
	dirs, _ := filepath.Glob(filepath.Join(out, "*-plan"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v, want one", dirs)
	}
	for _, f := range []string{"plan.yaml", "latency.hlog", results.IntervalsCSV, "summary.json", "summary.txt"} {
		if fi, err := os.Stat(filepath.Join(dirs[0], f)); err != nil || fi.Size() == 0 {
			t.Errorf("run directory: %s missing or empty (%v)", f, err)
		}
	}
	rd, err := results.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var logged int64
	for _, op := range s.Stages[0].Operations {
		if op.Name == "a" {
			for _, iv := range rd.IntervalsOf(s.Stages[0].Index, op) {
				logged += iv.Count
			}
		}
	}
	if logged != int64(counts["/a"]) {
		t.Errorf("the run directory's intervals count %d requests, the server saw %d", logged, counts["/a"])
	}
	// And the history has the run, interrupted, with the same count.
	st, err := store.Open(store.DefaultPath(out))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := results.FromStore(st, s.RunID)
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	if h.Summary.Status != "interrupted" || count(h.Summary, 0, "a") != int64(counts["/a"]) {
		t.Errorf("history: status %s, count %d; the server saw %d", h.Summary.Status, count(h.Summary, 0, "a"), counts["/a"])
	}
}

// A fixed amount of work swept over parallelism: a server that serves two
// requests at a time scales to 2 VUs and no further, and summary.json says so.
func TestParallelismSweepFindsSaturation(t *testing.T) {
	sem := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		// At 2 VUs the server idles between a response and the VU's next
		// request; from 3 on a request waits for each slot. That gap, a
		// fraction of a millisecond on an idle machine, grows to several
		// on a busy one (every wake-up waits for a core): 200 ms keeps 10
		// ms of it within the 5% that saturation is judged by.
		time.Sleep(200 * time.Millisecond)
		<-sem
	}))
	defer srv.Close()
	// 24 requests: 12 rounds of the two slots from 2 VUs on, 2.4 s. A busy
	// machine's hiccup at a stage's start (80 ms once) is within the 5%
	// that saturation is judged by: with 12 requests, 1.2 s, 2 VUs' stage
	// took 1.30 s and 3 VUs' 1.22 s, and saturation was found at 3.
	plan := writePlan(t, "target: "+srv.URL+"\nvars: {p: [1, 2, 3, 6]}\nscenarios: [{name: get, vus: '${p}', total_iterations: 24, flow: [{name: a, url: /a}]}]\n")
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, out)
	if s.Scaling == nil || len(s.Scaling.Points) != 4 {
		t.Fatalf("scaling: %+v", s.Scaling)
	}
	for _, p := range s.Scaling.Points {
		if p.Requests != 24 {
			t.Errorf("P=%d did %d requests, want 24", p.VUs, p.Requests)
		}
	}
	if sp := s.Scaling.Points[1].Speedup; sp < 1.7 || sp > 2.2 {
		t.Errorf("speedup at 2 VUs %.2f, want about 2", sp)
	}
	if sp := s.Scaling.Points[3].Speedup; sp > 2.3 {
		t.Errorf("speedup at 6 VUs %.2f: the server serves 2 at a time", sp)
	}
	if s.Scaling.SaturationVUs != 2 {
		t.Errorf("saturation at %v VUs, want 2", s.Scaling.SaturationVUs)
	}
	if !strings.Contains(stdout, "throughput stops increasing at 2 VUs") {
		t.Errorf("table:\n%s", stdout)
	}
}

// Two "releases" of a service: the second is slower on one API only.
// compare says which, with a verdict from the test, not the bare difference.
func TestCompareReleases(t *testing.T) {
	var slow atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Long against a loaded machine's scheduling delays, which add a
		// few milliseconds to either run: loans triples.
		d := 10 * time.Millisecond
		if r.URL.Path == "/loans" && slow.Load() {
			d = 30 * time.Millisecond
		}
		time.Sleep(d)
	}))
	defer srv.Close()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nvars: {users: [1, 3]}\nscenarios: [{name: circ, vus: '${users}', duration: 1500ms, flow: [{name: GET loans, url: /loans}, {name: GET items, url: /items}]}]\n")
	baseOut, candOut := t.TempDir(), t.TempDir()
	if code, _, errs := runCLI(t, "run", plan, "--out", baseOut, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	slow.Store(true)
	if code, _, errs := runCLI(t, "run", plan, "--out", candOut, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	dir := func(out string) string { m, _ := filepath.Glob(filepath.Join(out, "*")); return m[0] }
	// Two runs on a loaded machine differ by a few milliseconds on a 10 ms
	// call anyway (significantly so, with hundreds of samples): only
	// changes of 40% or more count here; loans triples.
	code, out, errs := runCLI(t, "compare", "--min-change", "0.4", dir(baseOut), dir(candOut))
	if code != exitOK {
		t.Fatalf("compare: %d %s", code, errs)
	}
	if !regexp.MustCompile(`GET loans is \d+%( to \d+%)? slower at p75 across users=1 to users=3 \(2 of 2 stages\)`).MatchString(out) {
		t.Errorf("loans sentence missing:\n%s", out)
	}
	if !strings.Contains(out, "GET items: no significant change at p75.") {
		t.Errorf("items should not change:\n%s", out)
	}
	code, js, _ := runCLI(t, "compare", "--json", "--percentile", "95", dir(baseOut), dir(candOut))
	var rc judge.RunComparison
	if code != exitOK || json.Unmarshal([]byte(js), &rc) != nil || rc.Percentile != 95 || len(rc.Ops) != 6 {
		t.Errorf("json: exit %d, %d operations", code, len(rc.Ops))
	}
}

// A longevity run whose service degrades after a while: drift names the
// moment and the levels, and the windows show before and after.
func TestDriftFindsTheDegradation(t *testing.T) {
	var first atomic.Int64 // the first request's time: the run's start, near enough
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		if time.Duration(now-first.Load()) > 2*time.Second {
			time.Sleep(60 * time.Millisecond)
		} else {
			time.Sleep(2 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: soak, vus: 2, duration: 6s, flow: [{name: checkout, url: /c}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*"))
	code, text, errs := runCLI(t, "drift", m[0], "--window", "first:1s", "--window", "last:1s", "--window", "all")
	if code != exitOK {
		t.Fatalf("drift: %s", errs)
	}
	// The service slowed 2 s after the first request (2 ms to 60 ms a
	// request). A loaded machine adds to both levels (a few milliseconds to
	// the p95 of the first), so only their order is asserted. The slowdown
	// is larger than what a saturated host makes the generator wait for a
	// core (with 20 tasks runnable on 2 cores, 15 ms): at 20 ms a request,
	// such a run's change was told as the generator's as likely as the
	// system's, suspect. (With 1.2 s
	// before the change in 4 s, a loaded machine's bursts once made the
	// first level's p95 too noisy for the change to be significant.)
	// The p95 or the mean of checkout (on a machine busy enough, the p95's
	// later intervals can be noisy enough to be told as a trend) changed
	// level near the moment: within a block of about independent
	// intervals, a second on a busy machine.
	re := regexp.MustCompile(`(?:p95|mean) of checkout rose \d+% from ([\d.]+) ms to ([\d.]+) ms; the change began after (\d+\.\d) s`)
	// Drift counts from the stage's start, the server from its first
	// request, which a loaded machine may delay by a good part of a second.
	sum := readSummary(t, out)
	want := time.Unix(0, first.Load()).Sub(sum.Stages[0].Start) + 2*time.Second
	found := false
	for _, mm := range re.FindAllStringSubmatch(text, -1) {
		from, _ := strconv.ParseFloat(mm[1], 64)
		to, _ := strconv.ParseFloat(mm[2], 64)
		after, _ := strconv.ParseFloat(mm[3], 64)
		found = found || math.Abs(after-want.Seconds()) <= 1 && to >= from+40
	}
	if !found {
		t.Errorf("no change of checkout's p95 or mean near %.1f s (2 s after the first request):\n%s", want.Seconds(), text)
	}
	if !strings.Contains(text, "drift over time: degraded: ") || !strings.Contains(text, "method: each series") {
		t.Errorf("no verdict:\n%s", text)
	}
	// The run judged itself at its end: its summary has the verdict (the
	// p95 or the mean of checkout, as above).
	if d := sum.Drift; d == nil || !d.Degraded || !re.MatchString(d.Verdict) {
		t.Errorf("the run's own verdict: %+v", d)
	}
	var js struct {
		Windows []judge.OpWindows `json:"windows"`
		Drift   *results.Drift    `json:"drift"`
	}
	code, out2, _ := runCLI(t, "drift", "--json", "--fail-degraded", "--window", "first:1s", "--window", "last:1s", m[0])
	if err := json.Unmarshal([]byte(out2), &js); err != nil || len(js.Windows) != 1 || len(js.Windows[0].Windows) != 2 || js.Drift == nil || code != exitThresholds {
		t.Fatalf("json (exit %d): %v %s", code, err, out2)
	}
	// Late timers on a loaded machine add a few milliseconds to the 2 ms
	// (a stall of the generator in the first second, tens to its mean);
	// nothing can make the last window faster than its 60 ms sleep.
	if first, last := js.Windows[0].Windows[0].Stats.Mean, js.Windows[0].Windows[1].Stats.Mean; first > 20 || last < 60 {
		t.Errorf("window means %.2f then %.2f ms, want about 2 then 60", first, last)
	}
	// The levels the verdict compares are the windows' (first and last second).
	if js.Drift.FirstS != 1 || js.Drift.LastS != 1 {
		t.Errorf("compared stretches %v and %v s, want the windows' 1 s", js.Drift.FirstS, js.Drift.LastS)
	}
}

// Runs are recorded in the history with labels; runs lists them, show
// prints one, and compare selects releases by label.
func TestHistoryAndLabelCompare(t *testing.T) {
	var slow atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Twenty times slower: more than a loaded machine's noise (at
		// 15 ms, a busy machine's stalls made a 3 ms request's p75 as
		// slow in some intervals, and the change not significant).
		if slow.Load() {
			time.Sleep(60 * time.Millisecond)
		} else {
			time.Sleep(3 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	// 2 s: on a busy machine a 1 s run's intervals were 6 and 5 of 10
	// (the others partial), few for a test of their p75s.
	plan := writePlan(t, "name: circulation\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: circ, vus: 2, duration: 2s, flow: [{name: check-out, url: /co}]}]\n")
	for _, rel := range []string{"Goldenrod", "Honeysuckle"} {
		if rel == "Honeysuckle" {
			slow.Store(true)
		}
		if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet", "--label", "release="+rel, "--label", "env=ci"); code != exitOK {
			t.Fatal(errs)
		}
	}
	db := filepath.Join(out, "perflab.db")
	code, list, errs := runCLI(t, "runs", "--store", db, "--label", "env=ci")
	if code != exitOK || strings.Count(list, "completed") != 2 || !strings.Contains(list, "release=Honeysuckle") {
		t.Fatalf("runs: %d %s %s", code, list, errs)
	}
	code, list, _ = runCLI(t, "runs", "--store", db, "--label", "release=Goldenrod", "--json")
	var runs []struct{ ID string }
	if code != exitOK || json.Unmarshal([]byte(list), &runs) != nil || len(runs) != 1 {
		t.Fatalf("runs --json: %s", list)
	}
	code, shown, _ := runCLI(t, "show", "--store", db, runs[0].ID)
	if code != exitOK || !strings.Contains(shown, "check-out") || !strings.Contains(shown, "summary = ") {
		t.Errorf("show: %s", shown)
	}
	code, cmp, errs := runCLI(t, "compare", "--store", db, "release=Goldenrod", "release=Honeysuckle")
	if code != exitOK || !regexp.MustCompile(`check-out is \d+% slower at p75`).MatchString(cmp) {
		t.Errorf("compare by label: %d %s\n%s", code, errs, cmp)
	}
	code, hist, errs := runCLI(t, "history", "--store", db, "circulation")
	if code != exitOK || !strings.Contains(hist, "all  check-out: 2 runs, p95") {
		t.Errorf("history: %d %s\n%s", code, errs, hist)
	}
	// Summaries keep a few percentiles: another is refused, not replaced.
	if code, _, errs := runCLI(t, "history", "--store", db, "--percentile", "80", "circulation"); code != exitUsage || !strings.Contains(errs, "keeps 50, 75, 90, 95, 99 and 99.9") {
		t.Errorf("history --percentile 80: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "compare", "--store", db, "release=Nope", "release=Honeysuckle"); code == exitOK || !strings.Contains(errs, "no stored run has the label release=Nope") {
		t.Errorf("unknown label: %d %s", code, errs)
	}
}

// A regression threshold compares the run with the stored runs of the same
// plan that carry the baseline's label: a service twice as slow fails it, the
// same service does not.
func TestRegressionThreshold(t *testing.T) {
	// Sleeps long against a loaded machine's scheduling delays, and limits
	// wide enough that an unchanged service passes while the whole test
	// suite runs; the slow service is three times slower.
	var delay atomic.Int64
	delay.Store(int64(10 * time.Millisecond))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(delay.Load()))
	}))
	defer srv.Close()
	out := t.TempDir()
	// Two seconds of 100 ms intervals: a side needs analyze.MinSamples
	// intervals with requests in them, and a machine that stalls the run
	// for most of a second must still leave that many.
	body := "name: circulation\ntarget: " + srv.URL + "\ninterval: 100ms\nscenarios: [{name: circ, vus: 2, duration: 2s, flow: [{name: check-out, url: /co}]}]\n"
	base := writePlan(t, body)
	cand := writePlan(t, body+"thresholds: [\"p75 regression vs release=Goldenrod < 50%\", \"check-out: rps regression vs release=Goldenrod < 40%\"]\n")
	if code, _, errs := runCLI(t, "run", base, "--out", out, "--quiet", "--label", "release=Goldenrod"); code != exitOK {
		t.Fatal(errs)
	}
	code, stdout, errs := runCLI(t, "run", cand, "--out", out, "--quiet", "--label", "release=Honeysuckle")
	if code != exitOK || !strings.Contains(stdout, "thresholds: 2 passed, 0 failed") {
		t.Fatalf("same service: exit %d\n%s%s", code, stdout, errs)
	}
	delay.Store(int64(30 * time.Millisecond))
	code, stdout, errs = runCLI(t, "run", cand, "--out", out, "--quiet", "--label", "release=Honeysuckle")
	if code != exitThresholds || !strings.Contains(stdout, "thresholds: 0 passed, 2 failed") {
		t.Fatalf("slower service: exit %d\n%s%s", code, stdout, errs)
	}
	// p75 about triples (10 ms to 30 ms; a loaded machine adds a little to
	// either side, so at least doubles is asserted); with twenty 100 ms
	// intervals a side the test is decisive.
	if !regexp.MustCompile(`FAIL p75 regression vs release=Goldenrod < 50%\s+check-out\s+all\s+\d+\.\d+ ms → \d+\.\d+ ms: [1-9]\d\d\.\d% worse \(p=[0-9.e-]+, worse\)`).MatchString(stdout) {
		t.Errorf("regression line:\n%s", stdout)
	}
	code, stdout, _ = runCLI(t, "run", writePlan(t, body+"thresholds: [\"p75 regression vs release=Nope < 10%\"]\n"), "--out", out, "--quiet")
	if code != exitThresholds || !strings.Contains(stdout, "no stored run of this plan has the label release=Nope") {
		t.Errorf("unknown baseline: exit %d\n%s", code, stdout)
	}
}

// A threshold marked abort stops a failing run early; its teardown still
// runs and its results are written.
func TestThresholdAbortsEarly(t *testing.T) {
	var teardowns atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cleanup" {
			teardowns.Add(1)
			return
		}
		time.Sleep(time.Millisecond)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 200ms\nthresholds: [\"errors < 5% abort\"]\nteardown: [{name: cleanup, url: /cleanup}]\nscenarios: [{name: s, vus: 2, duration: 20s, flow: [{name: buy, url: /buy}]}]\n")
	s := runAborted(t, plan, out, `threshold "errors < 5% abort" failed on buy in all after`)
	if teardowns.Load() != 1 {
		t.Errorf("teardowns %d", teardowns.Load())
	}
	if n := count(s, 0, "buy"); n == 0 {
		t.Errorf("no requests recorded")
	}
}

// runAborted runs plan, whose threshold marked abort must stop it early,
// saying so (says), and returns its summary, failed.
func runAborted(t *testing.T, plan, out, says string) *results.Summary {
	t.Helper()
	began := time.Now()
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitThresholds, stdout, errs)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the run took %s: not stopped early", took)
	}
	if !strings.Contains(errs, says) {
		t.Errorf("no abort message %q:\n%s", says, errs)
	}
	s := readSummary(t, out)
	if s.Status != "failed" || !strings.HasPrefix(s.Error, "aborted: threshold") {
		t.Errorf("status %q, error %q", s.Status, s.Error)
	}
	return s
}

// Failed thresholds give exit code 4, a table line and a JUnit file.
func TestThresholdsExitCode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		if r.URL.Path == "/bad" {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\nthresholds: [\"p95 < 1s\", \"good: p50 < 1ms\", \"bad: errors < 1%\", \"total: rps > 1\"]\nscenarios: [{name: s, vus: 1, iterations: 10, flow: [{name: good, url: /good}, {name: bad, url: /bad}]}]\n")
	code, stdout, _ := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s", code, exitThresholds, stdout)
	}
	if !strings.Contains(stdout, "thresholds: 2 passed, 3 failed") {
		t.Errorf("threshold lines:\n%s", stdout)
	}
	s := readSummary(t, out)
	failed := map[string]bool{}
	for _, r := range s.Thresholds {
		if !r.Pass {
			failed[r.Threshold+" "+r.Operation] = true
		}
	}
	// p95 < 1s holds for good but bad has no successful request to measure.
	want := map[string]bool{"good: p50 < 1ms good": true, "bad: errors < 1% bad": true, "p95 < 1s bad": true}
	if !reflect.DeepEqual(failed, want) {
		t.Errorf("failed %v, want %v", failed, want)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*", "junit.xml"))
	b, _ := os.ReadFile(m[0])
	if !strings.Contains(string(b), `<testsuite name="perflab thresholds" tests="5" failures="3">`) {
		t.Errorf("junit.xml:\n%s", b)
	}
	// Failures are counted per interval too (intervals.csv), for the
	// errors-over-time chart, and survive a trip through the store.
	rd, err := results.ReadDir(filepath.Dir(m[0]))
	if err != nil {
		t.Fatal(err)
	}
	var errs, reqs int64
	for tag, ivs := range rd.Intervals {
		for _, iv := range ivs {
			if strings.HasSuffix(tag, "/bad") {
				errs += iv.Errors
			}
			if strings.HasSuffix(tag, "/good") || strings.HasSuffix(tag, "/bad") {
				reqs += iv.Count
			}
		}
	}
	if errs != 10 || reqs != 20 {
		t.Errorf("intervals count %d requests, %d errors on bad; want 20 and 10", reqs, errs)
	}
	code, page, _ := runCLI(t, "report", "--format", "html", filepath.Dir(m[0]))
	if code != exitOK || !strings.Contains(page, `"title":"Failed operations per second over time"`) || strings.Contains(page, "none failed") {
		t.Errorf("no errors chart in the report (exit %d)", code)
	}
	// The thresholds as JUnit XML again, from the run directory.
	if code, x, _ := runCLI(t, "report", "--format", "junit", filepath.Dir(m[0])); code != exitOK || !strings.Contains(x, `<testsuite name="perflab thresholds" tests="5" failures="3">`) {
		t.Errorf("report --format junit: %d\n%s", code, x)
	}
	// Every table as CSV.
	code, th, _ := runCLI(t, "report", "--format", "csv", "--table", "thresholds", filepath.Dir(m[0]))
	if rows, err := csv.NewReader(strings.NewReader(th)).ReadAll(); code != exitOK || err != nil || len(rows) != 6 || strings.Join(rows[0], ",") != "threshold,stage,operation,actual,pass,note" {
		t.Errorf("thresholds csv (exit %d): %v\n%s", code, err, th)
	}
	code, ivs, _ := runCLI(t, "report", "--format", "csv", "--table", "intervals", filepath.Dir(m[0]))
	rows, err := csv.NewReader(strings.NewReader(ivs)).ReadAll()
	var csvErrs int64
	for _, r := range rows[1:] {
		if r[2] == "bad" {
			n, _ := strconv.ParseInt(r[7], 10, 64)
			csvErrs += n
		}
	}
	if code != exitOK || err != nil || csvErrs != 10 {
		t.Errorf("intervals csv (exit %d, %v): %d errors on bad, want 10\n%s", code, err, csvErrs, ivs)
	}
	// Markdown for a wiki, with its charts as SVG files beside it (six
	// charts of the stage, and the host's busy one when a sample of the
	// generator fell inside the short stage).
	md := filepath.Join(t.TempDir(), "wiki", "run.md")
	if code, _, errs := runCLI(t, "report", "--format", "md", "-o", md, filepath.Dir(m[0])); code != exitOK {
		t.Fatal(errs)
	}
	text, _ := os.ReadFile(md)
	svgs, _ := filepath.Glob(filepath.Join(filepath.Dir(md), "run-charts", "*.svg"))
	if len(svgs) < 6 || !strings.Contains(string(text), "![Failed operations per second over time](run-charts/stage1-errors-over-time.svg)") {
		t.Errorf("charts %v; markdown:\n%s", svgs, text)
	}
	for _, f := range svgs {
		b, _ := os.ReadFile(f)
		var doc struct {
			XMLName xml.Name
			Lines   []struct{} `xml:"polyline"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil || doc.XMLName.Space != "http://www.w3.org/2000/svg" || len(doc.Lines) == 0 {
			t.Errorf("%s: not an SVG with lines (%v)", f, err)
		}
	}
}

// A team's history in PostgreSQL (the server .ci/run starts).
func TestPostgresHistory(t *testing.T) {
	dsn := testenv.Getenv(t, "PERFLAB_TEST_POSTGRES", ".ci/run starts PostgreSQL and sets it")
	// A schema of this package's own: the store's tests use the same server.
	if db, err := sql.Open("pgx", dsn); err == nil {
		_, err = db.Exec("CREATE SCHEMA IF NOT EXISTS cli_test")
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	dsn = store.WithSearchPath(dsn, "cli_test")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	label := fmt.Sprintf("ci-%d", time.Now().UnixNano())
	plan := writePlan(t, "name: pg-history\ntarget: "+srv.URL+"\nscenarios: [{vus: 2, iterations: 20, flow: [{name: a, url: /a}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", t.TempDir(), "--quiet", "--store", dsn, "--label", "build="+label); code != exitOK {
		t.Fatal(errs)
	}
	code, out, errs := runCLI(t, "runs", "--store", dsn, "--label", "build="+label, "--json")
	var runs []struct{ ID, Status string }
	if code != exitOK || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].Status != "completed" {
		t.Fatalf("runs: %d %s %s", code, out, errs)
	}
	code, shown, _ := runCLI(t, "show", "--store", dsn, runs[0].ID)
	if code != exitOK || !strings.Contains(shown, "summary = 40 in") {
		t.Errorf("show:\n%s", shown)
	}
}

// A run directory imported into a history and exported again compares as
// the same run: nothing is lost on the way.
func TestImportExportRoundTrip(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(2 * time.Millisecond) }))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: moved\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{vus: 2, duration: 800ms, flow: [{name: a, url: /a}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet", "--store", "off"); code != exitOK {
		t.Fatal(errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-moved"))
	db := filepath.Join(t.TempDir(), "h.db")
	code, msg, errs := runCLI(t, "import", "--store", db, "--label", "release=old", dirs[0])
	if code != exitOK || !strings.Contains(msg, "imported") {
		t.Fatalf("import: %s %s", msg, errs)
	}
	if code, _, errs := runCLI(t, "import", "--store", db, dirs[0]); code == exitOK || !strings.Contains(errs, "already in the history") {
		t.Errorf("import twice: %d %s", code, errs)
	}
	id := filepath.Base(dirs[0])
	exported := filepath.Join(t.TempDir(), "again")
	if code, _, errs := runCLI(t, "export", "--store", db, id, exported); code != exitOK {
		t.Fatal(errs)
	}
	if b, err := os.ReadFile(filepath.Join(exported, "summary.txt")); err != nil || !strings.Contains(string(b), "summary = ") {
		t.Errorf("exported summary.txt: %v %q", err, b)
	}
	// -o FILE.html without --format writes HTML.
	page := filepath.Join(t.TempDir(), "run.html")
	if code, _, errs := runCLI(t, "report", "--store", db, id, "-o", page); code != exitOK {
		t.Errorf("report -o run.html: %s", errs)
	} else if b, _ := os.ReadFile(page); !strings.HasPrefix(strings.TrimSpace(string(b)), "<!DOCTYPE html>") {
		t.Errorf("report -o run.html wrote %.60q", b)
	}
	orig, err1 := results.ReadDir(dirs[0])
	back, err2 := results.ReadDir(exported)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if len(orig.Intervals) != len(back.Intervals) {
		t.Fatalf("%d tags, exported %d", len(orig.Intervals), len(back.Intervals))
	}
	// The exact totals go through the history as written.
	a, err1 := os.ReadFile(filepath.Join(dirs[0], results.TotalsFile))
	b, err2 := os.ReadFile(filepath.Join(exported, results.TotalsFile))
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) || back.Totals == nil {
		t.Errorf("totals.jsonl after import and export: %v %v, same %v", err1, err2, bytes.Equal(a, b))
	}
	// The generator's host samples go through the history too.
	if len(orig.Points) == 0 || len(back.Points) != len(orig.Points) {
		t.Errorf("%d monitor samples, exported %d", len(orig.Points), len(back.Points))
	}
	for tag, ivs := range orig.Intervals {
		got := back.Intervals[tag]
		if len(got) != len(ivs) {
			t.Fatalf("%s: %d intervals, exported %d", tag, len(ivs), len(got))
		}
		for i := range ivs {
			a, _ := ivs[i].Histogram()
			b, _ := got[i].Histogram()
			if ivs[i].StartMs != got[i].StartMs || a.TotalCount() != b.TotalCount() || a.ValueAtPercentile(99) != b.ValueAtPercentile(99) ||
				ivs[i].Count < 0 || ivs[i].Count != got[i].Count || ivs[i].Errors != got[i].Errors {
				t.Errorf("%s interval %d differs after import and export", tag, i)
			}
		}
	}
	// And the stored run is there by label.
	if code, list, _ := runCLI(t, "runs", "--store", db, "--label", "release=old"); code != exitOK || !strings.Contains(list, id) {
		t.Errorf("runs: %s", list)
	}
}

// A message flow: each VU publishes a request, a responder simulator
// answers after 20 ms, the VU awaits its own answer, extracts a value from
// it and sends it on over HTTP. On an in-process bus, on Kafka and NATS
// brokers started in-process, and on the real ones that .ci/run starts.
func TestMessageStepsAndResponder(t *testing.T) {
	t.Run("mem", func(t *testing.T) { messageFlow(t, "mem://perflab-test-messages", "requests", "replies") })
	t.Run("kafka", func(t *testing.T) {
		bustest.EachKafka(t, func(t *testing.T, addr string) {
			req, rep := bustest.TopicName(), bustest.TopicName()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := bus.Dial(ctx, "kafka://"+addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, topic := range []string{req, rep} {
				if err := c.(*kafka.Conn).CreateTopic(ctx, topic, 3); err != nil {
					t.Fatal(err)
				}
				defer c.(*kafka.Conn).DeleteTopic(context.Background(), topic)
			}
			messageFlow(t, "kafka://"+addr, req, rep)
		})
	})
	t.Run("nats", func(t *testing.T) {
		bustest.EachNATS(t, func(t *testing.T, url string) {
			messageFlow(t, url, bustest.TopicName()+".req", bustest.TopicName()+".rep")
		})
	})
}

func messageFlow(t *testing.T, busURL, requests, replies string) {
	var answers atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/answer/42" {
			answers.Add(1)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, `name: events
target: `+srv.URL+`
interval: 200ms
buses: [{name: b, url: "`+busURL+`"}]
simulators:
  - name: appc
    bus: b
    responder:
      topics: [`+requests+`]
      match: [{field: json.id}]
      reply: {topic: `+replies+`, key: "${json.id}", body: '{"id": "${json.id}", "answer": 42}'}
      latency: {fixed: 20ms}
scenarios:
  - name: s
    vus: 5
    iterations: 10
    flow:
      - name: send
        publish: {bus: b, topic: `+requests+`, key: "${vu}-${iteration}", json: {id: "${vu}-${iteration}"}}
      - name: reply
        await: {bus: b, topic: `+replies+`, match: key, equals: "${vu}-${iteration}", timeout: 10s}
        extract: {answer: $.answer}
      - name: use it
        url: /answer/${answer}
`)
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	for _, name := range []string{"send", "reply", "use it"} {
		if n := count(s, 0, name); n != 50 {
			t.Errorf("%s: %d, want 50", name, n)
		}
	}
	for _, op := range s.Stages[0].Operations {
		if op.Errors.Total != 0 {
			t.Errorf("%s: %d errors %v", op.Name, op.Errors.Total, op.Errors.ByKind)
		}
		// The responder waits 20 ms after it got the request, which may be
		// before the publish step returns (Kafka's acknowledgement): the
		// await alone can be shorter, a whole iteration cannot.
		if op.Kind == "scenario" && op.Latency.Min < 19.5 {
			t.Errorf("iteration latency min %.2f ms, want at least the responder's 20 ms", op.Latency.Min)
		}
	}
	if answers.Load() != 50 {
		t.Errorf("the server got %d answers, want 50", answers.Load())
	}
	if len(s.Simulators) != 1 || s.Simulators[0].Received != 50 || s.Simulators[0].Matched != 50 || s.Simulators[0].Replied != 50 {
		t.Errorf("simulators: %+v", s.Simulators)
	}
	if !strings.Contains(stdout, "appc  responder  50 received  50 matched  50 replied, 0 failed, 0 canceled") {
		t.Errorf("no simulator table:\n%s", stdout)
	}
}

// An HTTP simulator declared in the plan runs beside the load; the summary
// reports what each of its routes saw, which is what the plan sent.
func TestHTTPSimulatorInPlan(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	stubs := "routes:\n  - {name: get device, path: '/aai/{id}', latency: {fixed: 3ms}}\n  - {name: fail, path: /down, status: 503}\n"
	if err := os.WriteFile(filepath.Join(dir, "stubs.yaml"), []byte(stubs), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.yaml")
	body := "target: http://" + addr + "\nsimulators: [{name: aai, http: {listen: \"" + addr + "\", stubs: stubs.yaml}}]\n" +
		"scenarios: [{name: s, vus: 2, iterations: 10, flow: [{name: device, url: '/aai/${vu}'}, {name: down, url: /down}]}]\n"
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	if len(s.Simulators) != 1 || len(s.Simulators[0].Routes) != 2 {
		t.Fatalf("simulators: %+v", s.Simulators)
	}
	for _, r := range s.Simulators[0].Routes {
		if r.Requests != 20 {
			t.Errorf("route %s saw %d requests, want 20", r.Name, r.Requests)
		}
	}
	if n := count(s, 0, "device"); n != 20 {
		t.Errorf("device: %d", n)
	}
	for _, op := range s.Stages[0].Operations {
		if op.Name == "down" && op.Errors.ByKind["http_5xx"] != 20 {
			t.Errorf("down: %v", op.Errors.ByKind)
		}
	}
}

// A service that reports its own time (Server-Timing): perflab splits each
// operation's end-to-end time into that and the overhead around it.
func TestServerTimeSplit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		if r.URL.Path == "/timed" {
			w.Header().Set("Server-Timing", `db;dur=1.5, app;dur=4.25;desc="handler"`)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\nhttp: {server_time: {header: Server-Timing, metric: app}}\n"+
		"scenarios: [{name: s, vus: 2, iterations: 20, flow: [{name: timed, url: /timed}, {name: silent, url: /silent}]}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	for _, op := range s.Stages[0].Operations {
		switch op.Name {
		case "timed":
			if op.ServerTime == nil || op.ServerResponses != 40 || math.Abs(op.ServerTime.Mean-4.25) > 1e-9 || op.ServerTime.Max != 4.25 {
				t.Fatalf("timed: server time %+v over %d responses, want 4.25 ms over 40", op.ServerTime, op.ServerResponses)
			}
			// The handler sleeps 5 ms but reports 4.25: overhead is the rest.
			if o := op.Overhead; o == nil || o.Min < 0.75 || math.Abs(o.Mean+op.ServerTime.Mean-op.Latency.Mean) > 1e-6 {
				t.Errorf("timed: overhead %+v, latency mean %.4f", o, op.Latency.Mean)
			}
		case "silent":
			if op.ServerTime != nil || op.Overhead != nil {
				t.Errorf("silent: server time %+v", op.ServerTime)
			}
		}
	}
	if !regexp.MustCompile(`time inside the service[^\n]*\n\s*operation\s+responses\s+end-to-end mean\s+server mean\s+overhead mean.*\n\s*timed\s+40\s+\S+\s+4\.250\s`).MatchString(stdout) {
		t.Errorf("no server time table:\n%s", stdout)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-*"))
	code, md, _ := runCLI(t, "report", "--format", "md", dirs[0])
	if code != exitOK || !regexp.MustCompile(`\| timed \| 40 \| [0-9.]+ \| 4\.250 \| [0-9.]+ \| 4\.250 \|`).MatchString(md) {
		t.Errorf("no server time in the Markdown:\n%s", md)
	}
}

// A run killed outright (SIGKILL: no teardown, no summary) loses at most
// the interval in progress: the store has every interval before it, and
// runs, show and report read the run back from them, as killed (not
// running for ever); report, compare and import read its directory too.
func TestKilledRunKeepsItsIntervals(t *testing.T) {
	bin := perflabBin(t)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		served.Add(1)
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: killed\ntarget: "+srv.URL+"\ninterval: 200ms\nscenarios: [{vus: 2, duration: 1m, flow: [{name: a, url: /a}]}]\n")
	cmd := exec.Command(bin, "run", plan, "--out", out, "--quiet", "--label", "release=Goldenrod")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once a few intervals are stored, however slow the machine.
	for deadline := time.Now().Add(20 * time.Second); served.Load() < 300 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(50 * time.Millisecond) // requests the server was still answering
	db := filepath.Join(out, "perflab.db")
	code, list, errs := runCLI(t, "runs", "--store", db, "--json")
	var runs []struct {
		ID, Status string
		Start, End time.Time
	}
	if code != exitOK || json.Unmarshal([]byte(list), &runs) != nil || len(runs) != 1 || runs[0].Status != "killed" {
		t.Fatalf("runs: %d %s %s", code, list, errs)
	}
	code, shown, errs := runCLI(t, "show", "--store", db, "--json", runs[0].ID)
	var s results.Summary
	if code != exitOK || json.Unmarshal([]byte(shown), &s) != nil || len(s.Stages) != 1 {
		t.Fatalf("show: %d %s\n%s", code, errs, shown)
	}
	if !runs[0].End.Equal(s.Stages[0].End) {
		t.Errorf("the killed run ends %v, its last stored interval %v", runs[0].End, s.Stages[0].End)
	}
	stored := count(&s, 0, "a")
	lost := served.Load() - stored
	rate := float64(stored) / s.Stages[0].Duration
	// The interval in progress (at most 200 ms), its commit (an fsync, slow
	// on a busy CI disk) and the requests in flight: under half a second.
	if stored == 0 || s.Stages[0].Duration < 0.8 || lost < 0 || float64(lost) > rate*0.5+4 {
		t.Errorf("stored %d requests over %.2f s, the server answered %d: %d lost at %.0f/s", stored, s.Stages[0].Duration, served.Load(), lost, rate)
	}
	t.Logf("stored %d requests over %.2f s; the server answered %d", stored, s.Stages[0].Duration, served.Load())
	if s.Status != "killed" || !strings.Contains(s.Error, "was killed") {
		t.Errorf("status %s, error %q", s.Status, s.Error)
	}
	// The summary line is rebuilt too: the server sleeps, so Avg is not 0.
	if s.Total.Mean <= 0 || s.Total.Max < s.Total.Mean || !strings.Contains(s.Total.Line, fmt.Sprintf("summary = %d in", stored)) {
		t.Errorf("total %+v", s.Total)
	}
	if code, md, errs := runCLI(t, "report", "--store", db, "--format", "md", runs[0].ID); code != exitOK || !strings.Contains(md, "| a |") || strings.Contains(md, "0 CPUs") || !strings.Contains(md, "was killed") {
		t.Errorf("report: %d %s\n%s", code, errs, md)
	}

	// Its directory, without summary.json, reads the same: every interval
	// flushed before the kill (the history's, or one more).
	dir := filepath.Join(out, runs[0].ID)
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
		t.Fatalf("a killed run wrote summary.json: %v", err)
	}
	rd, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	inDir := count(rd.Summary, 0, "a")
	if rd.Summary.Status != "killed" || rd.Summary.Labels["release"] != "Goldenrod" || rd.Summary.RunID != runs[0].ID || rd.Summary.Stages[0].Name != "all" || inDir < stored || inDir > served.Load() {
		t.Errorf("from its directory: %s %s stage %q, %d requests; the history %d, the server %d", rd.Summary.RunID, rd.Summary.Status, rd.Summary.Stages[0].Name, inDir, stored, served.Load())
	}
	for _, args := range [][]string{
		{"report", "--format", "md", dir},
		{"report", "--table", "intervals", dir},
		{"drift", dir},
		{"compare", dir, dir},
	} {
		if code, stdout, errs := runCLI(t, args...); code != exitOK || stdout == "" {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, errs)
		}
	}
	// Imported into another history, it is a killed run there.
	other := filepath.Join(t.TempDir(), "other.db")
	if code, _, errs := runCLI(t, "import", "--store", other, dir); code != exitOK {
		t.Fatalf("import: %s", errs)
	}
	if code, list, _ := runCLI(t, "runs", "--store", other); code != exitOK || !strings.Contains(list, runs[0].ID) || !strings.Contains(list, "killed") {
		t.Errorf("imported: %s", list)
	}
}

// A run killed before its first interval ends has nothing measured: it is
// killed, lasted nothing (not minus 292 years), and reads back from its
// history and its directory.
func TestKilledBeforeTheFirstInterval(t *testing.T) {
	bin := perflabBin(t)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: early\ntarget: "+srv.URL+"\ninterval: 1h\nscenarios: [{vus: 1, duration: 1m, flow: [{name: a, url: /a}]}]\n")
	cmd := exec.Command(bin, "run", plan, "--out", out, "--quiet")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); served.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	db := filepath.Join(out, "perflab.db")
	code, list, errs := runCLI(t, "runs", "--store", db)
	if code != exitOK || !strings.Contains(list, "killed") || !strings.Contains(list, " 0s ") {
		t.Errorf("runs: %d\n%s%s", code, list, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-early"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	id := filepath.Base(dirs[0])
	for _, src := range [][]string{{"--store", db, id}, {dirs[0]}} {
		code, md, errs := runCLI(t, append([]string{"report", "--format", "md"}, src...)...)
		if code != exitOK || !strings.Contains(md, "was killed") || strings.Contains(md, "-9223372037") {
			t.Errorf("report %v: %d %s\n%s", src, code, errs, md)
		}
	}
}

// Steps marked correlate go to requests.csv; at the end their ids are found
// in the service's log, which gives the time inside the service per
// operation, matched and unmatched apart (as the Drools PDP report does from audit.log).
func TestLogCorrelation(t *testing.T) {
	dir := t.TempDir()
	// The service logs four requests in five.
	srv := loggingServer(t, filepath.Join(dir, "audit.log"), 4*time.Millisecond, func(n int, _ string) bool { return n%5 != 0 })
	plan := filepath.Join(dir, "plan.yaml")
	body := "target: " + srv.URL + "\n" +
		"logs: [{files: [audit.log], pattern: {line: '^(?P<start>\\S+) (?P<end>\\S+) event=(?P<id>\\S+)$'}}]\n" +
		"scenarios: [{name: s, vus: 1, iterations: 50, flow: [{name: onset, method: POST, url: /events, headers: {X-Request-ID: 'ev-${iteration}'}, correlate: 'ev-${iteration}'}]}]\n"
	if err := os.WriteFile(plan, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	if s.Logs == nil || len(s.Logs.Ops) != 1 {
		t.Fatalf("logs: %+v\n%s", s.Logs, errs)
	}
	op := s.Logs.Ops[0]
	if op.Operation != "onset" || op.Requests != 50 || op.Matched != 40 || op.Unmatched != 10 {
		t.Errorf("onset: %d requests, %d matched, %d unmatched; want 50, 40, 10", op.Requests, op.Matched, op.Unmatched)
	}
	// The service logged at least its 4 ms sleep, and less than perflab saw.
	if p := op.Processing; p.Min < 4 || p.Mean > op.EndToEndMatched.Mean || op.EndToEndUnmatched.Count != 10 {
		t.Errorf("processing %+v, end-to-end matched %+v, unmatched %+v", p, op.EndToEndMatched, op.EndToEndUnmatched)
	}
	if !strings.Contains(stdout, "processing time in the service, from its logs") {
		t.Errorf("no log table:\n%s", stdout)
	}
}

// loggingServer is a service that takes sleep to answer each request and
// logs the n-th (from 1) to logPath when logs(n, its X-Request-ID) says
// so, with its start, its end and its id: START END event=ID.
func loggingServer(t *testing.T, logPath string, sleep time.Duration, logs func(n int, id string) bool) *httptest.Server {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	var mu sync.Mutex
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		time.Sleep(sleep)
		mu.Lock()
		defer mu.Unlock()
		n++
		if id := r.Header.Get("X-Request-ID"); logs(n, id) {
			fmt.Fprintf(logf, "%s %s event=%s\n", start.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano), id)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Monitors sample the system under test beside the load: here perflab's
// own test process (which serves the requests, burning CPU on each), the
// generator's host, and, with the PostgreSQL of .ci/run, the database the
// service queries, with its slow statements.
func TestMonitorsInTheReport(t *testing.T) {
	dsn, _ := testenv.Lookup(t, "PERFLAB_TEST_POSTGRES", ".ci/run starts PostgreSQL and sets it")
	var db *sql.DB
	if dsn != "" {
		var err error
		if db, err = sql.Open("pgx", dsn); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
	}
	var rounds atomic.Int64
	rounds.Store(20000) // about a millisecond of CPU per request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.Sum256([]byte(r.URL.Path))
		for range rounds.Load() {
			h = sha256.Sum256(h[:])
		}
		if db != nil && r.URL.Path == "/slow" {
			if _, err := db.Exec("SELECT pg_sleep(0.12)"); err != nil {
				http.Error(w, err.Error(), 500)
			}
		}
	}))
	defer srv.Close()
	monitors := fmt.Sprintf("monitors: [{name: service, kind: process, pid: %d}]\n", os.Getpid())
	flow := "[{name: work, url: /work}]"
	if db != nil {
		monitors = fmt.Sprintf("monitors: [{name: service, kind: process, pid: %d}, {name: db, kind: postgres, dsn: %q}]\n", os.Getpid(), dsn)
		flow = "[{name: work, url: /work}, {name: slow, url: /slow}]"
	}
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 200ms\n"+monitors+"scenarios: [{name: s, vus: 2, duration: 1500ms, flow: "+flow+"}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	if s.Resources == nil || len(s.Resources.Windows) != 1 {
		t.Fatalf("resources: %+v\n%s", s.Resources, errs)
	}
	figs := map[string]bool{}
	for _, m := range s.Resources.Windows[0].Monitors {
		figs[m.Monitor] = true
		switch m.Monitor {
		case "service":
			iters := count(s, 0, "s")
			if c := m.CPU; c == nil || c.Seconds <= 0 || c.MSPerTx == nil || math.Abs(*c.MSPerTx-1000*c.Seconds/float64(iters)) > 1e-6 {
				t.Errorf("service CPU %+v over %d iterations", m.CPU, iters)
			}
			if len(m.Memory) == 0 || m.Memory[0].PeakBytes <= 0 {
				t.Errorf("service memory %+v", m.Memory)
			}
		case "generator":
			if m.Host == nil || m.Host.BusyMax <= 0 || m.Host.BusyMax > 1 {
				t.Errorf("generator host %+v", m.Host)
			}
		}
	}
	if !figs["service"] || !figs["generator"] {
		t.Errorf("monitors %v", figs)
	}
	if !strings.Contains(stdout, "resources (what the monitors saw") {
		t.Errorf("no resources table:\n%s", stdout)
	}
	if db != nil {
		slow := count(s, 0, "slow")
		found := false
		for _, q := range s.Resources.SlowQueries {
			// monitor's test sleeps on the same database, in a shape of its own
			if strings.Contains(q.Query, "pg_sleep") && !strings.Contains(q.Query, "monitor_test") {
				found = q.Calls == slow && q.MeanMS >= 120
			}
		}
		if !found || !strings.Contains(stdout, "slow queries") {
			t.Errorf("slow queries %+v, want pg_sleep called %d times", s.Resources.SlowQueries, slow)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-*"))
	code, page, _ := runCLI(t, "report", "--format", "html", dirs[0])
	if code != exitOK || !strings.Contains(page, `"title":"CPU used over time (cores)"`) || !strings.Contains(page, "<h2>Resources</h2>") {
		t.Errorf("no resource charts or table in the report")
	}
	if code, md, _ := runCLI(t, "report", "--format", "md", dirs[0]); code != exitOK || !regexp.MustCompile(`\| all \| service \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|`).MatchString(md) {
		t.Errorf("no resources in the Markdown:\n%s", md)
	}
	// A release that spends four times the CPU per request: compare shows
	// the service's CPU per transaction beside the latencies.
	rounds.Store(80000)
	out2 := t.TempDir()
	if code, _, errs := runCLI(t, "run", plan, "--out", out2, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	dirs2, _ := filepath.Glob(filepath.Join(out2, "*-*"))
	code, cmp, errs := runCLI(t, "compare", dirs[0], dirs2[0])
	m := regexp.MustCompile(`all\s+service\s+([0-9.]+)\s+([0-9.]+)\s+\+`).FindStringSubmatch(cmp)
	if code != exitOK || m == nil || !strings.Contains(cmp, "resources (one value per run") {
		t.Fatalf("compare: %d %s\n%s", code, errs, cmp)
	}
}

// Stages shorter than the monitors' interval still get samples at their
// edges, and so their own CPU figures.
func TestMonitorsSampleEveryStage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.Sum256([]byte(r.URL.Path))
		for range 5000 {
			h = sha256.Sum256(h[:])
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, fmt.Sprintf("target: %s\ninterval: 5s\nvars: {users: [1, 2]}\nmonitors: [{name: service, kind: process, pid: %d}]\n", srv.URL, os.Getpid())+
		"scenarios: [{name: s, vus: '${users}', duration: 400ms, flow: [{name: a, url: /a}]}]\n")
	if code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	s := readSummary(t, out)
	stages := 0
	for _, w := range s.Resources.Windows {
		for _, m := range w.Monitors {
			if m.Monitor == "service" && w.Window != "run" && m.CPU != nil && m.CPU.Seconds > 0 && m.CPU.MSPerTx != nil {
				stages++
			}
		}
	}
	if stages != 2 {
		t.Errorf("%d of 2 stages have the service's CPU: %+v", stages, s.Resources.Windows)
	}
}

// A scenario named like its step, and a step of one name in two
// transactions: each kind keeps its own histograms, in the run directory and
// in the history, and the shared step is one API in comparisons.
func TestSameNamesKeepTheirHistograms(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios:\n"+
		"  - {name: health, vus: 1, duration: 600ms, flow: [{name: health, url: /h}]}\n"+
		"  - {name: circ, vus: 1, duration: 600ms, flow: [{transaction: out, steps: [{name: loans, url: /l}, {name: slow, url: /slow}]}, {transaction: in, steps: [{name: loans, url: /l}]}]}\n")
	if code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-*"))
	rd, err := results.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	step, scen := rd.Intervals["s1/health/health"], rd.Intervals["s1/health/health/.scenario"]
	if len(step) == 0 || len(scen) == 0 {
		t.Fatalf("tags %v", slices.Collect(maps.Keys(rd.Intervals)))
	}
	// The two loans steps are one API: one histogram per interval whose
	// counts add up to both steps'.
	var loans, want int64
	for _, iv := range rd.Intervals["s1/circ/loans"] {
		loans += iv.Count
	}
	for _, op := range rd.Summary.Stages[0].Operations {
		if op.Name == "loans" {
			want += op.Count
		}
	}
	if loans != want || want == 0 {
		t.Errorf("loans intervals count %d, the two steps %d", loans, want)
	}
	code, cmp, errs := runCLI(t, "compare", dirs[0], dirs[0])
	if code != exitOK || strings.Count(cmp, " loans ") != 1 || strings.Count(cmp, " health ") != 2 {
		t.Errorf("compare rows: %d %s\n%s", code, errs, cmp)
	}
	// And through the history: export gives the same tags back.
	exported := filepath.Join(t.TempDir(), "x")
	if code, _, errs := runCLI(t, "export", "--store", filepath.Join(out, "perflab.db"), filepath.Base(dirs[0]), exported); code != exitOK {
		t.Fatal(errs)
	}
	back, err := results.ReadDir(exported)
	if err != nil || len(back.Intervals["s1/health/health/.scenario"]) != len(scen) || len(back.Intervals["s1/circ/loans"]) != len(rd.Intervals["s1/circ/loans"]) {
		t.Errorf("exported: %v %d scenario intervals", err, len(back.Intervals["s1/health/health/.scenario"]))
	}
}
