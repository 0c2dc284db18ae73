package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/plan"
)

// tree writes files under a new directory shaped like / (proc/...,
// sys/...) and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// laptop is a host with Linux's defaults and what a laptop has: 4 CPUs
// on intel_pstate's powersave, a clock source fallen back to hpet, swap
// half used with memory short.
func laptop() map[string]string {
	m := map[string]string{
		"proc/sys/net/ipv4/ip_local_port_range": "32768\t60999\n",
		"proc/sys/net/ipv4/tcp_tw_reuse":        "2\n",
		"proc/sys/vm/swappiness":                "60\n",
		"proc/meminfo":                          meminfoSwapping,
		"proc/vmstat":                           vmstatBefore,
		"proc/stat":                             procStat2,
		"sys/devices/system/clocksource/clocksource0/current_clocksource":   "hpet\n",
		"sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc hpet acpi_pm \n",
	}
	for i := range 4 {
		m[fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", i)] = "powersave\n"
	}
	m["sys/devices/system/cpu/cpufreq/policy0/scaling_governor"] = "powersave\n" // not a CPU's: not counted
	return m
}

func byName(t *testing.T, fs []Finding, name string) Finding {
	t.Helper()
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no finding %q in %+v", name, fs)
	return Finding{}
}

func TestCheckLaptop(t *testing.T) {
	root := tree(t, laptop())
	fs := Check(Generic(), Options{Root: root, Cores: 4, Files: &Limit{Soft: 1024, Hard: 1024}})
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "open files,local ports,CPU governor,clock source,cores,swap" {
		t.Fatalf("findings %s: want the quick checks without sampling", got)
	}
	files := byName(t, fs, "open files")
	// 1,000 VUs x 2 connections + 100 of perflab's own.
	if files.Status != Fail || files.Measured["need"] != 2100 || files.Brief != "open files 1,024 < 2,100 needed" ||
		files.Fix != "ulimit -n 65536 as root in the shell that starts perflab (the hard limit, which perflab raises its soft limit to), nofile 65536 in /etc/security/limits.conf, LimitNOFILE=65536 for a systemd service, docker run --ulimit nofile=65536 for a container" {
		t.Errorf("open files: %+v", files)
	}
	ports := byName(t, fs, "local ports")
	// 28,232 ports / 60 s: 470 a second; no plan, no rate to hold it to.
	if ports.Status != OK || ports.Measured["ports"] != 28232 || ports.Measured["new_per_second"] != 470 || ports.Measured["tcp_tw_reuse"] != 2 {
		t.Errorf("local ports: %+v", ports)
	}
	gov := byName(t, fs, "CPU governor")
	if gov.Status != Warn || gov.Brief != "governor powersave" || gov.Facts[:24] != "powersave on 4 CPU(s): t" || !strings.Contains(gov.Fix, "performance") {
		t.Errorf("governor: %+v", gov)
	}
	clock := byName(t, fs, "clock source")
	if clock.Status != Warn || clock.Brief != "clock source hpet" || !strings.HasPrefix(clock.Fix, "echo tsc | sudo tee ") {
		t.Errorf("clock source: %+v", clock)
	}
	if cores := byName(t, fs, "cores"); cores.Status != OK {
		t.Errorf("4 cores: %+v", cores)
	}
	swap := byName(t, fs, "swap")
	// 2,097,148 - 1,048,576 kB in use; 402,112 kB available of 8,024,064 (5%).
	if swap.Status != Warn || swap.Measured["swap_used_kb"] != int64(1048572) || swap.Measured["swappiness"] != 60 ||
		swap.Brief != "swap in use (1,023 MiB) and memory short" || !strings.Contains(swap.Fix, "vm.swappiness=1") {
		t.Errorf("swap: %+v", swap)
	}
	// A soft limit under the hard one, as a shell may have it: up to the hard one.
	if f := checkFiles(&Limit{Soft: 1024, Hard: 524288}, Generic()); f.Status != Fail || f.Fix != "ulimit -n 65536 in the shell that starts perflab" {
		t.Errorf("soft 1,024, hard 524,288: %+v", f)
	}
	if f := checkFiles(&Limit{Soft: 1024, Hard: 4096}, Generic()); f.Fix != "ulimit -n 4096 in the shell that starts perflab" {
		t.Errorf("soft 1,024, hard 4,096: %+v", f)
	}
	if _, sampled := swap.Measured["pages_swapped_in"]; sampled {
		t.Errorf("swap: activity without a sample: %+v", swap)
	}
	want := "1 failure, 3 warnings (open files 1,024 < 2,100 needed; governor powersave; clock source hpet; swap in use (1,023 MiB) and memory short)"
	if got := Summary(fs); got != want || Worst(fs) != Fail {
		t.Errorf("Summary = %q (%s), want %q", got, Worst(fs), want)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, Generic(), fs); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"doctor: this host, against generic limits (1,000 VUs, keep-alive; give a plan to check against its load)\n",
		"  fail  open files    limit 1,024 (hard 1,024); 2,100 needed: 1,000 VUs x 2 connections + 100 for perflab's own files\n",
		"                      fix: ulimit -n 65536 as root in the shell",
		"  ok    cores         4 CPU(s) for perflab\n",
		"doctor: " + want + "\n",
	} {
		if !strings.Contains(table.String(), line) {
			t.Errorf("the table lacks %q:\n%s", line, table.String())
		}
	}
}

