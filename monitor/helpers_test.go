package monitor

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// busyLoop starts a shell that spins on a CPU until the test ends. Extra
// arguments become the shell's $0 and $@, to mark its command line.
func busyLoop(t testing.TB, marks ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", "while :; do :; done"}, marks...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// statCPU reads a process's user+system CPU seconds from /proc/PID/stat,
// independently of the package's reader.
func statCPU(t testing.TB, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.Atoi(f[14-3])
	stime, _ := strconv.Atoi(f[15-3])
	return float64(utime+stime) / 100
}

// value returns the value of a metric among points; ok is false if absent.
func value(pts []Point, metric string) (float64, bool) {
	for _, p := range pts {
		if p.Metric == metric {
			return p.Value, true
		}
	}
	return 0, false
}

// mustValue is value, failing the test when the metric is absent.
func mustValue(t testing.TB, pts []Point, metric string) float64 {
	t.Helper()
	v, ok := value(pts, metric)
	if !ok {
		t.Fatalf("no %s in %v", metric, pts)
	}
	return v
}

// mustOpen opens a monitor and closes it when the test ends.
func mustOpen(t testing.TB, s Spec) Monitor {
	t.Helper()
	m, err := Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// sampleNow samples a monitor, failing the test on an error.
func sampleNow(t testing.TB, m Monitor) []Point {
	t.Helper()
	pts, err := m.Sample(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return pts
}

// gone tells whether a process has exited (a zombie counts as exited).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	st, err := readProcStat(pid, new([]byte))
	return err != nil || st.state == 'Z'
}
