package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// timeWait is how long a closed connection's local port waits in
// TIME_WAIT before another connection to the same destination may take it
// (Linux's TCP_TIMEWAIT_LEN, fixed at 60 s).
const timeWait = 60

// otherCPUWarn is how busy the other processes may keep the host, in
// cores, before the doctor warns: beyond it they take CPU time the
// generator's timers and event loops wait for.
const otherCPUWarn = 0.25

// host reads the files of /proc and /sys under root.
type host struct{ root string }

func (h host) read(path string) (string, error) {
	b, err := os.ReadFile(filepath.Join(h.root, path))
	return string(b), err
}

// readInt reads a file of one integer (a sysctl).
func (h host) readInt(path string) (int, error) {
	s, err := h.read(path)
	if err != nil {
		return 0, err
	}
	return ParseInt(s)
}

// unreadable is a finding whose file could not be read: ok, since it
// says nothing against the host, with why.
func unreadable(name string, err error) Finding {
	why := err.Error()
	if errors.Is(err, fs.ErrNotExist) {
		why = "not exposed on this host"
	}
	return Finding{Name: name, Status: OK, Facts: why}
}

// checkFiles holds the open-file limit (as perflab has it: Go raises the
// soft limit to the hard one as a program starts) to the load's peak.
func checkFiles(lim *Limit, l Load) Finding {
	f := Finding{Name: "open files", Status: OK}
	if lim == nil {
		f.Facts = "the open-file limit is not known on this system"
		return f
	}
	need := l.Files()
	f.Measured = map[string]any{"soft": lim.Soft, "hard": lim.Hard, "need": need, "vus": l.VUs}
	f.Facts = fmt.Sprintf("limit %s (hard %s); %s needed: %s VUs x %d connections + %d for perflab's own files",
		limitText(lim.Soft), limitText(lim.Hard), grouped(need), grouped(l.VUs), ConnsPerVU, OwnFiles)
	if lim.Soft >= uint64(need) {
		return f
	}
	want := uint64(65536)
	for want < uint64(need) {
		want *= 2
	}
	f.Status = Fail
	f.Brief = fmt.Sprintf("open files %s < %s needed", limitText(lim.Soft), grouped(need))
	if lim.Hard >= uint64(need) { // a soft limit below the hard one: perflab's own is raised to it
		f.Fix = fmt.Sprintf("ulimit -n %d in the shell that starts perflab", min(want, lim.Hard))
	} else {
		f.Fix = fmt.Sprintf("ulimit -n %d as root in the shell that starts perflab (the hard limit, which perflab raises its soft limit to), nofile %d in /etc/security/limits.conf, LimitNOFILE=%d for a systemd service, docker run --ulimit nofile=%d for a container",
			want, want, want, want)
	}
	return f
}

func limitText(n uint64) string {
	if n >= 1<<62 {
		return "unlimited"
	}
	return grouped(n)
}

// ports holds the local port range and TIME_WAIT reuse to the load.
func (h host) ports(l Load) Finding {
	const name = "local ports"
	s, err := h.read("proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return unreadable(name, err)
	}
	lo, hi, err := ParsePortRange(s)
	if err != nil {
		return unreadable(name, err)
	}
	reuse, err := h.readInt("proc/sys/net/ipv4/tcp_tw_reuse")
	if err != nil {
		reuse = -1
	}
	return checkPorts(lo, hi, reuse, l)
}

const widenPorts = `sysctl -w net.ipv4.ip_local_port_range="1024 65535"`