// A VM: no cpufreq, kvm-clock, no swap: nothing to say but ok.
func TestCheckVM(t *testing.T) {
	m := laptop()
	for k := range m {
		if strings.Contains(k, "cpufreq") {
			delete(m, k)
		}
	}
	m["sys/devices/system/clocksource/clocksource0/current_clocksource"] = "kvm-clock\n"
	m["proc/meminfo"] = "MemTotal:       24683772 kB\nMemFree:        22159000 kB\nMemAvailable:   24211384 kB\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"
	fs := Check(Generic(), Options{Root: tree(t, m), Cores: 8, Files: &Limit{Soft: 1 << 20, Hard: 1 << 20}})
	if got := Summary(fs); got != "host ok" {
		t.Errorf("Summary = %q, want host ok: %+v", got, fs)
	}
	if gov := byName(t, fs, "CPU governor"); !strings.HasPrefix(gov.Facts, "not exposed") {
		t.Errorf("governor: %+v", gov)
	}
	if swap := byName(t, fs, "swap"); !strings.HasPrefix(swap.Facts, "no swap; memory available 23,643 MiB of 24,105 MiB; vm.swappiness 60") {
		t.Errorf("swap: %+v", swap)
	}
	// A host without the files says so, and is not held against.
	fs = Check(Generic(), Options{Root: t.TempDir(), Cores: 8, Files: &Limit{Soft: 1 << 20, Hard: 1 << 20}, Sample: time.Millisecond})
	for _, f := range fs {
		if f.Status != OK {
			t.Errorf("%s on an empty root: %+v", f.Name, f)
		}
	}
	if f := byName(t, fs, "local ports"); f.Facts != "not exposed on this host" {
		t.Errorf("local ports on an empty root: %+v", f)
	}
}

