// Package doctor checks the load generator's host before a run: the
// open-file limit and the local ports against the plan's peak VUs and
// new connections, the CPU frequency governor, the clock source, what
// else keeps the CPUs busy, swap, and the cores. Each check is a Finding
// with its status, what was measured and what to fix. It reads /proc and
// /sys (Linux), under a root directory that the tests replace with
// files shaped like them; it needs no privileges and sends nothing.
package doctor

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/perflab/perflab/plan"
)

// Status is a finding's verdict.
type Status string

// The statuses, from good to bad.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Finding is one check of the host.
type Finding struct {
	// Name is the check's: "open files", "local ports", ...
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Facts says what was measured, and against what, in a sentence;
	// Measured has the figures themselves.
	Facts    string         `json:"facts"`
	Measured map[string]any `json:"measured,omitempty"`
	// Fix is what to do about a warning or a failure: a command, a
	// sysctl, a change to the plan.
	Fix string `json:"fix,omitempty"`
	// Brief is the finding in a few words for the one line a run starts
	// with: "open files 1,024 < 2,100 needed".
	Brief string `json:"brief,omitempty"`
}

// Options say where the host's files are and how long to sample.
type Options struct {
	// Root is where proc/ and sys/ are: "/" unless a test gives a
	// directory shaped like them.
	Root string
	// Sample is how long the CPU use of the other processes and the
	// swapping are measured; 0 leaves them out (the quick checks).
	Sample time.Duration
	// Self is perflab's process id, left out of the other processes
	// (default: this process).
	Self int
	// Cores is how many CPUs the generator may use (default: those of
	// its CPU affinity, runtime.NumCPU, or fewer when a cgroup's quota
	// limits GOMAXPROCS).
	Cores int
	// Files is the open-file limit (default: this process's,
	// getrlimit(RLIMIT_NOFILE)).
	Files *Limit
}

// Limit is a soft and hard resource limit.
type Limit struct{ Soft, Hard uint64 }

func (o *Options) defaults() {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.Self == 0 {
		o.Self = os.Getpid()
	}
	if o.Cores == 0 {
		o.Cores = min(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
	if o.Files == nil {
		o.Files = fileLimit()
	}
}

// Check runs every check of the host against the load: the quick ones,
// then, with o.Sample, the CPU of the other processes and the swapping
// measured over o.Sample.
func Check(l Load, o Options) []Finding {
	o.defaults()
	h := host{root: o.Root}
	var before snapshot
	if o.Sample > 0 {
		before = h.snapshot()
	}
	out := []Finding{
		checkFiles(o.Files, l),
		h.ports(l),
		h.governor(),
		h.clocksource(),
		checkCores(o.Cores, l),
	}
	var after snapshot
	if o.Sample > 0 {
		time.Sleep(o.Sample)
		after = h.snapshot()
	}
	out = append(out, h.swap(before, after, o.Sample))
	if o.Sample > 0 {
		out = append(out, checkCPU(before, after, o.Self))
	}
	return out
}

// Worst is the worst status of the findings.
func Worst(fs []Finding) Status {
	w := OK
	for _, f := range fs {
		switch {
		case f.Status == Fail:
			return Fail
		case f.Status == Warn:
			w = Warn
		}
	}
	return w
}

// Summary is the findings in a line: "host ok", or "1 failure, 2
// warnings (open files 1,024 < 2,100 needed; governor powersave; ...)",
// the failures first.
func Summary(fs []Finding) string {
	var fails, warns []string
	for _, f := range fs {
		brief := f.Brief
		if brief == "" {
			brief = f.Name
		}
		switch f.Status {
		case Fail:
			fails = append(fails, brief)
		case Warn:
			warns = append(warns, brief)
		}
	}
	if len(fails)+len(warns) == 0 {
		return "host ok"
	}
	var counts []string
	if n := len(fails); n > 0 {
		counts = append(counts, plural(n, "failure"))
	}
	if n := len(warns); n > 0 {
		counts = append(counts, plural(n, "warning"))
	}
	return strings.Join(counts, ", ") + " (" + strings.Join(append(fails, warns...), "; ") + ")"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// WriteTable prints the findings, a line each with what to fix below
// the ones that are not ok, then the summary.
func WriteTable(w io.Writer, l Load, fs []Finding) error {
	width := 0
	for _, f := range fs {
		width = max(width, len(f.Name))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", l.Describe())
	for _, f := range fs {
		fmt.Fprintf(&b, "  %-4s  %-*s  %s\n", f.Status, width, f.Name, f.Facts)
		if f.Fix != "" && f.Status != OK {
			fmt.Fprintf(&b, "        %-*s  fix: %s\n", width, "", f.Fix)
		}
	}
	fmt.Fprintf(&b, "doctor: %s\n", Summary(fs))
	_, err := io.WriteString(w, b.String())
	return err
}

// grouped writes n with its thousands grouped: 2,100.
func grouped[T int | int64 | uint64](n T) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// AtStart prints the quick checks of the host for a run of p (its share
// seg, for a worker of a distributed run) in one line: "perflab: doctor:
// host ok", or what is wrong and where to read more. It samples nothing:
// it reads a few files of /proc and /sys, well under a millisecond.
func AtStart(w io.Writer, p *plan.Plan, seg plan.Segment) { atStart(w, p, seg, Options{}) }

func atStart(w io.Writer, p *plan.Plan, seg plan.Segment, o Options) {
	o.Sample = 0
	fs := Check(FromPlan(p, seg), o)
	line := Summary(fs)
	if Worst(fs) != OK {
		file := p.File
		if file == "" || strings.ContainsAny(file, " \t\n") {
			file = "PLAN"
		}
		line += "; perflab doctor " + file + " for details"
	}
	fmt.Fprintf(w, "perflab: doctor: %s\n", line)
}
