package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// distServer counts what a distributed run asks of it: each path with its
// query, and the requests without the token setup handed out.
type distServer struct {
	mu       sync.Mutex
	seen     map[string]int
	byPath   map[string]int
	badToken int
	*httptest.Server
}

func newDistServer(t *testing.T) *distServer {
	s := &distServer{seen: map[string]int{}, byPath: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.byPath[r.URL.Path]++
		s.seen[r.URL.RequestURI()]++
		switch r.URL.Path {
		case "/login":
			w.Header().Set("X-Token", "t0k3n")
		case "/logout":
		default:
			if r.URL.Query().Get("token") != "t0k3n" {
				s.badToken++
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *distServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byPath[path]
}

// distPlan is a plan of every kind of load a distributed run splits:
// setup that hands a value to every worker, shared iterations, an open
// model, teardown.
func distPlan(t *testing.T, target, tag string) string {
	return writePlan(t, `name: dist-`+tag+`
target: `+target+`
interval: 250ms
setup:
  - {name: login, url: /login, extract: {token: {header: X-Token}}}
scenarios:
  - name: closed
    vus: 5
    total_iterations: 1000
    flow: [{name: get, url: "/`+tag+`/get?token=${token}&it=${iteration}&vu=${vu}"}]
  - name: open
    rate: 300
    duration: 2s
    vus: 6
    max_vus: 60
    flow: [{name: post, method: POST, url: "/`+tag+`/post?token=${token}&it=${iteration}"}]
teardown:
  - {name: logout, url: /logout}
thresholds: ["get: errors < 1%"]
`)
}

// pgSchema is the tests' PostgreSQL history, in a schema of their own.
func pgSchema(t *testing.T, schema string) string {
	dsn := testenv.Getenv(t, "PERFLAB_TEST_POSTGRES", ".ci/run starts PostgreSQL and sets it")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	return store.WithSearchPath(dsn, schema)
}

// startWorkers starts the workers of a distributed run, one process each.
func startWorkers(t *testing.T, bin, planPath, id, dsn, out string, count int, only []int, extra ...string) []*exec.Cmd {
	t.Helper()
	if only == nil {
		for i := range count {
			only = append(only, i)
		}
	}
	var cmds []*exec.Cmd
	for _, i := range only {
		c := exec.Command(bin, append([]string{"run", planPath, "--segment", fmt.Sprintf("%d/%d", i, count), "--run-id", id,
			"--store", dsn, "--out", out, "--quiet"}, extra...)...)
		var b strings.Builder
		c.Stderr, c.Stdout = &lockedBuilder{b: &b}, nil
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill() })
		cmds = append(cmds, c)
	}
	return cmds
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wait waits for the workers, and returns their exit codes and stderr.
func wait(cmds []*exec.Cmd) ([]int, string) {
	var codes []int
	var errs []string
	for i, c := range cmds {
		c.Wait()
		codes = append(codes, c.ProcessState.ExitCode())
		errs = append(errs, fmt.Sprintf("--- worker %d:\n%s", i, c.Stderr.(*lockedBuilder).String()))
	}
	return codes, strings.Join(errs, "\n")
}

// opHist is the merge of an operation's latency histograms in a phase.
func opHist(ph *metrics.Phase, name string) (*hdr.Histogram, int64) {
	h := metrics.NewHistogram()
	var n int64
	for i, op := range ph.Ops {
		if op.Name == name {
			st := ph.Totals[i].Unpacked()
			h.Merge(st.Hist)
			n += st.Count
		}
	}
	return h, n
}

// Three worker processes, meeting in a PostgreSQL history, make one run
// of a plan: setup once, its value in every worker; exactly the plan's
// shared iterations and arrivals, each once; teardown once; the merged
// counts equal the server's; the merged histograms equal, bit for bit,
// those of the same samples in one histogram; the run is one entry of the
// history, judged on the whole. A second distributed run at the same time
// in the same history does not mix with it.
func TestDistributedRunOnPostgres(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "dist_test")
	srv := newDistServer(t)
	out := t.TempDir()
	a := startWorkers(t, bin, distPlan(t, srv.URL, "a"), "run-a", dsn, out, 3, nil, "--label", "release=A")
	b := startWorkers(t, bin, distPlan(t, srv.URL, "b"), "run-b", dsn, out, 2, nil)
	codesA, errsA := wait(a)
	codesB, errsB := wait(b)
	for _, c := range append(codesA, codesB...) {
		if c != exitOK {
			t.Fatalf("exit codes %v %v\n%s\n%s", codesA, codesB, errsA, errsB)
		}
	}
	// Setup and teardown once per run; every request with setup's token.
	if n := srv.count("/login"); n != 2 {
		t.Errorf("setup ran %d times for two runs, want 2", n)
	}
	if n := srv.count("/logout"); n != 2 {
		t.Errorf("teardown ran %d times for two runs, want 2", n)
	}
	if srv.badToken != 0 {
		t.Errorf("%d requests without setup's token", srv.badToken)
	}
	for _, tc := range []struct {
		id, tag string
		workers int
	}{{"run-a", "a", 3}, {"run-b", "b", 2}} {
		s := summaryAt(t, filepath.Join(out, tc.id))
		if s.RunID != tc.id || s.Status != metrics.StatusCompleted || len(s.Workers) != tc.workers {
			t.Fatalf("%s: run %s %s with %d workers", tc.id, s.RunID, s.Status, len(s.Workers))
		}
		// Every shared iteration once, on the server and in the run.
		srv.mu.Lock()
		for it := range 1000 {
			n := 0
			for uri, c := range srv.seen {
				if strings.HasPrefix(uri, fmt.Sprintf("/%s/get?token=t0k3n&it=%d&", tc.tag, it)) {
					n += c
				}
			}
			if n != 1 {
				t.Errorf("%s: iteration %d made %d times", tc.id, it, n)
			}
		}
		posts := srv.byPath["/"+tc.tag+"/post"]
		srv.mu.Unlock()
		if got := count(s, 0, "get"); got != 1000 {
			t.Errorf("%s: get counted %d, want the plan's 1000", tc.id, got)
		}
		var dropped int64
		for _, op := range s.Stages[0].Operations {
			if op.Name == "open" {
				dropped = op.Dropped
			}
		}
		if got := count(s, 0, "post"); got != int64(posts) || got+dropped != 600 {
			t.Errorf("%s: post counted %d (+%d dropped), the server %d; the plan's arrivals are 600", tc.id, got, dropped, posts)
		}
		if len(s.Thresholds) != 1 || !s.Thresholds[0].Pass {
			t.Errorf("%s: thresholds %+v", tc.id, s.Thresholds)
		}
		// The merged histograms are those of all the samples: the parts'
		// added bucket by bucket.
		merged, err := results.ReadDir(filepath.Join(out, tc.id))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"get", "post"} {
			want := metrics.NewHistogram()
			var n int64
			for i := range tc.workers {
				part, err := results.ReadDir(filepath.Join(out, store.PartID(tc.id, i)))
				if err != nil {
					t.Fatal(err)
				}
				h, c := opHist(part.Totals.Stages[0], name)
				want.Merge(h)
				n += c
			}
			got, c := opHist(merged.Totals.Stages[0], name)
			if !got.Equals(want) || c != n {
				t.Errorf("%s: %s: the merged histogram (%d) is not the parts' samples (%d)", tc.id, name, c, n)
			}
		}
	}
	// One entry per run in the history; its parts by --by-worker.
	code, listed, errs := runCLI(t, "runs", "--store", dsn)
	if code != exitOK || strings.Count(listed, "\n") != 3 || !strings.Contains(listed, "run-a") || strings.Contains(listed, "-w0") {
		t.Errorf("runs: %d\n%s%s", code, listed, errs)
	}
	code, shown, errs := runCLI(t, "show", "--store", dsn, "--by-worker", "run-a")
	if code != exitOK || !strings.Contains(shown, "summary = ") || strings.Count(shown, "=== worker part") != 3 {
		t.Errorf("show --by-worker: %d\n%s%s", code, shown, errs)
	}
}

