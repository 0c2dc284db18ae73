package monitor

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"
)

// jvmAttachTimeout bounds how long Open waits for a JVM it started to
// publish its counters.
const jvmAttachTimeout = 10 * time.Second

// HotSpot counters, as jstat reads them: collector 0 is young collections
// (jstat's YGC, YGCT), collector 1 full ones (FGC, FGCT); times are in ticks
// of sun.os.hrt.frequency per second.
const (
	hsFrequency     = "sun.os.hrt.frequency"
	hsYoungCount    = "sun.gc.collector.0.invocations"
	hsYoungTime     = "sun.gc.collector.0.time"
	hsFullCount     = "sun.gc.collector.1.invocations"
	hsFullTime      = "sun.gc.collector.1.time"
	hsNewCapacity   = "sun.gc.generation.0.capacity"
	hsOldCapacity   = "sun.gc.generation.1.capacity"
	hsNewMax        = "sun.gc.generation.0.maxCapacity"
	hsOldMax        = "sun.gc.generation.1.maxCapacity"
	hsNewSpaces     = "sun.gc.generation.0.space."
	hsOldSpaces     = "sun.gc.generation.1.space."
	hsSpaceUsedTail = ".used"
)

// jvmMonitor watches a local HotSpot JVM: its GC and heap counters from its
// hsperfdata file, its CPU, memory, threads and open files from /proc. A JVM
// found by pattern (the oldest matching process that publishes counters) or
// started as a command (the oldest process of its group that does) is found
// again if it restarts.
type jvmMonitor struct {
	spec    Spec
	pattern *regexp.Regexp
	cmd     *command
	pid     int
	perf    *hsperf // nil until attached
	procs   procSampler
}

func openJVM(ctx context.Context, s Spec) (*jvmMonitor, error) {
	m := &jvmMonitor{spec: s}
	if s.Pattern != "" {
		m.pattern = regexp.MustCompile(s.Pattern)
	}
	if len(s.Command) == 0 {
		return m, nil
	}
	c, err := startCommand(s.Command)
	if err != nil {
		return nil, err
	}
	m.cmd = c
	// Wait until the JVM has published its counters, so that the first
	// sample has them.
	deadline := time.Now().Add(jvmAttachTimeout)
	for {
		err := m.attach()
		if err == nil {
			return m, nil
		}
		exit := c.exited()
		if exit != nil {
			err = exit
		}
		if exit != nil || time.Now().After(deadline) || ctx.Err() != nil {
			c.stop(ctx)
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (m *jvmMonitor) Spec() Spec { return m.spec }

func (m *jvmMonitor) Sample(_ context.Context, now time.Time) ([]Point, error) {
	set, err := m.live()
	if err != nil {
		return nil, err
	}
	h := m.perf
	if err := h.read(); err != nil {
		return nil, err
	}
	freq, _ := h.long(hsFrequency)
	p := points{now: now, monitor: m.spec.Name}
	for _, c := range []struct {
		metric, counter string
		scale           float64
	}{
		{MetricGCYoungCount, hsYoungCount, 1},
		{MetricGCYoungTime, hsYoungTime, float64(freq)},
		{MetricGCFullCount, hsFullCount, 1},
		{MetricGCFullTime, hsFullTime, float64(freq)},
	} {
		if v, ok := h.long(c.counter); ok {
			p.add(c.metric, float64(v)/c.scale)
		}
	}
	newUsed, ok1 := h.sum(hsNewSpaces, hsSpaceUsedTail)
	oldUsed, ok2 := h.sum(hsOldSpaces, hsSpaceUsedTail)
	if ok1 || ok2 {
		p.add(MetricHeapUsed, float64(newUsed+oldUsed))
	}
	newCap, ok1 := h.long(hsNewCapacity)
	oldCap, ok2 := h.long(hsOldCapacity)
	if ok1 || ok2 {
		p.add(MetricHeapCommitted, float64(newCap+oldCap))
	}
	newMax, ok1 := h.long(hsNewMax)
	oldMax, ok2 := h.long(hsOldMax)
	if ok1 || ok2 {
		p.add(MetricHeapMax, float64(newMax+oldMax))
	}
	err = m.procs.sample(&p, set)
	return p.list, err
}

// live returns the JVM's process, attaching to a JVM first if there is none
// or the one attached to has exited.
func (m *jvmMonitor) live() (map[int]procStat, error) {
	if m.perf != nil {
		set, err := m.procs.one(m.pid)
		if err == nil {
			return set, nil
		}
		m.perf.close()
		m.perf = nil
		if m.spec.PID != 0 {
			return nil, fmt.Errorf("JVM %w", err)
		}
	}
	if err := m.attach(); err != nil {
		return nil, err
	}
	return m.procs.one(m.pid)
}

// attach finds the JVM and opens its counters.
func (m *jvmMonitor) attach() error {
	var candidates []int
	switch {
	case m.spec.PID != 0:
		candidates = []int{m.spec.PID}
	default:
		var (
			set map[int]procStat
			err error
		)
		if m.pattern != nil {
			set, err = m.procs.matching(m.pattern)
		} else {
			set, err = m.procs.group(m.cmd.pid())
		}
		if err != nil {
			return err
		}
		for pid := range set {
			candidates = append(candidates, pid)
		}
		sort.Slice(candidates, func(i, j int) bool { return set[candidates[i]].start < set[candidates[j]].start })
		if len(candidates) == 0 && m.pattern != nil {
			return fmt.Errorf("no process matches %q", m.spec.Pattern)
		}
	}
	err := errors.New("no JVM found")
	for _, pid := range candidates {
		var path string
		path, err = findHsperf(pid, &m.procs.buf)
		if err != nil {
			continue
		}
		var h *hsperf
		if h, err = openHsperf(path); err != nil {
			continue
		}
		if err = h.read(); err == nil && !countersReady(h) {
			err = fmt.Errorf("JVM %d has not published its GC counters yet", pid)
		}
		if err != nil {
			h.close()
			continue
		}
		m.pid, m.perf = pid, h
		return nil
	}
	return err
}

// countersReady tells whether a JVM has published the counters a sample
// needs; it adds them while it starts.
func countersReady(h *hsperf) bool {
	freq, ok := h.long(hsFrequency)
	_, young := h.long(hsYoungCount)
	return ok && freq > 0 && young
}

func (m *jvmMonitor) Close(ctx context.Context) (*Final, error) {
	if m.perf != nil {
		m.perf.close()
	}
	if m.cmd != nil {
		m.cmd.stop(ctx)
	}
	return nil, nil
}
