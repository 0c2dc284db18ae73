package monitor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"syscall"
	"time"
)

// processMonitor watches one process (Spec.PID), every process whose command
// line matches Spec.Pattern, or the process group of a command it started.
// A set of processes is found again at every sample and summed.
type processMonitor struct {
	spec    Spec
	pattern *regexp.Regexp
	cmd     *command
	procs   procSampler
}

func openProcess(s Spec) (*processMonitor, error) {
	m := &processMonitor{spec: s}
	if s.Pattern != "" {
		m.pattern = regexp.MustCompile(s.Pattern)
	}
	if len(s.Command) > 0 {
		c, err := startCommand(s.Command)
		if err != nil {
			return nil, err
		}
		m.cmd = c
	}
	return m, nil
}

func (m *processMonitor) Spec() Spec { return m.spec }

func (m *processMonitor) Sample(_ context.Context, now time.Time) ([]Point, error) {
	var (
		set map[int]procStat
		err error
	)
	switch {
	case m.spec.PID != 0:
		set, err = m.procs.one(m.spec.PID)
	case m.pattern != nil:
		set, err = m.procs.matching(m.pattern)
		if err == nil && len(set) == 0 {
			err = fmt.Errorf("no process matches %q", m.spec.Pattern)
		}
	default:
		set, err = m.procs.group(m.cmd.pid())
		if err == nil && len(set) == 0 {
			err = m.cmd.exited()
		}
	}
	if err != nil && len(set) == 0 {
		return nil, err
	}
	p := points{now: now, monitor: m.spec.Name}
	// A set of processes (a pattern, a command's group) is summed: its
	// memory is also read as PSS, which counts the memory they share once
	// (see readPSS). One PID is read as RSS alone, as before.
	m.procs.pss = m.spec.PID == 0
	err = m.procs.sample(&p, set)
	p.add(MetricProcesses, float64(len(set)))
	return p.list, err
}

func (m *processMonitor) Close(ctx context.Context) (*Final, error) {
	if m.cmd != nil {
		m.cmd.stop(ctx)
	}
	return nil, nil
}

// procSampler reads the figures of processes from /proc, and keeps their
// CPU times cumulative as processes come and go.
type procSampler struct {
	cpu   cpuTracker
	first map[int]uint64 // start time of a watched PID when first seen
	// pss asks sample for pss_bytes beside rss_bytes: for sets of
	// processes, whose RSS counts their shared memory once per process.
	pss   bool
	buf   []byte
	fdBuf []byte
}

// one reads a single process, failing once it is gone or its PID has been
// reused by another process.
func (s *procSampler) one(pid int) (map[int]procStat, error) {
	st, err := readProcStat(pid, &s.buf)
	if err != nil {
		return nil, err
	}
	if s.first == nil {
		s.first = map[int]uint64{}
	}
	if start, ok := s.first[pid]; !ok {
		s.first[pid] = st.start
	} else if start != st.start {
		return nil, fmt.Errorf("process %d: %w (the PID now names another process)", pid, errGone)
	}
	return map[int]procStat{pid: st}, nil
}

// matching reads every process, except this one, whose command line
// matches re.
func (s *procSampler) matching(re *regexp.Regexp) (map[int]procStat, error) {
	pids, err := listPIDs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	set := map[int]procStat{}
	for _, pid := range pids {
		if pid == self || !re.MatchString(cmdline(pid, &s.buf)) {
			continue
		}
		if st, err := readProcStat(pid, &s.buf); err == nil {
			set[pid] = st
		}
	}
	return set, nil
}

// group reads the processes of a process group.
func (s *procSampler) group(pgid int) (map[int]procStat, error) {
	pids, err := listPIDs()
	if err != nil {
		return nil, err
	}
	set := map[int]procStat{}
	for _, pid := range pids {
		if st, err := readProcStat(pid, &s.buf); err == nil && st.pgrp == pgid && st.state != 'Z' {
			set[pid] = st
		}
	}
	return set, nil
}

// sample adds the process metrics of set to p. Open files that cannot be
// counted (another user's processes, without privileges) are left out, with
// an error. With s.pss, pss_bytes is added too when every process's PSS
// could be read; when one could not (smaps_rollup unreadable: another
// user's process without privileges, a kernel before 4.14) it is left out
// of the sample, silently: rss_bytes is still there, and the tables then
// say "(rss)".
func (s *procSampler) sample(p *points, set map[int]procStat) error {
	var (
		rss, pss     int64
		threads, fds int
		fdErr        error
		pssOK        = s.pss
	)
	for pid, st := range set {
		rss += st.rss
		if pssOK {
			n, err := pssOf(pid, &s.buf)
			switch {
			case err == nil:
				pss += n
			case errors.Is(err, errGone): // exited since: no memory left
			default:
				pssOK = false
			}
		}
		threads += st.threads
		n, err := countFDs(pid, &s.fdBuf)
		if err != nil && !errors.Is(err, syscall.ENOENT) && !errors.Is(err, syscall.ESRCH) {
			fdErr = fmt.Errorf("open files of process %d not counted: %w", pid, err)
		}
		fds += n
	}
	user, system := s.cpu.update(set)
	p.add(MetricCPUUser, user)
	p.add(MetricCPUSystem, system)
	if len(set) > 0 {
		p.add(MetricRSS, float64(rss))
		if pssOK {
			p.add(MetricPSS, float64(pss))
		}
		p.add(MetricThreads, float64(threads))
		if fdErr == nil {
			p.add(MetricOpenFiles, float64(fds))
		}
	}
	return fdErr
}

// pssOf is readPSS; tests replace it to see the fallback to RSS as root,
// who can read every process's smaps_rollup.
var pssOf = readPSS

// cpuTracker turns the CPU times of a changing set of processes into
// cumulative totals: a process counts with all its CPU time from the first
// sample it is in, and keeps counting with its last figures after it exits
// (the time it used between its last sample and its exit is lost).
type cpuTracker struct {
	last                 map[procKey]procStat
	goneUser, goneSystem float64
}

// procKey names a process across PID reuse.
type procKey struct {
	pid   int
	start uint64
}

func (t *cpuTracker) update(set map[int]procStat) (user, system float64) {
	now := make(map[procKey]procStat, len(set))
	for pid, st := range set {
		now[procKey{pid, st.start}] = st
	}
	for k, st := range t.last {
		if _, ok := now[k]; !ok {
			t.goneUser += st.user
			t.goneSystem += st.system
		}
	}
	t.last = now
	user, system = t.goneUser, t.goneSystem
	for _, st := range now {
		user += st.user
		system += st.system
	}
	return user, system
}