// checkPorts: a connection to one destination takes a local port, which
// waits timeWait seconds in TIME_WAIT once closed, unless tcp_tw_reuse
// lets a new connection take it after a second (1: always; 2, the
// default since Linux 4.19: to loopback addresses only). Without reuse,
// ports/timeWait new connections a second to one destination is the
// ceiling.
func checkPorts(lo, hi, reuse int, l Load) Finding {
	f := Finding{Name: "local ports", Status: OK}
	ports := hi - lo + 1
	ceiling := ports / timeWait
	local, _ := l.Local()
	reused := reuse == 1 || (reuse == 2 && local)
	reuseText := map[int]string{-1: "not known", 0: "0 (off)", 1: "1 (on)", 2: "2 (loopback only)"}[reuse]
	if reuseText == "" {
		reuseText = strconv.Itoa(reuse)
	}
	f.Measured = map[string]any{"low": lo, "high": hi, "ports": ports, "tcp_tw_reuse": reuse, "new_per_second": ceiling,
		"vus": l.VUs, "need_per_second": l.ConnRate, "closed_vus_without_keepalive": l.ClosedVUs}
	f.Facts = fmt.Sprintf("%d-%d: %s ports to one destination, %s new connections/s at most (a closed one's port waits %d s in TIME_WAIT); tcp_tw_reuse %s",
		lo, hi, grouped(ports), grouped(ceiling), timeWait, reuseText)
	fixRate := widenPorts + ", sysctl -w net.ipv4.tcp_tw_reuse=1, or keep connections open (http: {keep_alive: true} in the plan)"
	switch {
	case l.VUs > ports:
		f.Status, f.Brief = Fail, fmt.Sprintf("%s VUs > %s local ports", grouped(l.VUs), grouped(ports))
		f.Facts += fmt.Sprintf("; %s VUs may hold a connection each to one destination, more than its ports", grouped(l.VUs))
		f.Fix = widenPorts + ", or spread the VUs over more machines (perflab run --segment I/N on each)"
	case l.ConnRate > float64(ports) || (!reused && l.ConnRate > float64(ceiling)):
		f.Status, f.Brief = Fail, fmt.Sprintf("%s new connections/s > %s the ports allow", grouped(int64(l.ConnRate+0.5)), grouped(ceiling))
		f.Facts += fmt.Sprintf("; the plan's arrivals open %s a second without keep-alive: the ports run out within a minute", grouped(int64(l.ConnRate+0.5)))
		f.Fix = fixRate
	case !reused && l.ConnRate > float64(ceiling)/2:
		f.Status, f.Brief = Warn, fmt.Sprintf("%s new connections/s, over half the %s the ports allow", grouped(int64(l.ConnRate+0.5)), grouped(ceiling))
		f.Facts += fmt.Sprintf("; the plan's arrivals open %s a second without keep-alive", grouped(int64(l.ConnRate+0.5)))
		f.Fix = fixRate
	case !reused && l.ClosedVUs > 0:
		f.Status, f.Brief = Warn, fmt.Sprintf("keep-alive off: %s VUs may open over %s connections/s", grouped(l.ClosedVUs), grouped(ceiling))
		f.Facts += fmt.Sprintf("; %s VUs without keep-alive open a connection a request, as fast as the service answers: the ports run out if a VU's request takes under %s",
			grouped(l.ClosedVUs), (time.Duration(l.ClosedVUs) * time.Second / time.Duration(max(ceiling, 1))).Round(time.Microsecond))
		f.Fix = fixRate
	}
	return f
}

// governor reads each CPU's frequency governor: one that scales the
// frequency with the load (powersave, ondemand, conservative, schedutil)
// changes how long the same work takes from one moment to the next.
func (h host) governor() Finding {
	f := Finding{Name: "CPU governor", Status: OK}
	paths, _ := filepath.Glob(filepath.Join(h.root, "sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	count := map[string]int{}
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			count[strings.TrimSpace(string(b))]++
		}
	}
	if len(count) == 0 {
		f.Facts = "not exposed (no cpufreq: a virtual machine, or the frequency is the firmware's)"
		return f
	}
	names := make([]string, 0, len(count))
	for g := range count {
		names = append(names, g)
	}
	slices.Sort(names)
	var parts, scaling []string
	for _, g := range names {
		parts = append(parts, fmt.Sprintf("%s on %d CPU(s)", g, count[g]))
		switch g {
		case "powersave", "ondemand", "conservative", "schedutil":
			scaling = append(scaling, g)
		}
	}
	f.Measured = map[string]any{"governors": count}
	f.Facts = strings.Join(parts, ", ")
	if len(scaling) > 0 {
		f.Status, f.Brief = Warn, "governor "+strings.Join(scaling, ", ")
		f.Facts += ": the frequency follows the load, and the same work takes longer or shorter from one moment to the next"
		f.Fix = "cpupower frequency-set -g performance (as root), or: echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
	}
	return f
}

// clocksource reads the kernel's clock source: tsc (and the hypervisors'
// kvm-clock, the TSC page of Hyper-V, arm64's arch_sys_counter) are read
// in user space; hpet and acpi_pm take a system call and a slow device
// read each time perflab reads the clock, twice or more a request.
func (h host) clocksource() Finding {
	const name = "clock source"
	s, err := h.read("sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil {
		return unreadable(name, err)
	}
	cur := strings.TrimSpace(s)
	avail, _ := h.read("sys/devices/system/clocksource/clocksource0/available_clocksource")
	f := Finding{Name: name, Status: OK, Facts: cur, Measured: map[string]any{"current": cur, "available": strings.Fields(avail)}}
	if a := strings.Fields(avail); len(a) > 0 {
		f.Facts += " (available: " + strings.Join(a, " ") + ")"
	}
	switch cur {
	case "hpet", "acpi_pm", "jiffies", "refined-jiffies":
		f.Status, f.Brief = Warn, "clock source "+cur
		f.Facts += ": each read of the clock is a system call and a slow device read"
		if slices.Contains(strings.Fields(avail), "tsc") {
			f.Fix = "echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource (clocksource=tsc on the kernel's command line to keep it)"
		} else {
			f.Fix = "a host whose kernel has a TSC clock source (tsc, kvm-clock): the kernel found this one's TSC unstable"
		}
	}
	return f
}

