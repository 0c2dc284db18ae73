package monitor

import (
	"context"
	"fmt"
	"math"
	"os"
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
