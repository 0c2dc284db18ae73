package monitor

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"
)

// hostMonitor watches the machine perflab runs on: CPU busy and steal
// fractions from the deltas of /proc/stat between samples, the run queue,
// memory from /proc/meminfo, the load average, and the round trip of a
// loopback connection it times itself (probe).
type hostMonitor struct {
	spec    Spec
	prev    []cpuTimes // all cores first, then each core; from the previous sample
	running float64    // procs_running of the last /proc/stat read
	buf     []byte
	probe   *probe
	last    time.Time // the previous sample's time
}

// cpuTimes is one "cpu" line of /proc/stat, in ticks.
type cpuTimes struct{ busy, steal, total uint64 }

func openHost(s Spec) (*hostMonitor, error) {
	m := &hostMonitor{spec: s}
	prev, err := m.readCPU()
	if err != nil {
		return nil, err
	}
	m.prev = prev
	m.probe = startProbe(probeEvery) // nil where no loopback listener can open
	return m, nil
}

func (m *hostMonitor) Spec() Spec { return m.spec }

// pace sets the probe's pace for samples every: the sampler says it as it
// starts, before the first two samples can.
func (m *hostMonitor) pace(every time.Duration) { m.probe.paceTo(every) }

func (m *hostMonitor) Sample(_ context.Context, now time.Time) ([]Point, error) {
	cur, err := m.readCPU()
	if err != nil {
		return nil, err
	}
	p := points{now: now, monitor: m.spec.Name}
	if len(cur) == len(m.prev) {
		p.add(MetricBusy, busy(m.prev[0], cur[0]))
		maxCore := 0.0
		for i := 1; i < len(cur); i++ {
			maxCore = max(maxCore, busy(m.prev[i], cur[i]))
		}
		p.add(MetricBusyMaxCore, maxCore)
		p.add(MetricSteal, stealShare(m.prev[0], cur[0]))
		p.add(MetricCPUs, float64(len(cur)-1))
	}
	m.prev = cur
	p.add(MetricRunQueue, m.running)
	if rtt, ok := m.probe.p90(); ok {
		p.add(MetricLoopbackRTT, rtt.Seconds())
	}
	// The probe times as many round trips before the next sample,
	// whatever the sampling (probesPerSample).
	if !m.last.IsZero() {
		m.probe.paceTo(now.Sub(m.last))
	}
	m.last = now

	mem, err := readFile("/proc/meminfo", &m.buf)
	if err != nil {
		return p.list, err
	}
	total, avail := meminfo(mem, "MemTotal:"), meminfo(mem, "MemAvailable:")
	p.add(MetricMemUsed, float64(total-avail))
	p.add(MetricMemTotal, float64(total))

	load, err := readFile("/proc/loadavg", &m.buf)
	if err != nil {
		return p.list, err
	}
	if f := bytes.Fields(load); len(f) > 0 {
		v, _ := strconv.ParseFloat(string(f[0]), 64)
		p.add(MetricLoad1, v)
	}
	return p.list, nil
}

// busy is the busy fraction of a CPU between two readings.
func busy(a, b cpuTimes) float64 {
	if b.total <= a.total || b.busy < a.busy {
		return 0
	}
	return min(1, float64(b.busy-a.busy)/float64(b.total-a.total))
}

// stealShare is the fraction of a CPU's time stolen by the hypervisor
// between two readings.
func stealShare(a, b cpuTimes) float64 {
	if b.total <= a.total || b.steal < a.steal {
		return 0
	}
	return min(1, float64(b.steal-a.steal)/float64(b.total-a.total))
}

// readCPU reads the cpu lines of /proc/stat: user nice system idle iowait
// irq softirq steal (guest time is already in user). Idle and iowait are
// not busy. It keeps procs_running, the run queue, in m.running.
func (m *hostMonitor) readCPU() ([]cpuTimes, error) {
	b, err := readFile("/proc/stat", &m.buf)
	if err != nil {
		return nil, err
	}
	var out []cpuTimes
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte("procs_running ")); ok {
			m.running, _ = strconv.ParseFloat(string(bytes.TrimSpace(rest)), 64)
			continue
		}
		if !bytes.HasPrefix(line, []byte("cpu")) {
			continue
		}
		f := bytes.Fields(line)
		if len(f) < 9 {
			return nil, fmt.Errorf("unexpected /proc/stat line %q", line)
		}
		var t cpuTimes
		for i := 1; i <= 8; i++ {
			v, _ := strconv.ParseUint(string(f[i]), 10, 64)
			t.total += v
			if i != 4 && i != 5 {
				t.busy += v
			}
			if i == 8 {
				t.steal = v
			}
		}
		out = append(out, t)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("no cpu lines in /proc/stat")
	}
	return out, nil
}

// meminfo returns a /proc/meminfo field in bytes.
func meminfo(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len(key):])
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return kb * 1024
}

func (m *hostMonitor) Close(context.Context) (*Final, error) {
	m.probe.stop()
	return nil, nil
}