// A worker killed mid-run (kill -9) degrades the run: it says which worker
// stopped, keeps what the others measured, and teardown still runs once.
func TestDistributedWorkerKilled(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "dist_kill_test")
	srv := newDistServer(t)
	out := t.TempDir()
	planPath := writePlan(t, `name: dist-kill
target: `+srv.URL+`
interval: 250ms
scenarios:
  - {name: closed, vus: 6, duration: 5s, flow: [{name: get, url: "/k/get?vu=${vu}"}]}
teardown:
  - {name: logout, url: /logout}
`)
	cmds := startWorkers(t, bin, planPath, "run-k", dsn, out, 3, nil)
	// Once the load runs, kill worker 1.
	deadline := time.Now().Add(30 * time.Second)
	for srv.count("/k/get") < 100 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// The run as it goes: its workers, its stage, its requests once an
	// interval is stored.
	live := regexp.MustCompile(`running: 3/3 workers at stage 1, [1-9][0-9]* requests`)
	for {
		code, listed, errs := runCLI(t, "runs", "--store", dsn)
		if code == exitOK && live.MatchString(listed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs while it goes: %d\n%s%s", code, listed, errs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// ... and the whole so far, from the workers' intervals.
	if code, shown, errs := runCLI(t, "show", "--store", dsn, "run-k"); code != exitOK || !strings.Contains(shown, "run run-k of plan dist-kill: running") || strings.Contains(shown, "summary = 0 in") {
		t.Errorf("show while it goes: %d\n%s%s", code, shown, errs)
	}
	time.Sleep(time.Second)
	cmds[1].Process.Signal(syscall.SIGKILL)
	codes, errs := wait(cmds)
	if codes[1] != -1 || (codes[0] != exitRunFailed && codes[2] != exitRunFailed) {
		t.Fatalf("exit codes %v, want the merging worker to fail the degraded run (%d)\n%s", codes, exitRunFailed, errs)
	}
	s := summaryAt(t, filepath.Join(out, "run-k"))
	if s.Status != metrics.StatusDegraded || !strings.Contains(s.Error, "worker 1 (") || !strings.Contains(s.Error, "stopped at") {
		t.Fatalf("status %s: %s", s.Status, s.Error)
	}
	if len(s.Workers) != 3 || s.Workers[1].Status != metrics.StatusKilled || s.Workers[0].Status != metrics.StatusCompleted {
		t.Errorf("workers %+v", s.Workers)
	}
	if n := srv.count("/logout"); n != 1 {
		t.Errorf("teardown ran %d times, want once", n)
	}
	// The run holds the two other workers' requests, exactly.
	var parts int64
	for _, i := range []int{0, 2} {
		part, err := results.ReadDir(filepath.Join(out, store.PartID("run-k", i)))
		if err != nil {
			t.Fatal(err)
		}
		_, n := opHist(part.Totals.Stages[0], "get")
		parts += n
	}
	if got := count(s, 0, "get"); got != parts || got == 0 || got >= int64(srv.count("/k/get")) {
		t.Errorf("the run counted %d; its two whole parts %d; the server %d (with the killed worker's)", got, parts, srv.count("/k/get"))
	}
	code, listed, _ := runCLI(t, "runs", "--store", dsn)
	if code != exitOK || !strings.Contains(listed, "degraded") {
		t.Errorf("runs:\n%s", listed)
	}
}

// A worker that never starts: the others fail at the start barrier,
// naming it, before they send anything.
func TestDistributedMissingWorker(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "dist_missing_test")
	srv := newDistServer(t)
	out := t.TempDir()
	cmds := startWorkers(t, bin, distPlan(t, srv.URL, "m"), "run-m", dsn, out, 3, []int{0, 1}, "--join-timeout", "2s")
	codes, errs := wait(cmds)
	if codes[0] != exitRunFailed || codes[1] != exitRunFailed {
		t.Fatalf("exit codes %v, want %d\n%s", codes, exitRunFailed, errs)
	}
	if !strings.Contains(errs, "worker 2 of 3 did not join run run-m within 2s") {
		t.Errorf("no message naming the missing worker:\n%s", errs)
	}
	if n := srv.count("/login") + srv.count("/m/get") + srv.count("/m/post"); n != 0 {
		t.Errorf("%d requests sent by a run that did not start", n)
	}
	code, listed, _ := runCLI(t, "runs", "--store", dsn)
	if code != exitOK || !strings.Contains(listed, "run-m") || !strings.Contains(listed, "failed") {
		t.Errorf("runs:\n%s", listed)
	}
	// The missing worker, late, cannot join a run that has ended.
	late := startWorkers(t, bin, distPlan(t, srv.URL, "m"), "run-m", dsn, out, 3, []int{2})
	if codes, errs := wait(late); codes[0] == exitOK || !strings.Contains(errs, "has ended") {
		t.Errorf("a late worker: %v\n%s", codes, errs)
	}
}

