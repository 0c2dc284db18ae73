package monitor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

func TestCgroupFiles(t *testing.T) {
	dir, _ := filepath.Abs("testdata/cgroup/full")
	pts := sampleNow(t, mustOpen(t, Spec{Kind: KindCgroup, Path: dir}))
	for metric, want := range map[string]float64{
		MetricCgroupCPU:       12.5,
		MetricCPUUser:         9,
		MetricCPUSystem:       3.5,
		MetricCgroupThrottled: 0.25,
		MetricCgroupMemory:    512 << 20,
		MetricCgroupAnon:      384 << 20,
		MetricCgroupFile:      115 << 20,
		MetricCgroupPids:      42,
	} {
		if got := mustValue(t, pts, metric); got != want {
			t.Errorf("%s = %v, want %v", metric, got, want)
		}
	}

	// Without the memory and pids controllers: CPU, and an error that
	// names what is missing.
	dir, _ = filepath.Abs("testdata/cgroup/cpu-only")
	pts, err := mustOpen(t, Spec{Kind: KindCgroup, Path: dir}).Sample(context.Background(), time.Now())
	if err == nil || !strings.Contains(err.Error(), "memory.current, pids.current, memory.stat") {
		t.Errorf("err = %v, want the missing files named", err)
	}
	if got := mustValue(t, pts, MetricCgroupCPU); got != 0.507716 {
		t.Errorf("cpu_usage_s = %v", got)
	}
	if _, ok := value(pts, MetricCgroupMemory); ok {
		t.Errorf("memory reported without memory.current")
	}

	if _, err := mustOpen(t, Spec{Kind: KindCgroup, Path: "/nonexistent/cgroup"}).Sample(context.Background(), time.Now()); err == nil {
		t.Error("no error for a missing cgroup")
	}
}

// TestCgroupBusyChild moves a busy process into a new child cgroup and
// checks its CPU usage rises. It needs a writable cgroup v2 hierarchy (root,
// or a delegated subtree); otherwise TestCgroupFiles alone covers the
// collector.
func TestCgroupBusyChild(t *testing.T) {
	root, err := cgroup2Mount()
	if err != nil {
		testenv.Missing(t, err.Error())
	}
	name := fmt.Sprintf("perflab-monitor-test-%d", os.Getpid())
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		testenv.Missing(t, fmt.Sprintf("cgroup v2 at %s is not writable (%v): only the files in testdata are tested", root, err))
	}
	busy := busyLoop(t)
	t.Cleanup(func() {
		busy.Process.Kill()
		busy.Wait()
		// The cgroup can be removed once the kernel has seen it empty.
		for i := 0; i < 100 && os.Remove(dir) != nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(busy.Process.Pid)), 0); err != nil {
		testenv.Missing(t, fmt.Sprintf("cannot move a process into %s (%v): only the files in testdata are tested", dir, err))
	}

	m := mustOpen(t, Spec{Kind: KindCgroup, Path: name}) // relative to the mount
	before, _ := m.Sample(context.Background(), time.Now())
	// 0.2 s of CPU takes 0.2 s on an idle core, longer on a loaded machine.
	var after []Point
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		after, _ = m.Sample(context.Background(), time.Now())
		if mustValue(t, after, MetricCgroupCPU)-mustValue(t, before, MetricCgroupCPU) >= 0.2 {
			break
		}
	}
	if used := mustValue(t, after, MetricCgroupCPU) - mustValue(t, before, MetricCgroupCPU); used < 0.2 {
		t.Errorf("a busy loop in the cgroup for 5 s: cpu_usage_s rose by %.3f s", used)
	}
	if user := mustValue(t, after, MetricCPUUser); user <= 0 {
		t.Errorf("cpu_user_s = %v", user)
	}
}
