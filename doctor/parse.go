package doctor

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The parsers read the text of /proc and /sys files as the kernel writes
// them; each is given the text, not the path, so that the tests give them
// the content of real hosts with known answers.

// ParsePortRange reads net.ipv4.ip_local_port_range
// (/proc/sys/net/ipv4/ip_local_port_range): two numbers, "32768\t60999".
func ParsePortRange(s string) (lo, hi int, err error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("port range %q: want two numbers", s)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > 65535 {
		return 0, 0, fmt.Errorf("port range %q: want two ports, the first the lower", s)
	}
	return lo, hi, nil
}

// ParseInt reads a file of one integer, as a sysctl's
// (/proc/sys/net/ipv4/tcp_tw_reuse, /proc/sys/vm/swappiness).
func ParseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want an integer, got %q", strings.TrimSpace(s))
	}
	return n, nil
}

// ParseKeyed reads a file of lines "name value", as /proc/vmstat
// ("pswpin 0"), or "name: value unit", as /proc/meminfo ("SwapTotal:
// 2097148 kB", the value kept in its unit): name to value. Lines without
// a number are passed over.
func ParseKeyed(r io.Reader) (map[string]int64, error) {
	m := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		m[strings.TrimSuffix(f[0], ":")] = v
	}
	return m, sc.Err()
}

// CPUTimes is the first line of /proc/stat, all CPUs together, in ticks
// (USER_HZ), and the number of CPUs it counts.
type CPUTimes struct {
	// Busy is user, nice, system, irq and softirq (guest time is in
	// user); Steal is what the hypervisor took; Total adds idle and
	// iowait to them.
	Busy, Steal, Total uint64
	CPUs               int
}

// ParseCPU reads /proc/stat's cpu lines: "cpu  user nice system idle
// iowait irq softirq steal guest guest_nice", then one "cpuN" line a CPU.
func ParseCPU(r io.Reader) (CPUTimes, error) {
	var t CPUTimes
	seen := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			t.CPUs++
			continue
		}
		if len(f) < 9 {
			return t, fmt.Errorf("/proc/stat: unexpected line %q", sc.Text())
		}
		for i := 1; i <= 8; i++ {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return t, fmt.Errorf("/proc/stat: unexpected line %q", sc.Text())
			}
			t.Total += v
			switch i {
			case 4, 5: // idle, iowait
			case 8:
				t.Steal = v
			default:
				t.Busy += v
			}
		}
		seen = true
	}
	if err := sc.Err(); err != nil {
		return t, err
	}
	if !seen || t.CPUs == 0 {
		return t, fmt.Errorf("/proc/stat: no cpu lines")
	}
	return t, nil
}

// Proc is what /proc/PID/stat tells of a process's CPU.
type Proc struct {
	PID int
	// Comm is the command's name (at most 15 bytes).
	Comm string
	// Ticks is its CPU time so far, user and system, in USER_HZ ticks;
	// Start is when it started, in ticks after boot (with the pid, it
	// names the process across pid reuse).
	Ticks, Start uint64
}

// ParseProcStat reads /proc/PID/stat: "pid (comm) state ppid ...", utime
// and stime its fields 14 and 15, starttime 22. The name may hold spaces
// and parentheses: the fields after it follow the last ')'.
func ParseProcStat(s string) (Proc, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Proc{}, fmt.Errorf("/proc/PID/stat: unexpected %q", s)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	f := strings.Fields(s[end+1:]) // f[0] is field 3
	if err != nil || len(f) < 20 {
		return Proc{}, fmt.Errorf("/proc/PID/stat: unexpected %q", s)
	}
	field := func(n int) uint64 {
		v, _ := strconv.ParseUint(f[n-3], 10, 64)
		return v
	}
	return Proc{PID: pid, Comm: s[open+1 : end], Ticks: field(14) + field(15), Start: field(22)}, nil
}
