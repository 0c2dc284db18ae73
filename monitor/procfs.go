package monitor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// /proc is read directly, not through gopsutil: a process sample costs
// about 25 µs this way, against about 80 µs for gopsutil v4's Times,
// MemoryInfo, NumThreads and NumFDs on the same machine, and adds no
// dependency.

// userHZ is the unit of CPU times in /proc: USER_HZ, 100 on every Linux ABI
// that Go supports (it is not the kernel's CONFIG_HZ).
const userHZ = 100

var pageSize = int64(os.Getpagesize())

// procStat is what one read of /proc/PID/stat tells.
type procStat struct {
	state        byte // R, S, D, Z, ...
	pgrp         int
	user, system float64 // CPU seconds
	threads      int
	start        uint64 // ticks after boot; with the pid it names a process across pid reuse
	rss          int64  // bytes
}

// errGone is returned for a process that does not exist (any more).
var errGone = errors.New("no such process")

// readFile reads a small file into buf, growing it as needed; /proc files
// report no size, so os.ReadFile would allocate for every read.
func readFile(path string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if cap(*buf) == 0 {
		*buf = make([]byte, 0, 4096)
	}
	b := (*buf)[:0]
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF || (err == nil && n == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
	*buf = b
	return b, nil
}

// readProcStat reads /proc/PID/stat.
func readProcStat(pid int, buf *[]byte) (procStat, error) {
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return procStat{}, fmt.Errorf("process %d: %w", pid, errGone)
		}
		return procStat{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses itself: the fields that follow start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("process %d: unexpected /proc stat %q", pid, b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("process %d: unexpected /proc stat %q", pid, b)
	}
	n := func(field int) uint64 {
		v, _ := strconv.ParseUint(string(f[field-3]), 10, 64)
		return v
	}
	return procStat{
		state:   f[0][0],
		pgrp:    int(n(5)),
		user:    float64(n(14)) / userHZ,
		system:  float64(n(15)) / userHZ,
		threads: int(n(20)),
		start:   n(22),
		rss:     int64(n(24)) * pageSize,
	}, nil
}

// readPSS reads a process's proportional set size from
// /proc/PID/smaps_rollup (Linux 4.14 and later): its private pages, and
// each shared page divided by the number of processes that map it. Summed
// over processes that share memory (the backends of a database server,
// which all map its shared buffers and libraries) it counts that memory
// once, where their RSS counts it once per process. Reading it makes the
// kernel walk the process's page tables: longer than /proc/PID/stat, in
// proportion to the memory mapped. A process without memory (a zombie)
// has no Pss line and counts 0. Another user's processes need privileges
// (PTRACE_MODE_READ): without them the error is os.ErrPermission.
func readPSS(pid int, buf *[]byte) (int64, error) {
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/smaps_rollup", buf)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return 0, fmt.Errorf("process %d: %w", pid, errGone)
		}
		return 0, err
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
			f := bytes.Fields(rest) // "1234 kB"
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("process %d: unexpected smaps_rollup line %q", pid, line)
			}
			return kb << 10, nil
		}
	}
	return 0, nil
}

// countFDs counts the open file descriptors of a process by reading the
// directory /proc/PID/fd with getdents, without allocating its names.
func countFDs(pid int, buf *[]byte) (int, error) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: "/proc/" + strconv.Itoa(pid) + "/fd", Err: err}
	}
	defer syscall.Close(fd)
	if cap(*buf) < 8192 {
		*buf = make([]byte, 8192)
	}
	b := (*buf)[:cap(*buf)]
	count := 0
	for {
		n, err := syscall.ReadDirent(fd, b)
		if err != nil {
			return 0, err
		}
		if n <= 0 {
			return count, nil
		}
		// struct linux_dirent64: d_ino 8, d_off 8, d_reclen 2, d_type 1, d_name.
		for off := 0; off+19 < n; {
			reclen := int(binary.NativeEndian.Uint16(b[off+16:]))
			if reclen == 0 {
				break
			}
			if name := b[off+19:]; name[0] != '.' {
				count++
			}
			off += reclen
		}
	}
}

// listPIDs lists the processes in /proc.
func listPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// cmdline is a process's command line, its arguments joined by spaces
// (empty for kernel threads and processes that are gone).
func cmdline(pid int, buf *[]byte) string {
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/cmdline", buf)
	if err != nil {
		return ""
	}
	b = bytes.TrimRight(b, "\x00")
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}
