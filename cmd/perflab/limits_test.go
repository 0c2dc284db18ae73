package main

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// limitedRun is a run of the perflab binary under an open-file limit.
type limitedRun struct {
	stderr string
	// warnedFirst: the run's warning was on its stderr when the server
	// saw its first request.
	warnedFirst bool
	// soft and hard are the open-file limits of the run's process, read
	// from /proc/PID/limits as the server saw its first request.
	soft, hard int
	sum        *results.Summary
}

// runLimited runs a plan of vus VUs (2 iterations each, on the event loop
// or not) against a server on 127.0.0.1 in the test's process, by the
// perflab binary in a process whose open-file limit the shell's ulimit
// set (as a user's shell or a service manager sets it) before perflab
// started. With hold, the server holds the run's first request until the
// run has warned of its stage on stderr (30 s at most).
func runLimited(t *testing.T, ulimit string, vus int, loop, hold bool) limitedRun {
	t.Helper()
	bin := perflabBin(t)
	var (
		res     limitedRun
		mu      sync.Mutex
		errs    strings.Builder
		warned  = make(chan struct{})
		started = make(chan int, 1)
		first   sync.Once
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.Do(func() {
			soft, hard := maxOpenFiles(t, <-started)
			warnedFirst := false
			if hold {
				select {
				case <-warned:
					warnedFirst = true
				case <-time.After(30 * time.Second):
				}
			}
			mu.Lock()
			res.soft, res.hard, res.warnedFirst = soft, hard, warnedFirst
			mu.Unlock()
		})
	}))
	defer srv.Close()
	plan := writePlan(t, fmt.Sprintf(`name: limits
target: %s
http: {event_loop: %v}
scenarios:
  - {name: browse, vus: %d, iterations: 2, flow: [{name: get, url: /}]}
`, srv.URL, loop, vus))
	out := t.TempDir()
	cmd := exec.Command("sh", "-c", "ulimit "+ulimit+` && exec "$0" "$@"`, bin, "run", plan, "--out", out, "--store", "off", "--progress", "none")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started <- cmd.Process.Pid // the shell execs perflab: one process
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		errs.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "warning: stage 1 (all):") && !isClosed(warned) {
			close(warned)
		}
	}
	err = cmd.Wait()
	mu.Lock() // the server's handler wrote its part under mu
	defer mu.Unlock()
	res.stderr = errs.String()
	if err != nil {
		t.Fatalf("perflab run: %v\n%s", err, res.stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-limits"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v\n%s", dirs, res.stderr)
	}
	rd, err := results.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	res.sum = rd.Summary
	return res
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// maxOpenFiles reads a process's open-file limits from /proc/PID/limits.
func maxOpenFiles(t *testing.T, pid int) (soft, hard int) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Error(err)
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			fmt.Sscan(rest, &soft, &hard)
		}
	}
	return soft, hard
}

// More VUs than perflab may open descriptors: the run warns of it, with
// the figures, on stderr before its load (the server holds the first
// request until the warning is there) and in its summary (the stage's
// host limits, its generator check, the warnings); the connections that
// could not be opened are generator_limit, none connect, on either
// engine.
func TestOpenFileLimitWarnsAndFailsAsGeneratorLimit(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		testenv.Missing(t, "no sh to set the open-file limit with ulimit")
	}
	const vus = 200
	for _, loop := range []bool{true, false} {
		t.Run(map[bool]string{true: "event loop", false: "goroutines"}[loop], func(t *testing.T) {
			r := runLimited(t, "-n 64", vus, loop, true)
			if !r.warnedFirst {
				t.Errorf("the server saw the first request before the run warned of its limit:\n%s", r.stderr)
			}
			if r.soft != 64 || r.hard != 64 {
				t.Errorf("the run's open-file limits %d/%d, want the ulimit's 64/64", r.soft, r.hard)
			}
			for _, want := range []string{fmt.Sprintf("%d sockets", vus), "open-file limit 64, hard limit 64", "generator_limit", "ulimit -Hn", "--workers"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
				}
			}
			st := r.sum.Stages[0]
			op := st.Operations[0]
			limited := op.Errors.ByKind[metrics.GeneratorLimit.String()]
			if op.Name != "get" || op.Count != 2*vus || limited == 0 || op.Errors.Total != limited || limited == op.Count {
				t.Errorf("get: %d requests, errors %+v; want %d, some and only generator_limit (none connect)", op.Count, op.Errors, 2*vus)
			}
			if len(st.Limits) != 1 || st.Limits[0].Kind != metrics.LimitOpenFiles || st.Limits[0].Need != vus || st.Limits[0].Limit >= 64 {
				t.Errorf("the stage's host limits %+v, want open_files: %d over fewer than 64", st.Limits, vus)
			}
			if g := st.Generator; g == nil || g.KeptUp || !slices.ContainsFunc(g.Problems, func(p results.GeneratorProblem) bool { return p.Kind == metrics.LimitOpenFiles }) {
				t.Errorf("generator check %+v: want an open_files problem", g)
			}
			if len(st.Limits) > 0 && !strings.Contains(strings.Join(r.sum.Warnings, "\n"), st.Limits[0].Sentence) {
				t.Errorf("the summary's warnings %q do not say it", r.sum.Warnings)
			}
		})
	}
}

// A soft open-file limit below the hard one does not hold perflab back:
// Go raises its soft limit to the hard one, less one, as perflab starts
// (package syscall's init), so more VUs than the soft limit run without
// a warning or a generator_limit.
func TestSoftOpenFileLimitIsRaised(t *testing.T) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	const vus = 200
	if lim.Max < 4*vus {
		testenv.Missing(t, fmt.Sprintf("the hard open-file limit %d leaves no room above a soft one of 64 for %d VUs", lim.Max, vus))
	}
	r := runLimited(t, "-Sn 64", vus, true, false)
	if r.hard != int(lim.Max) || r.soft < r.hard-1 {
		t.Errorf("the run's open-file limits %d/%d, want the soft one raised to the hard %d (less one)", r.soft, r.hard, lim.Max)
	}
	if strings.Contains(r.stderr, "warning: stage") {
		t.Errorf("a warning:\n%s", r.stderr)
	}
	if op := r.sum.Stages[0].Operations[0]; op.Count != 2*vus || op.Errors.Total != 0 {
		t.Errorf("get: %d requests, errors %+v; want %d, none", op.Count, op.Errors, 2*vus)
	}
}
