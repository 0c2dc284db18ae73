package monitor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cgroupMonitor reads a cgroup v2 directory: cpu.stat (always there),
// memory.current and memory.stat (with the memory controller), pids.current
// (with the pids controller). Files of a controller that is not enabled are
// left out, and named in the sample's error.
type cgroupMonitor struct {
	spec Spec
	dir  string
	buf  []byte
}

func openCgroup(s Spec) (*cgroupMonitor, error) {
	dir := s.Path
	if !filepath.IsAbs(dir) {
		root, err := cgroup2Mount()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(root, dir)
	}
	return &cgroupMonitor{spec: s, dir: dir}, nil
}

// cgroup2Mount finds where the cgroup v2 hierarchy is mounted (usually
// /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid system).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPEROPTIONS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if f := strings.Fields(pre); ok && len(f) >= 5 && strings.HasPrefix(post, "cgroup2 ") {
			return f[4], nil
		}
	}
	return "", errors.New("no cgroup v2 hierarchy is mounted")
}

func (m *cgroupMonitor) Spec() Spec { return m.spec }

func (m *cgroupMonitor) Sample(_ context.Context, now time.Time) ([]Point, error) {
	p := points{now: now, monitor: m.spec.Name}
	cpu, err := m.keyed("cpu.stat")
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", m.dir, err)
	}
	for _, c := range []struct{ metric, key string }{
		{MetricCgroupCPU, "usage_usec"},
		{MetricCPUUser, "user_usec"},
		{MetricCPUSystem, "system_usec"},
		{MetricCgroupThrottled, "throttled_usec"},
	} {
		if v, ok := cpu[c.key]; ok {
			p.add(c.metric, float64(v)/1e6)
		}
	}
	var missing []string
	for _, c := range []struct{ metric, file string }{
		{MetricCgroupMemory, "memory.current"},
		{MetricCgroupPids, "pids.current"},
	} {
		v, err := m.single(c.file)
		if err != nil {
			missing = append(missing, c.file)
			continue
		}
		p.add(c.metric, float64(v))
	}
	if mem, err := m.keyed("memory.stat"); err == nil {
		p.add(MetricCgroupAnon, float64(mem["anon"]))
		p.add(MetricCgroupFile, float64(mem["file"]))
	} else {
		missing = append(missing, "memory.stat")
	}
	if len(missing) > 0 {
		err = fmt.Errorf("cgroup %s has no %s (controller not enabled for it); the rest is sampled",
			m.dir, strings.Join(missing, ", "))
	}
	return p.list, err
}

// keyed reads a flat keyed file such as cpu.stat: "key value" lines.
func (m *cgroupMonitor) keyed(name string) (map[string]int64, error) {
	b, err := readFile(filepath.Join(m.dir, name), &m.buf)
	if err != nil {
		return nil, err
	}
	return parseKeyed(b), nil
}

func parseKeyed(b []byte) map[string]int64 {
	out := map[string]int64{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{' '})
		if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); ok && err == nil {
			out[string(k)] = n
		}
	}
	return out
}

// single reads a file holding one number.
func (m *cgroupMonitor) single(name string) (int64, error) {
	b, err := readFile(filepath.Join(m.dir, name), &m.buf)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
}

func (m *cgroupMonitor) Close(context.Context) (*Final, error) { return nil, nil }
