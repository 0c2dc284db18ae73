package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/sim"
)

// driftOf runs perflab drift --json on the one run under out.
func driftOf(t *testing.T, out string, args ...string) *results.Drift {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	var run string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			run = d
		}
	}
	code, text, errs := runCLI(t, append([]string{"drift", "--json", run}, args...)...)
	if code != exitOK {
		t.Fatalf("drift: exit %d: %s", code, errs)
	}
	var js struct {
		Drift *results.Drift `json:"drift"`
	}
	if err := json.Unmarshal([]byte(text), &js); err != nil || js.Drift == nil {
		t.Fatalf("drift: %v\n%s", err, text)
	}
	return js.Drift
}

// Against the simulator: a route whose latency rises in a straight line
// drifts, one that steps up once changes level where it stepped, one with
// a heavy tail and a flat level stays steady. The rise and the step are
// tens of milliseconds, more than a saturated host makes the generator
// wait for a core (20 tasks runnable on 2 cores, 15 ms), and each route
// has VUs of its own, so that the slower routes do not thin the flat
// one's intervals.
func TestLongevityAgainstTheSimulator(t *testing.T) {
	cfg, err := sim.Parse([]byte(`listen: 127.0.0.1:0
routes:
  - {path: /rise, latency: {fixed: 2ms}, degrade: {after: 0s, over: 8s, latency: {fixed: 82ms}}}
  - {path: /step, latency: {fixed: 2ms}, degrade: {after: 2500ms, latency: {fixed: 62ms}}}
  - {path: /flat, latency: {lognormal: {p50: 2ms, p99: 8ms}}}
`), "stubs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := t.TempDir()
	// 8 s: on a busy machine whose noise carries over from one interval
	// to the next, the 6 s run's blocks of about independent intervals
	// were too few for the step to be significant.
	plan := writePlan(t, "target: "+srv.URL()+"\ninterval: 100ms\nscenarios:\n"+
		"  - {name: r, vus: 2, duration: 8s, flow: [{name: rise, url: /rise}]}\n"+
		"  - {name: s, vus: 2, duration: 8s, flow: [{name: step, url: /step}]}\n"+
		"  - {name: f, vus: 2, duration: 8s, flow: [{name: flat, url: /flat}]}\n")
	if code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	// What the generator measures moves with its machine's load (the
	// other packages' tests beside this one): a change counts from 50%
	// here, which the rise and the step pass many times over and a busy
	// machine's swings of a 2 ms route do not.
	d := driftOf(t, out, "--min-effect", "0.5")
	if !d.Degraded {
		t.Errorf("verdict: %s", d.Verdict)
	}
	rise := runtest.DriftSeries(t, d, "p95 of rise")
	// It rose from the simulator's start, a moment before the run's (more
	// on a loaded machine): from 2 ms plus that much, by 10 ms a second.
	if rise.Verdict != results.DriftDegraded || rise.End < 1.8*rise.Start || rise.End-rise.Start < 40 || !strings.Contains(rise.Sentence, "p95 of rise rose") {
		t.Errorf("rise: %s", rise.Sentence)
	}
	step := runtest.DriftSeries(t, d, "p95 of step")
	// The route stepped 2.5 s after the simulator started, before the run,
	// by 60 ms: the level rises by about that much over what the generator
	// measured before (2 ms and more on a slow or busy machine, 4 ms under
	// -race). A change is placed to within a block of about independent
	// intervals: one here, several (each 100 ms) where a busy machine's
	// noise carries over from one interval to the next.
	want := started.Add(2500 * time.Millisecond).Sub(readSummary(t, out).Stages[0].Start).Seconds()
	if c := step.Change; step.Verdict != results.DriftDegraded || c == nil || !step.Significant || math.Abs(c.AtS-want) > 1 || c.After-c.Before < 45 {
		t.Errorf("step (want a change at %.1f s): %s (%+v; variance correction %.2f)\n%v", want, step.Sentence, c, step.Trend.Correction, step.Points)
	}
	if flat := runtest.DriftSeries(t, d, "p95 of flat"); flat.Verdict == results.DriftDegraded || flat.Verdict == results.DriftImproved {
		t.Errorf("flat: %s", flat.Sentence)
	}
}

// Throughput that falls while each request's latency stays flat: a third
// of the requests hang after a second, the VUs wait for their timeout, and
// the successful ones are as fast as before. The throughput and the error
// ratio degrade; the latency does not. The server takes 10 ms: as the
// VUs come to wait on hung requests the machine gets quieter, and with
// one core kept busy and other tests beside it, a 2 ms request measured
// 5.3 ms before and 2.5 ms after (a fall of 52%, beyond the 50% judged);
// a tenth of 10 ms moves it by a tenth.
func TestLongevityThroughputFallsLatencyFlat(t *testing.T) {
	var first, n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		if time.Duration(now-first.Load()) > time.Second && n.Add(1)%3 == 0 {
			select { // hangs, past the plan's timeout
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nhttp: {timeout: 250ms}\nscenarios: [{name: s, vus: 4, duration: 4s, flow: [{name: get, url: /items}]}]\n")
	if code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	// A change counts from 50%, as against the simulator: a busy machine
	// moves what the generator measures of a short request.
	d := driftOf(t, out, "--min-effect", "0.5")
	tp := runtest.DriftSeries(t, d, "throughput")
	if tp.Verdict != results.DriftDegraded || !strings.HasPrefix(tp.Sentence, "throughput fell") || tp.End > tp.Start/5 {
		t.Errorf("throughput: %s", tp.Sentence)
	}
	if e := runtest.DriftSeries(t, d, "error ratio"); e.Verdict != results.DriftDegraded {
		t.Errorf("errors: %s", e.Sentence)
	}
	for _, name := range []string{"mean of get", "p95 of get"} {
		if s := runtest.DriftSeries(t, d, name); s.Verdict == results.DriftDegraded || s.Verdict == results.DriftImproved {
			t.Errorf("%s: %s", name, s.Sentence)
		}
	}
}

// growEnv makes the test binary a process whose memory grows by growRate
// a second (see TestMain), for the monitor to watch.
const (
	growEnv  = "PERFLAB_TEST_GROW"
	growRate = 40 << 20
)

// grow is the test binary as that process: it keeps its resident memory
// growRate a second above where it started, by the clock (a late wake-up
// catches up), for at most 20 s. It counts its resident memory as the
// kernel does (what a megabyte costs differs: under -race, the race
// detector's shadow memory doubles it).
func grow() {
	start := time.Now()
	base := residentBytes()
	var held [][]byte
	for time.Since(start) < 20*time.Second {
		want := int64(time.Since(start).Seconds() * growRate)
		for residentBytes()-base < want {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1 // resident: every page touched
			}
			held = append(held, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stepEnv makes the test binary a process whose memory steps up by 200 MB
// after the duration it gives (see TestMain), and stays there.
const stepEnv = "PERFLAB_TEST_STEP"

// stepFromEnv names a file whose appearance starts stepEnv's wait.
const stepFromEnv = "PERFLAB_TEST_STEP_FROM"

// stepUp is the test binary as that process: after d it touches 200 MB
// at once, and holds them for 20 s. It says "ready" on its standard
// output once it is running.
func stepUp(d time.Duration) {
	fmt.Println("ready")
	// From the run's first request (the file the test's server writes
	// then, when it names one), not from this process's start: a busy
	// machine starts the run seconds after it.
	if f := os.Getenv(stepFromEnv); f != "" {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(f); err == nil {
				break
			}
		}
	}
	time.Sleep(d)
	held := make([]byte, 200<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	time.Sleep(20 * time.Second)
	held[0] = 2
}

// residentBytes is this process's resident memory (/proc/self/statm).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// A process whose memory grows at a known rate: its memory series
// degrades, by about the rate over the run; a rate per hour and a leak
// verdict need ten minutes, so the resources table says the run is too
// short to judge.
func TestLongevityMemoryGrows(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^$")
	child.Env = append(os.Environ(), growEnv+"=1")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Millisecond) }))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: s, vus: 1, duration: 3s, flow: [{name: get, url: /}]}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet", "--monitor", fmt.Sprintf("process:name=grower,pid=%d", child.Process.Pid))
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	d := driftOf(t, out)
	mem := runtest.DriftSeries(t, d, "memory of grower (rss)")
	// The levels are the medians of the first and last tenth (3 of 30
	// intervals): 2.7 s of growth apart, 108 MB at 40 MB/s.
	grew := mem.End - mem.Start
	if mem.Verdict != results.DriftDegraded || grew < 70 || grew > 140 || mem.Trend.SlopePerHour != nil {
		t.Errorf("memory grew %.1f MB (want about 108): %s", grew, mem.Sentence)
	}
	// One series, one verdict: the resources table says the drift's (no
	// rate per hour from 3 s, but the leak the drift found).
	if !regexp.MustCompile(`grower +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ \(rss\) +[\d.]+ +- +SUSPECTED \(drift: degraded\)`).MatchString(stdout) {
		t.Errorf("the resources table and the drift disagree:\n%s", stdout)
	}
	for _, w := range readSummary(t, out).Resources.Windows {
		for _, m := range w.Monitors {
			if m.Monitor == "grower" && (len(m.Memory) == 0 || !m.Memory[0].TooShort || !m.Memory[0].LeakSuspected || m.Memory[0].Drift != results.DriftDegraded) {
				t.Errorf("grower's memory: %+v", m.Memory)
			}
		}
	}
	if d.Tests != len(d.Series) || !strings.Contains(d.Method, fmt.Sprintf("%d series under Holm's correction", d.Tests)) || judge.MinDriftValues != 12 {
		t.Errorf("method: %s", d.Method)
	}
}

// A flat route while another process takes every core of the generator's
// host for the second half of the run: the system is not called degraded
// (what moved is the generator's, and its health says so), and the
// generator's own series are judged apart, from what its host monitor
// measured: other processes' CPU, the loopback round trip, perflab's
// memory. Whether the burner shows as a rise depends on how busy the
// machine already was (the other packages' tests): the test holds the
// verdict to what it must be either way.
func TestLongevityBusyGenerator(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: s, vus: 2, duration: 6s, flow: [{name: b, url: /b}, {name: d, url: /d}]}]\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(3 * time.Second)
		var burners []*exec.Cmd
		for range 2 {
			c := exec.Command("sh", "-c", "while :; do :; done")
			if c.Start() == nil {
				burners = append(burners, c)
			}
		}
		time.Sleep(4 * time.Second)
		for _, c := range burners {
			c.Process.Kill()
			c.Wait()
		}
	}()
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet")
	<-done
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	d := driftOf(t, out)
	for _, s := range d.Series {
		if s.Verdict == results.DriftDegraded {
			t.Errorf("the system called degraded while the generator's host was busy: %s\n%s", s.Sentence, d.Verdict)
		}
		if s.Verdict == results.DriftSuspect && !strings.Contains(s.Sentence, "generator's host") {
			t.Errorf("suspect without the generator named: %s", s.Sentence)
		}
	}
	if d.Generator == nil {
		t.Fatalf("no generator health: %+v", d)
	}
	names := map[string]results.DriftSeries{}
	for _, s := range d.Generator.Series {
		names[s.Name] = s
	}
	for _, n := range []string{"other processes' CPU on generator's host", "loopback round trip p90 of generator's host", "memory of perflab (rss)", "CPU of perflab"} {
		if s, ok := names[n]; !ok || s.Values < judge.MinDriftValues {
			t.Errorf("generator series %q: %+v", n, s)
		}
	}
	if f := d.Floors[readSummary(t, out).Stages[0].Name]; f <= 0 || f > 50 {
		t.Errorf("the floor (loopback round trip p90) %g ms", f)
	}
	t.Logf("%s\nthe generator: %s\nfloor %v ms", d.Verdict, d.Generator.Verdict, d.Floors)
}