func TestCheckPorts(t *testing.T) {
	remote := func(l Load) Load { l.Plan, l.Target = "p", "10.1.2.3"; return l }
	for _, c := range []struct {
		name      string
		reuse     int
		load      Load
		status    Status
		brief     string
		lo, hi    int
		fixPrefix string
	}{
		{"keep-alive", 0, remote(Load{VUs: 5000}), OK, "", 32768, 60999, ""},
		{"more VUs than ports", 1, remote(Load{VUs: 30000}), Fail, "30,000 VUs > 28,232 local ports", 32768, 60999, widenPorts},
		{"a rate over the ceiling", 0, remote(Load{VUs: 100, ConnRate: 600}), Fail, "600 new connections/s > 470 the ports allow", 32768, 60999, widenPorts},
		{"tw_reuse 1 lets it", 1, remote(Load{VUs: 100, ConnRate: 600}), OK, "", 32768, 60999, ""},
		{"tw_reuse 2 only to loopback", 2, remote(Load{VUs: 100, ConnRate: 600}), Fail, "600 new connections/s > 470 the ports allow", 32768, 60999, widenPorts},
		{"tw_reuse 2 to loopback", 2, Load{Plan: "p", Target: "127.0.0.1", VUs: 100, ConnRate: 600}, OK, "", 32768, 60999, ""},
		{"a wide range", 0, remote(Load{VUs: 100, ConnRate: 500}), OK, "", 1024, 65535, ""}, // 64,512 / 60 = 1,075, over twice 500
		{"over half", 0, remote(Load{VUs: 100, ConnRate: 300}), Warn, "300 new connections/s, over half the 470 the ports allow", 32768, 60999, widenPorts},
		{"closed without keep-alive", 0, remote(Load{VUs: 50, ClosedVUs: 50}), Warn, "keep-alive off: 50 VUs may open over 470 connections/s", 32768, 60999, widenPorts},
		{"even with reuse, not more than the ports a second", 1, remote(Load{VUs: 10, ConnRate: 30000}), Fail, "30,000 new connections/s > 470 the ports allow", 32768, 60999, widenPorts},
	} {
		f := checkPorts(c.lo, c.hi, c.reuse, c.load)
		if f.Status != c.status || f.Brief != c.brief || !strings.HasPrefix(f.Fix, c.fixPrefix) || (c.status == OK) != (f.Fix == "") {
			t.Errorf("%s: %+v; want %s %q", c.name, f, c.status, c.brief)
		}
	}
	// 50 VUs share 470 connections a second: each a request every 106.383 ms at the most.
	f := checkPorts(32768, 60999, 0, remote(Load{VUs: 50, ClosedVUs: 50}))
	if !strings.Contains(f.Facts, "the ports run out if a VU's request takes under 106.383ms") {
		t.Errorf("closed: %s", f.Facts)
	}
}

func TestCheckCores(t *testing.T) {
	for _, c := range []struct {
		cores  int
		target string
		status Status
		brief  string
	}{
		{1, "10.0.0.5", Warn, "1 core"},
		{2, "localhost", Warn, "2 cores shared with the target"},
		{2, "::1", Warn, "2 cores shared with the target"},
		{2, "10.0.0.5", OK, ""},
		{2, "", Warn, "2 cores"}, // no plan: the service may be here
		{4, "127.0.0.1", OK, ""},
	} {
		f := checkCores(c.cores, Load{Target: c.target})
		if f.Status != c.status || f.Brief != c.brief || f.Measured["cores"] != c.cores {
			t.Errorf("%d cores, target %q: %+v; want %s %q", c.cores, c.target, f, c.status, c.brief)
		}
	}
}

// snap is a snapshot of /proc/stat and processes' /proc/PID/stat lines.
func snap(t *testing.T, at time.Time, stat string, procs ...string) snapshot {
	t.Helper()
	c, err := ParseCPU(strings.NewReader(stat))
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{at: at, cpu: c, procs: map[int]Proc{}}
	for _, line := range procs {
		p, err := ParseProcStat(line)
		if err != nil {
			t.Fatal(err)
		}
		s.procs[p.PID] = p
	}
	return s
}

// procLine is a /proc/PID/stat line of utime and stime ticks, started at start.
func procLine(pid int, comm string, utime, stime, start int) string {
	return fmt.Sprintf("%d (%s) S 1 %d %d 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 1 0 %d 25000000 1500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0",
		pid, comm, pid, pid, utime, stime, start)
}

