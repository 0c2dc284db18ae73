package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/store"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := dispatch(&stdio{out: &out, err: &errb}, args)
	return code, out.String(), errb.String()
}

func readSummary(t *testing.T, dir string) *report.Summary {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "summary.json"))
	if len(matches) != 1 {
		t.Fatalf("want one run directory under %s, found %v", dir, matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func count(s *report.Summary, stage int, name string) int64 {
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
	// The run's Markdown report has the 000 table for both thread counts.
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
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "perflab")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
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
	cmd := exec.Command(bin, "run", plan, "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
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
	if fi, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(filepath.Join(out, "x"))), filepath.Base(out))); err != nil || !fi.IsDir() {
		t.Error("run directory missing")
	}
}

// A fixed amount of work swept over parallelism: a server that serves two
// requests at a time scales to 2 VUs and no further, and summary.json says so.
func TestParallelismSweepFindsSaturation(t *testing.T) {
	sem := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		time.Sleep(5 * time.Millisecond)
		<-sem
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\nvars: {p: [1, 2, 3, 4, 6]}\nscenarios: [{name: get, vus: '${p}', total_iterations: 120, flow: [{name: a, url: /a}]}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, out)
	if s.Scaling == nil || len(s.Scaling.Points) != 5 {
		t.Fatalf("scaling: %+v", s.Scaling)
	}
	for _, p := range s.Scaling.Points {
		if p.Requests != 120 {
			t.Errorf("P=%d did %d requests, want 120", p.VUs, p.Requests)
		}
	}
	if sp := s.Scaling.Points[1].Speedup; sp < 1.7 || sp > 2.2 {
		t.Errorf("speedup at 2 VUs %.2f, want about 2", sp)
	}
	if sp := s.Scaling.Points[4].Speedup; sp > 2.3 {
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
		d := 4 * time.Millisecond
		if r.URL.Path == "/loans" && slow.Load() {
			d = 8 * time.Millisecond
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
	// Two runs on a shared machine differ by a few % anyway: only changes of
	// 15% or more count here.
	code, out, errs := runCLI(t, "compare", "--min-change", "0.15", dir(baseOut), dir(candOut))
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
	var rc report.RunComparison
	if code != exitOK || json.Unmarshal([]byte(js), &rc) != nil || rc.Percentile != 95 || len(rc.Ops) != 6 {
		t.Errorf("json: exit %d, %d operations", code, len(rc.Ops))
	}
}

// A longevity run whose service degrades after a while: drift names the
// moment and the levels, and the windows show before and after.
func TestDriftFindsTheDegradation(t *testing.T) {
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) > 1200*time.Millisecond {
			time.Sleep(6 * time.Millisecond)
		} else {
			time.Sleep(2 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: soak, vus: 2, duration: 3s, flow: [{name: checkout, url: /c}]}]\n")
	if code, _, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatal(errs)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*"))
	code, text, errs := runCLI(t, "drift", m[0], "--window", "first:1s", "--window", "last:1s", "--window", "all")
	if code != exitOK {
		t.Fatalf("drift: %s", errs)
	}
	// The service slowed 1.2 s after the server started; the run started
	// a little later.
	re := regexp.MustCompile(`change: p95 rose from ([1-3]\.\d+) ms to ([5-9]\.\d+) ms after (\d\.\d) s`)
	mm := re.FindStringSubmatch(text)
	if mm == nil || mm[3] < "0.8" || mm[3] > "1.6" {
		t.Errorf("no change point near 1.2 s:\n%s", text)
	}
	if !strings.Contains(text, "p95 over time: ") {
		t.Errorf("no trend line:\n%s", text)
	}
	var ds []report.OpDrift
	_, js, _ := runCLI(t, "drift", "--json", "--window", "first:1s", "--window", "last:1s", m[0])
	if err := json.Unmarshal([]byte(js), &ds); err != nil || len(ds) != 1 || len(ds[0].Windows) != 2 {
		t.Fatalf("json: %v %s", err, js)
	}
	if first, last := ds[0].Windows[0].Stats.Mean, ds[0].Windows[1].Stats.Mean; first > 3 || last < 6 {
		t.Errorf("window means %.2f then %.2f ms, want about 2 then 6", first, last)
	}
}

// Runs are recorded in the history with labels; runs lists them, show
// prints one, and compare selects releases by label.
func TestHistoryAndLabelCompare(t *testing.T) {
	var slow atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			time.Sleep(6 * time.Millisecond)
		} else {
			time.Sleep(3 * time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "name: circulation\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: circ, vus: 2, duration: 1s, flow: [{name: check-out, url: /co}]}]\n")
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
	if code, _, errs := runCLI(t, "compare", "--store", db, "release=Nope", "release=Honeysuckle"); code == exitOK || !strings.Contains(errs, "no stored run has the label release=Nope") {
		t.Errorf("unknown label: %d %s", code, errs)
	}
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
}

// A team's history in PostgreSQL (the server .ci/run starts).
func TestPostgresHistory(t *testing.T) {
	dsn := os.Getenv("PERFLAB_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PERFLAB_TEST_POSTGRES is not set: .ci/run starts PostgreSQL and sets it")
		}
		t.Skip("PERFLAB_TEST_POSTGRES not set")
	}
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
	id := filepath.Base(dirs[0])
	exported := filepath.Join(t.TempDir(), "again")
	if code, _, errs := runCLI(t, "export", "--store", db, id, exported); code != exitOK {
		t.Fatal(errs)
	}
	orig, err1 := report.ReadRunDir(dirs[0])
	back, err2 := report.ReadRunDir(exported)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if len(orig.Intervals) != len(back.Intervals) {
		t.Fatalf("%d tags, exported %d", len(orig.Intervals), len(back.Intervals))
	}
	for tag, ivs := range orig.Intervals {
		got := back.Intervals[tag]
		if len(got) != len(ivs) {
			t.Fatalf("%s: %d intervals, exported %d", tag, len(ivs), len(got))
		}
		for i := range ivs {
			a, _ := ivs[i].Histogram()
			b, _ := got[i].Histogram()
			if ivs[i].StartMs != got[i].StartMs || a.TotalCount() != b.TotalCount() || a.ValueAtPercentile(99) != b.ValueAtPercentile(99) {
				t.Errorf("%s interval %d differs after import and export", tag, i)
			}
		}
	}
	// And the stored run is there by label.
	if code, list, _ := runCLI(t, "runs", "--store", db, "--label", "release=old"); code != exitOK || !strings.Contains(list, id) {
		t.Errorf("runs: %s", list)
	}
}