// A system whose memory steps up past the first third of the run (an
// earlier step and then level would be a warm-up), and whose latency rises
// three seconds later (time enough for a busy machine to touch 200 MB): the
// drift's hint lines them up in that order ("at 3.9 s memory of api (rss)
// +…%, then p95 of get +…% at 6.9 s"), from what the monitor and the
// generator measured. The run starts once the process is running: on a
// busy machine the test binary it is took seconds to start, and its
// memory stepped at 7.9 s, after the latency.
func TestLongevityHintInOrder(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(self, "-test.run=^$")
	// Both the step and the slowdown count from the run's first request.
	first := filepath.Join(t.TempDir(), "first-request")
	child.Env = append(os.Environ(), stepEnv+"=4s", stepFromEnv+"="+first)
	ready, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	if line, err := bufio.NewReader(ready).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the process whose memory steps up: %q, %v", line, err)
	}
	var began atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if began.CompareAndSwap(0, time.Now().UnixNano()) {
			os.WriteFile(first, nil, 0o644)
		}
		// 1 ms, then 60 ms: more than a saturated host makes the
		// generator wait for a core (at 10 ms, a busy machine's noise
		// left the slowdown not significant, and out of the hint).
		if time.Since(time.Unix(0, began.Load())) > 7*time.Second {
			time.Sleep(60 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
	}))
	defer srv.Close()
	out := t.TempDir()
	plan := writePlan(t, "target: "+srv.URL+"\ninterval: 100ms\nscenarios: [{name: s, vus: 2, duration: 10s, flow: [{name: get, url: /}]}]\n")
	code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet", "--monitor", fmt.Sprintf("process:name=api,pid=%d", child.Process.Pid))
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	d := driftOf(t, out)
	mem, lat := strings.Index(d.Hint, "memory of api (rss) +"), strings.Index(d.Hint, "of get +")
	if !d.Degraded || mem < 0 || lat < mem {
		t.Errorf("hint: %s\nverdict: %s\ntimeline: %+v", d.Hint, d.Verdict, d.Timeline)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "summary.json"))
	if len(dirs) != 1 {
		t.Fatalf("runs: %q", dirs)
	}
	code, drift, _ := runCLI(t, "drift", filepath.Dir(dirs[0]))
	if code != exitOK || !strings.Contains(drift, "what changed, in order: ") || !strings.Contains(drift, "memory of api (rss) +") {
		t.Errorf("perflab drift: %d\n%s", code, drift)
	}
}
