package monitor

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTolerance is how far the monitor's CPU seconds may be from /proc's:
// both read the same tick counters of a stopped process, so any difference
// beyond rounding is a bug.
const cpuTolerance = 0.02

func TestProcessCPUMatchesProcStat(t *testing.T) {
	busy := busyLoop(t)
	pid := busy.Process.Pid
	m := mustOpen(t, Spec{Name: "busy", Kind: KindProcess, PID: pid})
	// Half a second of CPU: as long on an idle core, longer on a loaded machine.
	for deadline := time.Now().Add(5 * time.Second); statCPU(t, pid) < 0.5 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	// Stop it, so that the monitor and the test read the same figures.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	time.Sleep(20 * time.Millisecond)

	pts := sampleNow(t, m)
	got := mustValue(t, pts, MetricCPUUser) + mustValue(t, pts, MetricCPUSystem)
	want := statCPU(t, pid)
	if math.Abs(got-want) > cpuTolerance {
		t.Errorf("cpu = %.3f s, /proc/%d/stat says %.3f s", got, pid, want)
	}
	if got < 0.5 {
		t.Errorf("a busy loop used %.3f s of CPU in 5 s", got)
	}
	if rss := mustValue(t, pts, MetricRSS); rss < 4096 {
		t.Errorf("rss = %v bytes", rss)
	}
	if n := mustValue(t, pts, MetricThreads); n != 1 {
		t.Errorf("threads = %v, want 1", n)
	}
	if n := mustValue(t, pts, MetricOpenFiles); n < 3 { // stdin, stdout, stderr
		t.Errorf("open_files = %v, want >= 3", n)
	}
	for _, p := range pts {
		if p.Monitor != "busy" {
			t.Errorf("point %+v: monitor is not the spec's name", p)
		}
	}

	busy.Process.Kill()
	busy.Wait()
	if _, err := m.Sample(context.Background(), time.Now()); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("sample of an exited process: err = %v", err)
	}
}

func TestProcessPatternSumsMatches(t *testing.T) {
	mark := fmt.Sprintf("perflab-monitor-test-%d", os.Getpid())
	a, b := busyLoop(t, mark), busyLoop(t, mark)
	m := mustOpen(t, Spec{Kind: KindProcess, Pattern: mark + "$"})
	time.Sleep(300 * time.Millisecond)
	for _, c := range []int{a.Process.Pid, b.Process.Pid} {
		syscall.Kill(c, syscall.SIGSTOP)
	}
	time.Sleep(20 * time.Millisecond)
	pts := sampleNow(t, m)
	if n := mustValue(t, pts, MetricProcesses); n != 2 {
		t.Fatalf("processes = %v, want 2", n)
	}
	got := mustValue(t, pts, MetricCPUUser) + mustValue(t, pts, MetricCPUSystem)
	want := statCPU(t, a.Process.Pid) + statCPU(t, b.Process.Pid)
	if math.Abs(got-want) > cpuTolerance {
		t.Errorf("cpu = %.3f s, /proc says %.3f s", got, want)
	}

	// A process that exits keeps its CPU time in the total.
	a.Process.Kill()
	a.Wait()
	pts = sampleNow(t, m)
	if n := mustValue(t, pts, MetricProcesses); n != 1 {
		t.Errorf("processes = %v after one exited, want 1", n)
	}
	after := mustValue(t, pts, MetricCPUUser) + mustValue(t, pts, MetricCPUSystem)
	if math.Abs(after-got) > cpuTolerance {
		t.Errorf("cpu = %.3f s after a process exited, was %.3f s", after, got)
	}

	b.Process.Kill()
	b.Wait()
	if _, err := m.Sample(context.Background(), time.Now()); err == nil || !strings.Contains(err.Error(), "no process matches") {
		t.Errorf("sample with no match: err = %v", err)
	}
}