// perflab run --workers N runs N worker processes on this machine, in a
// SQLite history, as one run.
func TestLocalWorkers(t *testing.T) {
	bin := perflabBin(t)
	srv := newDistServer(t)
	out := t.TempDir()
	c := exec.Command(bin, "run", distPlan(t, srv.URL, "l"), "--workers", "3", "--out", out, "--quiet", "--label", "release=L")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "on 3 workers: completed") || !strings.Contains(stdout.String(), "get: errors < 1%") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-dist-l"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := summaryAt(t, dirs[0])
	if s.Status != metrics.StatusCompleted || len(s.Workers) != 3 || s.Labels["release"] != "L" {
		t.Errorf("run %s, %d workers, labels %v", s.Status, len(s.Workers), s.Labels)
	}
	if got := count(s, 0, "get"); got != 1000 || got != int64(srv.count("/l/get")) {
		t.Errorf("get: the run counted %d, the server %d, the plan has 1000", got, srv.count("/l/get"))
	}
	if got := count(s, 0, "post"); got != int64(srv.count("/l/post")) {
		t.Errorf("post: the run counted %d, the server %d", got, srv.count("/l/post"))
	}
	if n := srv.count("/login"); n != 1 {
		t.Errorf("setup ran %d times", n)
	}
}