func TestCheckCPU(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	// Over 1 s on 2 CPUs (200 ticks): busy rose by 90 ticks (user 70,
	// system 15, softirq 5), steal by 4; perflab (pid 100) took 10, so
	// the others 80: 0.8 of a core. stress-ng took 60 ticks, postgres 20
	// (10 of which in a child started during the sample), a process that
	// exited is not seen, and pid 300 is another process under an old pid.
	a := snap(t, t0, "cpu  1000 0 500 8000 100 0 50 10 0 0\ncpu0 500 0 250 4000 50 0 25 5 0 0\ncpu1 500 0 250 4000 50 0 25 5 0 0\n",
		procLine(100, "perflab", 400, 100, 5000), procLine(200, "stress-ng", 3000, 0, 4000), procLine(201, "postgres", 50, 50, 100),
		procLine(300, "cron", 900, 0, 10), procLine(400, "gone", 1, 1, 10))
	b := snap(t, t0.Add(time.Second), "cpu  1070 0 515 8106 100 0 55 14 0 0\ncpu0 535 0 257 4051 50 0 27 7 0 0\ncpu1 535 0 258 4051 50 0 28 7 0 0\n",
		procLine(100, "perflab", 408, 102, 5000), procLine(200, "stress-ng", 3060, 0, 4000), procLine(201, "postgres", 55, 55, 100),
		procLine(202, "postgres", 6, 4, 6000), procLine(300, "sleep", 0, 0, 6001))
	f := checkCPU(a, b, 100)
	if f.Status != Warn || f.Brief != "80% of a core busy besides perflab" || f.Measured["cores"] != 0.8 || f.Measured["steal_cores"] != 0.04 {
		t.Errorf("checkCPU: %+v", f)
	}
	wantTop := []ProcUse{{200, "stress-ng", 0.6}, {201, "postgres", 0.1}, {202, "postgres", 0.1}}
	if got := fmt.Sprint(f.Measured["top"]); got != fmt.Sprint(wantTop) {
		t.Errorf("top = %s, want %v", got, wantTop)
	}
	if want := "80% of a core busy besides perflab over 1s, of 2 CPU(s); most: stress-ng (pid 200) 60%, postgres (pid 201) 10%, postgres (pid 202) 10%; 4% of a core stolen by the hypervisor"; f.Facts != want {
		t.Errorf("facts %q\nwant %q", f.Facts, want)
	}
	if !strings.Contains(f.Fix, "(stress-ng, pid 200)") {
		t.Errorf("fix %q names not the busiest", f.Fix)
	}
	// A quiet host: perflab alone busy.
	c := snap(t, t0.Add(2*time.Second), "cpu  1078 0 517 8296 100 0 55 14 0 0\ncpu0 539 0 258 4147 50 0 27 7 0 0\ncpu1 539 0 259 4147 50 0 28 7 0 0\n",
		procLine(100, "perflab", 416, 104, 5000))
	if f := checkCPU(b, c, 100); f.Status != OK || f.Measured["cores"] != 0.0 {
		t.Errorf("a quiet host: %+v", f)
	}
}