func TestProcessCommandGroup(t *testing.T) {
	m, err := Open(context.Background(), Spec{Kind: KindProcess, Command: []string{"sh", "-c", "sleep 30 & sleep 30 & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	var pts []Point
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pts = sampleNow(t, m)
		if n, _ := value(pts, MetricProcesses); n == 3 {
			break
		}
	}
	if n := mustValue(t, pts, MetricProcesses); n != 3 {
		t.Fatalf("processes = %v, want 3 (the shell and its two sleeps)", n)
	}
	pm := m.(*processMonitor)
	group, _ := pm.procs.group(pm.cmd.pid())
	if _, err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := 0
		for pid := range group {
			if !gone(pid) {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes of the command are still running after Close", left)
		}
	}
}

func TestProcessCommandExit(t *testing.T) {
	m := mustOpen(t, Spec{Kind: KindProcess, Command: []string{"sh", "-c", "echo cannot start >&2; exit 3"}})
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err = m.Sample(context.Background(), time.Now()); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "cannot start") {
		t.Errorf("err = %v, want the exit status and the output", err)
	}
}

func TestSpecValidate(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x"}, "needs kind"},
		{Spec{Kind: "disk"}, `unknown kind "disk"`},
		{Spec{Kind: KindProcess}, "exactly one of pid, pattern and command"},
		{Spec{Kind: KindProcess, PID: 1, Pattern: "x"}, "exactly one"},
		{Spec{Kind: KindJVM, Pattern: "("}, "pattern"},
		{Spec{Kind: KindCgroup}, "needs path"},
		{Spec{Kind: KindPrometheus, URL: "127.0.0.1:9090", Series: []string{"up"}}, "not an http(s) URL"},
		{Spec{Kind: KindPrometheus, URL: "http://127.0.0.1:9090/metrics"}, "needs series"},
		{Spec{Kind: KindPrometheus, URL: "http://127.0.0.1:9090/metrics", Series: []string{`up{job=x}`}}, "not quoted"},
		{Spec{Kind: KindPostgres}, "needs dsn"},
	} {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.spec, err, c.want)
		}
	}
	if err := (Spec{Kind: KindHost}).Validate(); err != nil {
		t.Error(err)
	}
}

// Processes that share memory (the same shell binary and libc; as the
// backends of a database server share its buffers) are summed by their
// PSS, which counts the shared pages once: less than their summed RSS, and
// the sum of what each one's smaps_rollup says. When one's smaps_rollup
// cannot be read, the sample has only rss_bytes.
func TestProcessPatternSumsPSS(t *testing.T) {
	mark := fmt.Sprintf("perflab-pss-test-%d", os.Getpid())
	var pids []int
	for range 4 {
		// A shell blocked reading a pipe that is never written: its memory
		// does not change while the test reads it twice.
		cmd := exec.Command("sh", "-c", "read x", mark)
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		pids = append(pids, cmd.Process.Pid)
	}
	m := mustOpen(t, Spec{Name: "shells", Kind: KindProcess, Pattern: mark + "$"})
	var pts []Point
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// Started shells have mapped their libraries once they block.
		if pts = sampleNow(t, m); mustValue(t, pts, MetricProcesses) == 4 && allBlocked(pids) {
			break
		}
	}
	pts = sampleNow(t, m)
	if n := mustValue(t, pts, MetricProcesses); n != 4 {
		t.Fatalf("processes = %v, want 4", n)
	}
	rss, pss := mustValue(t, pts, MetricRSS), mustValue(t, pts, MetricPSS)
	var each float64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			t.Skipf("smaps_rollup: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				each += kb * 1024
			}
		}
	}
	t.Logf("4 shells: summed RSS %.0f KB, summed PSS %.0f KB; smaps_rollup's Pss lines add up to %.0f KB", rss/1024, pss/1024, each/1024)
	if pss >= rss {
		t.Errorf("summed PSS %.0f KB is not below summed RSS %.0f KB: the shells share their binary and libc", pss/1024, rss/1024)
	}
	// PSS of one process moves when another maps or unmaps a page it
	// shares: blocked shells do neither, but allow a page each.
	if math.Abs(pss-each) > 4*4096 {
		t.Errorf("summed PSS %.0f KB, smaps_rollup says %.0f KB", pss/1024, each/1024)
	}

	// smaps_rollup unreadable (another user's processes without root):
	// RSS alone.
	pssOf = func(int, *[]byte) (int64, error) { return 0, os.ErrPermission }
	defer func() { pssOf = readPSS }()
	pts = sampleNow(t, m)
	if _, ok := value(pts, MetricPSS); ok {
		t.Error("pss_bytes sampled though smaps_rollup could not be read")
	}
	mustValue(t, pts, MetricRSS)

	// One PID is read as before: RSS alone.
	pssOf = readPSS
	one := mustOpen(t, Spec{Name: "one", Kind: KindProcess, PID: pids[0]})
	if _, ok := value(sampleNow(t, one), MetricPSS); ok {
		t.Error("pss_bytes sampled for one PID")
	}
}

// allBlocked tells whether every process is sleeping (S), as a shell
// waiting on read is.
func allBlocked(pids []int) bool {
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) == 0 || f[0] != "S" {
			return false
		}
	}
	return true
}