// checkCores: the generator's event loops, its timers and its
// bookkeeping take CPU; on 2 cores, shared with the service under test
// (a target on this host), latencies include the waits for one.
func checkCores(cores int, l Load) Finding {
	f := Finding{Name: "cores", Status: OK, Measured: map[string]any{"cores": cores}}
	f.Facts = fmt.Sprintf("%d CPU(s) for perflab", cores)
	local, known := l.Local()
	f.Measured["target_on_this_host"] = local
	switch {
	case cores < 2:
		f.Status, f.Brief = Warn, "1 core"
		f.Facts += ": the load, perflab's timers and its figures wait for each other on it"
		f.Fix = "a generator of 2 cores or more"
	case cores <= 2 && local:
		f.Status, f.Brief = Warn, fmt.Sprintf("%d cores shared with the target", cores)
		f.Facts += fmt.Sprintf(", shared with the service under test (target %s is on this host): latencies include the waits for a core", l.Target)
		f.Fix = "run the generator on a host of its own, or give each its cores (taskset -c 0 perflab run ..., taskset -c 1 for the service)"
	case cores <= 2 && !known:
		f.Status, f.Brief = Warn, fmt.Sprintf("%d cores", cores)
		f.Facts += ": a service under test on this host too would share them with the load, and latencies include the waits for a core"
		f.Fix = "run the service under test on another host, or give each its cores (taskset -c)"
	case local:
		f.Facts += fmt.Sprintf(", shared with the service under test (target %s is on this host)", l.Target)
	}
	return f
}

// snapshot is what the CPU and swap checks compare across the sample.
type snapshot struct {
	at    time.Time
	cpu   CPUTimes
	procs map[int]Proc
	vm    map[string]int64
	err   error
}

func (h host) snapshot() snapshot {
	s := snapshot{at: time.Now(), procs: map[int]Proc{}}
	if st, err := h.read("proc/stat"); err != nil {
		s.err = err
	} else if s.cpu, err = ParseCPU(strings.NewReader(st)); err != nil {
		s.err = err
	}
	if vm, err := h.read("proc/vmstat"); err == nil {
		s.vm, _ = ParseKeyed(strings.NewReader(vm))
	}
	dirs, _ := os.ReadDir(filepath.Join(h.root, "proc"))
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if st, err := h.read(filepath.Join("proc", d.Name(), "stat")); err == nil {
			if p, err := ParseProcStat(st); err == nil && p.PID == pid {
				s.procs[pid] = p
			}
		}
	}
	return s
}

// ProcUse is a process's CPU over the sample, in cores.
type ProcUse struct {
	PID   int     `json:"pid"`
	Comm  string  `json:"comm"`
	Cores float64 `json:"cores"`
}

// cpuUse is the CPU of the processes other than self between two
// snapshots, in cores (a core busy the whole time is 1): all together,
// from /proc/stat, and each of them, most first, from /proc/PID/stat;
// steal is the hypervisor's share, in cores too.
func cpuUse(a, b snapshot, self int) (others, steal float64, top []ProcUse) {
	window := float64(b.cpu.Total-a.cpu.Total) / float64(max(b.cpu.CPUs, 1)) // ticks of one CPU
	if b.cpu.Total <= a.cpu.Total || window <= 0 {
		return 0, 0, nil
	}
	var selfTicks uint64
	if p, ok := b.procs[self]; ok && a.procs[self].Start == p.Start {
		selfTicks = p.Ticks - min(p.Ticks, a.procs[self].Ticks)
	}
	busy := b.cpu.Busy - min(b.cpu.Busy, a.cpu.Busy)
	others = float64(busy-min(busy, selfTicks)) / window
	steal = float64(b.cpu.Steal-min(b.cpu.Steal, a.cpu.Steal)) / window
	for pid, p := range b.procs {
		if pid == self {
			continue
		}
		d := p.Ticks
		if q, ok := a.procs[pid]; ok && q.Start == p.Start {
			d -= min(d, q.Ticks)
		}
		if d > 0 {
			top = append(top, ProcUse{PID: pid, Comm: p.Comm, Cores: float64(d) / window})
		}
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].Cores != top[j].Cores {
			return top[i].Cores > top[j].Cores
		}
		return top[i].PID < top[j].PID
	})
	return others, steal, top
}

