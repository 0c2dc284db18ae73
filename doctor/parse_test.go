package doctor

import (
	"strings"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for _, c := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"32768\t60999\n", 32768, 60999, true}, // Linux's default, as the kernel writes it
		{"1024 65535\n", 1024, 65535, true},
		{"60999\t32768\n", 0, 0, false},
		{"32768\n", 0, 0, false},
		{"0 100\n", 0, 0, false},
		{"1024 70000\n", 0, 0, false},
	} {
		lo, hi, err := ParsePortRange(c.in)
		if (err == nil) != c.ok || lo != c.lo || hi != c.hi {
			t.Errorf("ParsePortRange(%q) = %d, %d, %v; want %d, %d, ok %v", c.in, lo, hi, err, c.lo, c.hi, c.ok)
		}
	}
}

func TestParseInt(t *testing.T) {
	if n, err := ParseInt("2\n"); n != 2 || err != nil {
		t.Errorf("ParseInt(2) = %d, %v", n, err)
	}
	if _, err := ParseInt("on\n"); err == nil {
		t.Error("ParseInt(on) took it")
	}
}

// /proc/meminfo and /proc/vmstat of a host with swap (excerpts, the lines
// as the kernel writes them).
const (
	meminfoSwapping = `MemTotal:        8024064 kB
MemFree:          161588 kB
MemAvailable:     402112 kB
Buffers:            2180 kB
Cached:           455324 kB
SwapCached:        90312 kB
Active(anon):    5234068 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
SwapTotal:       2097148 kB
SwapFree:        1048576 kB
Zswap:                 0 kB
`
	vmstatBefore = "nr_free_pages 40397\nnr_zone_inactive_anon 412345\npswpin 88120\npswpout 262144\npgfault 912834712\n"
	vmstatAfter  = "nr_free_pages 40112\nnr_zone_inactive_anon 412345\npswpin 88170\npswpout 262149\npgfault 912834999\n"
)

func TestParseKeyed(t *testing.T) {
	m, err := ParseKeyed(strings.NewReader(meminfoSwapping))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{"MemTotal": 8024064, "MemAvailable": 402112, "SwapTotal": 2097148, "SwapFree": 1048576, "Active(anon)": 5234068, "HugePages_Total": 0} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("meminfo %s = %d (%v), want %d", k, got, ok, want)
		}
	}
	v, err := ParseKeyed(strings.NewReader(vmstatBefore))
	if err != nil || v["pswpin"] != 88120 || v["pswpout"] != 262144 {
		t.Errorf("vmstat = %v, %v; want pswpin 88120, pswpout 262144", v, err)
	}
}

// /proc/stat of a 2-CPU KVM guest, as this machine wrote it.
const procStat2 = `cpu  22725 0 6106 12062 279 0 90 66 0 0
cpu0 11032 0 2892 6684 24 0 7 31 0 0
cpu1 11693 0 3213 5377 255 0 83 35 0 0
intr 4286621 0 9 0 0 0 0 0 0 0
ctxt 7512003
btime 1764110392
processes 11511
procs_running 3
procs_blocked 0
softirq 2185046 1 380447 3 16316 0 0 7127 869470 0 911682
`

func TestParseCPU(t *testing.T) {
	c, err := ParseCPU(strings.NewReader(procStat2))
	if err != nil {
		t.Fatal(err)
	}
	// busy: user 22725 + nice 0 + system 6106 + irq 0 + softirq 90;
	// total adds idle 12062, iowait 279 and steal 66.
	want := CPUTimes{Busy: 28921, Steal: 66, Total: 41328, CPUs: 2}
	if c != want {
		t.Errorf("ParseCPU = %+v, want %+v", c, want)
	}
	if _, err := ParseCPU(strings.NewReader("intr 1 2 3\n")); err == nil {
		t.Error("ParseCPU took a file without cpu lines")
	}
	if _, err := ParseCPU(strings.NewReader("cpu  1 2 3\ncpu0 1 2 3\n")); err == nil {
		t.Error("ParseCPU took a short cpu line")
	}
}

func TestParseProcStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Proc
	}{
		// cat on this machine: utime 0, stime 0, starttime 20775.
		{"11501 (cat) R 11493 11493 5040 0 -1 4194304 98 0 0 0 0 0 0 0 20 0 1 0 20775 3133440 381 18446744073709551615 94816526123008 94816526142889 140731158668768 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 94816526158896 94816526160512 94817255129088 140731158670019 140731158670039 140731158670039 140731158671339 0\n",
			Proc{PID: 11501, Comm: "cat", Ticks: 0, Start: 20775}},
		// a name with a space and parentheses; utime 1200, stime 345.
		{"4242 (tmux: (server)) S 1 4242 4242 0 -1 4194560 5000 0 0 0 1200 345 0 0 20 0 1 0 1800 25000000 1500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
			Proc{PID: 4242, Comm: "tmux: (server)", Ticks: 1545, Start: 1800}},
	} {
		got, err := ParseProcStat(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseProcStat = %+v, %v; want %+v", got, err, c.want)
		}
	}
	for _, bad := range []string{"", "12 cat R 1", "12 (cat) R 1 2 3"} {
		if _, err := ParseProcStat(bad); err == nil {
			t.Errorf("ParseProcStat(%q) took it", bad)
		}
	}
}