func TestCheckSwapActivity(t *testing.T) {
	root := tree(t, laptop())
	h := host{root: root}
	vm := func(s string) snapshot {
		m, err := ParseKeyed(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return snapshot{vm: m}
	}
	f := h.swap(vm(vmstatBefore), vm(vmstatAfter), time.Second)
	if f.Status != Warn || f.Brief != "swapping (50 pages in, 5 out)" || f.Measured["pages_swapped_in"] != int64(50) {
		t.Errorf("swapping: %+v", f)
	}
	// Swap in use, memory plentiful, nothing moving: ok.
	mem, _ := ParseKeyed(strings.NewReader(meminfoSwapping))
	mem["MemAvailable"] = 4000000
	if f := checkSwap(mem, 1, 0, 0, time.Second); f.Status != OK || f.Fix != "" {
		t.Errorf("idle swap: %+v", f)
	}
}

// plans writes a plan and loads it as perflab run does.
func loadPlan(t *testing.T, src string) *plan.Plan {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromPlan(t *testing.T) {
	const flow = "\n    flow:\n      - name: get\n        url: /x\n"
	p := loadPlan(t, `name: mixed
target: http://127.0.0.1:8080
vars:
  users: [10, 200]
http:
  keep_alive: false
scenarios:
  - name: browse
    vus: ${users}
    duration: 1m`+flow+`  - name: ramp
    vus: 5
    ramp_vus:
      - {target: 50, duration: 1m}
      - {target: 20, duration: 1m}`+flow+`  - name: arrivals
    rate: 100
    vus: 10
    max_vus: 30
    duration: 1m`+flow+`  - name: ramped arrivals
    start_rate: 50
    ramp_rate:
      - {target: 900, duration: 1m}
      - {target: 300, duration: 1m}
    vus: 10
    max_vus: 40`+flow)
	l := FromPlan(p, plan.Segment{})
	// stage users=200: 200 + 50 (the ramp's peak) + 30 + 40 VUs; the
	// arrivals at most 100 + 900 a second; 250 VUs of closed models.
	want := Load{Plan: "mixed", File: p.File, VUs: 320, Stage: "users=200", ConnRate: 1000, RateStage: "users=10", ClosedVUs: 250, Target: "127.0.0.1"}
	if l != want {
		t.Errorf("FromPlan = %+v\nwant %+v", l, want)
	}
	if local, known := l.Local(); !local || !known {
		t.Errorf("127.0.0.1 not local")
	}
	// Worker 0 of 3: its share of each scenario's VUs (ceil for the
	// first), a third of the arrivals.
	w := FromPlan(p, plan.Segment{Index: 0, Count: 3})
	if w.VUs != 67+17+10+14 || w.ConnRate != 1000.0/3 || w.ClosedVUs != 67+17 {
		t.Errorf("worker 0/3: %+v", w)
	}

	// Consecutive scenarios: the largest; keep-alive: no rate.
	c := loadPlan(t, `name: one-by-one
target: ${env.DOCTOR_TEST_TARGET:-http://10.0.0.7:8080}
consecutive: true
scenarios:
  - name: a
    vus: 300
    iterations: 1`+flow+`  - name: b
    rate: 100
    vus: 5
    max_vus: 20
    duration: 1m`+flow)
	if l := FromPlan(c, plan.Segment{}); l.VUs != 300 || l.ConnRate != 0 || l.ClosedVUs != 0 || l.Stage != "all" || l.Target != "10.0.0.7" {
		t.Errorf("consecutive: %+v", l)
	}
	if !strings.HasPrefix(FromPlan(c, plan.Segment{}).Describe(), "doctor: this host, against plan one-by-one: at most 300 VUs at once") {
		t.Errorf("Describe: %s", FromPlan(c, plan.Segment{}).Describe())
	}
}

// The checks of this machine: what they report is what the system calls
// and files say.
func TestCheckThisHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc and /sys")
	}
	fs := Check(Generic(), Options{Sample: 50 * time.Millisecond})
	if len(fs) != 7 {
		t.Fatalf("%d findings, want 7: %+v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Status != OK && f.Status != Warn && f.Status != Fail {
			t.Errorf("%s: status %q", f.Name, f.Status)
		}
		if (f.Status == OK) != (f.Brief == "") {
			t.Errorf("%s: status %s with brief %q", f.Name, f.Status, f.Brief)
		}
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if f := byName(t, fs, "open files"); f.Measured["soft"] != uint64(lim.Cur) || f.Measured["hard"] != uint64(lim.Max) ||
		(f.Status == Fail) != (lim.Cur < uint64(Generic().Files())) {
		t.Errorf("open files %+v; getrlimit says %d, %d", f, lim.Cur, lim.Max)
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi int
	if _, err := fmt.Sscan(string(b), &lo, &hi); err != nil {
		t.Fatal(err)
	}
	if f := byName(t, fs, "local ports"); f.Measured["low"] != lo || f.Measured["high"] != hi || f.Measured["new_per_second"] != (hi-lo+1)/60 {
		t.Errorf("local ports %+v; the file says %d-%d", f, lo, hi)
	}
	if f := byName(t, fs, "cores"); f.Measured["cores"] != min(runtime.NumCPU(), runtime.GOMAXPROCS(0)) {
		t.Errorf("cores %+v; NumCPU %d", f, runtime.NumCPU())
	}
	if cs, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		if f := byName(t, fs, "clock source"); f.Measured["current"] != strings.TrimSpace(string(cs)) {
			t.Errorf("clock source %+v; the file says %q", f, cs)
		}
	}
	cpu := byName(t, fs, "other CPU")
	if n, ok := cpu.Measured["cpus"].(int); !ok || n < 1 {
		t.Errorf("other CPU: %+v", cpu)
	}
	// The findings are JSON as perflab doctor --json prints them.
	j, err := json.Marshal(fs)
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(j, &back); err != nil || len(back) != 7 || back[0]["name"] != "open files" || back[0]["measured"].(map[string]any)["soft"] != float64(lim.Cur) {
		t.Errorf("JSON %s: %v", j, err)
	}
}

// The line a run starts with says what the quick checks find, and where
// to read more.
func TestAtStart(t *testing.T) {
	src := "name: tiny\ntarget: http://127.0.0.1:1\nscenarios:\n  - name: s\n    vus: 1\n    iterations: 1\n    flow:\n      - name: get\n        url: /\n"
	p := loadPlan(t, src)
	var b bytes.Buffer
	atStart(&b, p, plan.Segment{}, Options{Root: tree(t, laptop()), Cores: 2, Files: &Limit{Soft: 1024, Hard: 1024}})
	want := "perflab: doctor: 4 warnings (governor powersave; clock source hpet; 2 cores shared with the target; swap in use (1,023 MiB) and memory short); perflab doctor " + p.File + " for details\n"
	if b.String() != want {
		t.Errorf("atStart printed %q\nwant %q", b.String(), want)
	}
	m := laptop()
	m["sys/devices/system/clocksource/clocksource0/current_clocksource"] = "tsc\n"
	m["proc/meminfo"] = "MemTotal: 8024064 kB\nMemAvailable: 6000000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
	for k := range m {
		if strings.Contains(k, "cpufreq") {
			delete(m, k)
		}
	}
	b.Reset()
	atStart(&b, p, plan.Segment{}, Options{Root: tree(t, m), Cores: 4, Files: &Limit{Soft: 1024, Hard: 1024}})
	if b.String() != "perflab: doctor: host ok\n" {
		t.Errorf("atStart printed %q, want host ok", b.String())
	}
	if runtime.GOOS != "linux" {
		return
	}
	// This host: one line, as the real checks say.
	b.Reset()
	AtStart(&b, p, plan.Segment{})
	if !regexp.MustCompile(`^perflab: doctor: (host ok|\d+ (failure|warning)s? .*; perflab doctor ` + regexp.QuoteMeta(p.File) + ` for details)\n$`).MatchString(b.String()) {
		t.Errorf("AtStart printed %q", b.String())
	}
}

// What the quick checks add to a run's start (go test ./doctor -bench AtStart).
func BenchmarkAtStart(b *testing.B) {
	p, err := plan.Parse([]byte("name: tiny\ntarget: http://127.0.0.1:1\nscenarios:\n  - name: s\n    vus: 1\n    iterations: 1\n    flow:\n      - name: get\n        url: /\n"), "plan.yaml", plan.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		AtStart(io.Discard, p, plan.Segment{})
	}
}