// checkCPU says how busy the host was besides perflab over the sample,
// and the processes that kept it busy.
func checkCPU(a, b snapshot, self int) Finding {
	const name = "other CPU"
	if a.err != nil || b.err != nil {
		return unreadable(name, errors.Join(a.err, b.err))
	}
	others, steal, top := cpuUse(a, b, self)
	if len(top) > 3 {
		top = top[:3]
	}
	f := Finding{Name: name, Status: OK, Measured: map[string]any{"cores": round(others), "steal_cores": round(steal),
		"cpus": b.cpu.CPUs, "seconds": round(b.at.Sub(a.at).Seconds()), "top": top}}
	f.Facts = fmt.Sprintf("%s busy besides perflab over %s, of %d CPU(s)", coresText(others), b.at.Sub(a.at).Round(time.Millisecond), b.cpu.CPUs)
	var names []string
	for _, p := range top {
		names = append(names, fmt.Sprintf("%s (pid %d) %s", p.Comm, p.PID, pct(p.Cores)))
	}
	if len(names) > 0 {
		f.Facts += "; most: " + strings.Join(names, ", ")
	}
	if steal >= 0.005 {
		f.Facts += fmt.Sprintf("; %s of a core stolen by the hypervisor", pct(steal))
	}
	if others > otherCPUWarn {
		f.Status, f.Brief = Warn, coresText(others)+" busy besides perflab"
		f.Fix = "stop or move what else runs here"
		if len(top) > 0 {
			f.Fix += " (" + top[0].Comm + fmt.Sprintf(", pid %d", top[0].PID) + ")"
		}
		f.Fix += ", or run the generator on a host of its own"
	}
	return f
}

func pct(cores float64) string { return fmt.Sprintf("%.0f%%", cores*100) }

// coresText is CPU time in cores: "80% of a core", "1.99 cores".
func coresText(cores float64) string {
	if cores < 0.995 {
		return pct(cores) + " of a core"
	}
	return fmt.Sprintf("%.2f cores", cores)
}

func round(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// swap reads the swap in use and vm.swappiness and, given two snapshots,
// the pages swapped in and out between them: a generator whose memory
// is swapped out pauses, and its latencies with it.
func (h host) swap(a, b snapshot, sample time.Duration) Finding {
	const name = "swap"
	mi, err := h.read("proc/meminfo")
	if err != nil {
		return unreadable(name, err)
	}
	mem, err := ParseKeyed(strings.NewReader(mi))
	if err != nil {
		return unreadable(name, err)
	}
	swappiness, err := h.readInt("proc/sys/vm/swappiness")
	if err != nil {
		swappiness = -1
	}
	in, out := int64(-1), int64(-1)
	if sample > 0 && a.vm != nil && b.vm != nil {
		in, out = b.vm["pswpin"]-a.vm["pswpin"], b.vm["pswpout"]-a.vm["pswpout"]
	}
	return checkSwap(mem, swappiness, in, out, sample)
}

// checkSwap judges /proc/meminfo (in kB), vm.swappiness (-1: not
// known) and the pages swapped in and out over the sample (-1: not
// sampled).
func checkSwap(mem map[string]int64, swappiness int, in, out int64, sample time.Duration) Finding {
	f := Finding{Name: "swap", Status: OK}
	total, used := mem["SwapTotal"], mem["SwapTotal"]-mem["SwapFree"]
	avail, memTotal := mem["MemAvailable"], mem["MemTotal"]
	f.Measured = map[string]any{"swap_total_kb": total, "swap_used_kb": used, "mem_available_kb": avail, "mem_total_kb": memTotal, "swappiness": swappiness}
	if total == 0 {
		f.Facts = "no swap"
	} else {
		f.Facts = fmt.Sprintf("%s MiB of %s MiB in use", grouped(used>>10), grouped(total>>10))
	}
	f.Facts += fmt.Sprintf("; memory available %s MiB of %s MiB", grouped(avail>>10), grouped(memTotal>>10))
	if swappiness >= 0 {
		f.Facts += fmt.Sprintf("; vm.swappiness %d", swappiness)
	}
	if in >= 0 {
		f.Measured["pages_swapped_in"], f.Measured["pages_swapped_out"] = in, out
		f.Facts += fmt.Sprintf("; %s pages swapped in, %s out over %s", grouped(in), grouped(out), sample)
	}
	const fix = "free memory (stop what else runs here), sysctl -w vm.swappiness=1, or swapoff -a (as root) for the run"
	switch {
	case in > 0 || out > 0:
		f.Status, f.Brief, f.Fix = Warn, fmt.Sprintf("swapping (%s pages in, %s out)", grouped(in), grouped(out)), fix
	case used > 0 && memTotal > 0 && avail < memTotal/10:
		f.Status, f.Brief, f.Fix = Warn, fmt.Sprintf("swap in use (%s MiB) and memory short", grouped(used>>10)), fix
	}
	return f
}