// summaryAt reads a run directory's summary.json.
func summaryAt(t *testing.T, dir string) *results.Summary {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s results.Summary
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Bad input is refused before anything is sent.
func TestDistributedBadInput(t *testing.T) {
	srv := newDistServer(t)
	planPath := distPlan(t, srv.URL, "x")
	few := writePlan(t, "name: few\ntarget: "+srv.URL+"\nscenarios: [{vus: 2, total_iterations: 10, flow: [{name: a, url: /a}]}]\n")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", planPath, "--segment", "3/3", "--run-id", "x", "--store", "postgres://u@127.0.0.1:1/db"}, exitUsage, "must be 0 to 2 for 3 workers"},
		{[]string{"run", planPath, "--segment", "0/0", "--run-id", "x"}, exitUsage, "at least 1"},
		{[]string{"run", planPath, "--workers", "-2"}, exitUsage, "must be at least 1"},
		{[]string{"run", planPath, "--segment", "0/2"}, exitUsage, "needs --run-id"},
		{[]string{"run", planPath, "--segment", "0/2", "--run-id", "x", "--store", "runs.db"}, exitUsage, "--store postgres://"},
		{[]string{"run", planPath, "--workers", "2", "--store", "off"}, exitUsage, "--store off has none"},
		{[]string{"run", planPath, "--workers", "2", "--segment", "0/2"}, exitUsage, "one of --workers and --segment"},
		{[]string{"run", few, "--workers", "3", "--out", t.TempDir()}, exitInvalidPlan, "2 VUs share 10 iterations: each of 3 workers needs a VU"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", tc.args, code, tc.code, tc.msg, errs)
		}
	}
	if n := srv.count("/login") + srv.count("/a"); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// Ctrl-C on perflab run --workers stops every worker once: each writes
// what it measured, teardown runs once, and the run is merged as an
// interrupted run (exit 130).
func TestLocalWorkersInterrupted(t *testing.T) {
	bin := perflabBin(t)
	srv := newDistServer(t)
	out := t.TempDir()
	planPath := writePlan(t, `name: dist-int
target: `+srv.URL+`
interval: 250ms
scenarios:
  - {name: closed, vus: 3, duration: 60s, flow: [{name: get, url: "/i/get"}]}
teardown:
  - {name: logout, url: /logout}
`)
	c := exec.Command(bin, "run", planPath, "--workers", "3", "--out", out, "--quiet")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for srv.count("/i/get") < 100 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	c.Process.Signal(os.Interrupt)
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	if strings.Contains(stderr.String(), "perflab: quit") {
		t.Errorf("a worker quit at once, as on a second interrupt:\n%s", stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-dist-int"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := summaryAt(t, dirs[0])
	if s.Status != metrics.StatusInterrupted || count(s, 0, "get") != int64(srv.count("/i/get")) {
		t.Errorf("run %s, get %d, the server %d", s.Status, count(s, 0, "get"), srv.count("/i/get"))
	}
	if n := srv.count("/logout"); n != 1 {
		t.Errorf("teardown ran %d times", n)
	}
}

// A threshold marked abort is judged on the whole run as it goes: when it
// fails, every worker stops, and the run ends failed (exit 4), long before
// its duration, its teardown run once. One worker's share failing it
// alone stops nothing (TestDistributedAbortJudgesTheWhole).
func TestDistributedAbortStopsEveryWorker(t *testing.T) {
	bin := perflabBin(t)
	var logouts, fails atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		switch {
		case r.URL.Path == "/logout":
			logouts.Add(1)
		case r.URL.Query().Get("vu") == "1": // worker 0's only VU
			fails.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	planPath := writePlan(t, `name: dist-abort
target: `+srv.URL+`
interval: 250ms
scenarios:
  - {name: closed, vus: 3, duration: 120s, flow: [{name: get, url: "/get?vu=${vu}"}]}
teardown:
  - {name: logout, url: /logout}
thresholds: ["get: errors < 10% abort"]
`)
	start := time.Now()
	c := exec.Command(bin, "run", planPath, "--workers", "3", "--out", out, "--quiet")
	var stderr strings.Builder
	c.Stderr = &stderr
	c.Run()
	if code := c.ProcessState.ExitCode(); code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s", code, exitThresholds, stderr.String())
	}
	if took := time.Since(start); took > 90*time.Second {
		t.Errorf("the run took %v: the workers were not stopped", took)
	}
	if !strings.Contains(stderr.String(), `[worker 1] perflab: the run is stopped: aborted: threshold "get: errors < 10% abort" failed on get in all, judged on the whole run so far`) {
		t.Errorf("worker 1 was not stopped on the whole run's figures:\n%s", stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-dist-abort"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := summaryAt(t, dirs[0])
	if s.Status != metrics.StatusFailed || !strings.Contains(s.Error, "aborted") || logouts.Load() != 1 {
		t.Errorf("run %s (%s), teardown %d times", s.Status, s.Error, logouts.Load())
	}
	if got := count(s, 0, "get"); got == 0 {
		t.Error("no request counted")
	}
}

// One worker's share fails an abort threshold (all its requests fail)
// that the whole run holds (a third of the requests fail): the run goes
// on to its end, and passes.
func TestDistributedAbortJudgesTheWhole(t *testing.T) {
	bin := perflabBin(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		if r.URL.Query().Get("vu") == "1" { // worker 0's only VU
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	planPath := writePlan(t, `name: dist-whole
target: `+srv.URL+`
interval: 250ms
scenarios:
  - {name: closed, vus: 3, duration: 3s, flow: [{name: get, url: "/get?vu=${vu}"}]}
thresholds: ["get: errors < 60% abort"]
`)
	c := exec.Command(bin, "run", planPath, "--workers", "3", "--out", out, "--quiet")
	var stderr strings.Builder
	c.Stderr = &stderr
	c.Run()
	if code := c.ProcessState.ExitCode(); code != exitOK || strings.Contains(stderr.String(), "aborted") {
		t.Fatalf("exit %d, want %d: the whole run holds the threshold\n%s", code, exitOK, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-dist-whole"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := summaryAt(t, dirs[0])
	var ratio float64
	for _, op := range s.Stages[0].Operations {
		if op.Name == "get" {
			ratio = float64(op.Errors.Total) / float64(op.Count)
		}
	}
	if s.Status != metrics.StatusCompleted || len(s.Thresholds) != 1 || !s.Thresholds[0].Pass || ratio < 0.2 || ratio > 0.5 {
		t.Errorf("run %s, error ratio %.2f, thresholds %+v", s.Status, ratio, s.Thresholds)
	}
}
