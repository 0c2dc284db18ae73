// Package runtest is the tests' runs of known values, shared by the
// packages that read, judge and render runs: a closed-model run and an
// open-model run of exact figures, a 24-hour run for benchmarks, a real
// run directory as the fuzz targets' seed, and golden files.
package runtest

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Update tells whether the tests run with -update: golden files are
// rewritten, not compared.
func Update() bool { return *update }

// Golden compares got with testdata/NAME of the package under test, or
// with -update rewrites it.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update in this package writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update in this package rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// T0 is when the runs here start.
var T0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// Host is the load generator of the runs here.
var Host = results.Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUs: 2, Go: "go1.26", Perflab: "test"}

// Fixture is a run with known values: 1..100 ms for the step, two errors.
func Fixture() *metrics.Run {
	ops := []metrics.Op{
		{Name: "CREATE ANCHOR", Kind: metrics.KindStep, Scenario: "flow", Transaction: "tx"},
		{Name: "tx", Kind: metrics.KindTransaction, Scenario: "flow"},
		{Name: "flow", Kind: metrics.KindScenario, Scenario: "flow"},
	}
	totals := []*metrics.Stats{metrics.NewStats(), metrics.NewStats(), metrics.NewStats()}
	for i := 1; i <= 100; i++ {
		d := time.Duration(i) * time.Millisecond
		totals[0].Add(d, d, metrics.OK, 512)
		totals[1].Add(d+time.Millisecond, d+time.Millisecond, metrics.OK, 0)
		totals[2].Add(d+2*time.Millisecond, d+2*time.Millisecond, metrics.OK, 0)
	}
	totals[0].AddResult(3*time.Second, 3*time.Second, metrics.Timeout, 0, "timeout")
	totals[0].AddResult(time.Millisecond/2, time.Millisecond/2, metrics.HTTP5xx, 0, "status 503")
	ph := &metrics.Phase{
		Index: 1, Name: "vus=2", Values: []metrics.KV{{Name: "vus", Value: "2"}},
		Start: T0, End: T0.Add(10 * time.Second), Ops: ops, Totals: totals,
		Load: []metrics.Load{{Scenario: "flow", VUs: 2, Iterations: 51, Model: "2 VUs x 51 iterations"}},
	}
	return &metrics.Run{
		ID: "r1", PlanName: "demo", PlanFile: "plan.yaml", PlanSource: []byte("name: demo\n"),
		Vars: []metrics.Var{{Name: "vus", Values: []string{"2"}, Swept: true}, {Name: "ds", Values: []string{"perf"}}}, Interval: 10 * time.Second,
		Start: T0, End: T0.Add(11 * time.Second), Status: metrics.StatusCompleted,
		Stages: []*metrics.Phase{ph},
	}
}

// OpenRun is a stage of an open model: 100 iterations whose first request
// took 1 ms of service time after a start delay of i × 20 µs (i = 1..100:
// p50 1 ms, p99 1.98 ms), 3 dropped and 5 queued.
func OpenRun() *metrics.Run {
	ops := []metrics.Op{{Name: "GET /", Kind: metrics.KindStep, Scenario: "s"}, {Name: "s", Kind: metrics.KindScenario, Scenario: "s"}}
	totals := []*metrics.Stats{metrics.NewOpenStats(), metrics.NewOpenStats()}
	for i := 1; i <= 100; i++ {
		delay := time.Duration(i) * 20 * time.Microsecond
		for _, st := range totals {
			st.Add(delay+time.Millisecond, time.Millisecond, metrics.OK, 0)
		}
	}
	totals[1].Dropped, totals[1].Queued = 3, 5
	ph := &metrics.Phase{Index: 1, Name: "rate=100", Start: T0, End: T0.Add(time.Second), Ops: ops, Totals: totals,
		Load: []metrics.Load{{Scenario: "s", VUs: 2, Open: true, Rate: 100, MaxVUs: 2}}}
	return &metrics.Run{ID: "open", PlanName: "open", Start: T0, End: T0.Add(time.Second), Status: metrics.StatusCompleted, Stages: []*metrics.Phase{ph}}
}

// LongRun is a 24-hour run at 10 s intervals with ops operations, whose
// latency more than doubles after its first two hours: the shape of the
// check-in/check-out report's longevity test. It has its exact totals, as
// a run that finished has.
func LongRun(b *testing.B, ops int) *results.Run {
	b.Helper()
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	const intervals = 8640
	ph := results.PhaseSummary{Index: 1, Name: "users=20", Start: t0, End: t0.Add(24 * time.Hour), Duration: 86400}
	rd := &results.Run{Summary: &results.Summary{Format: results.Format, RunID: "long", Stages: []results.PhaseSummary{ph}}, Intervals: map[string][]*results.IntervalData{}}
	r := rand.New(rand.NewPCG(1, 2))
	h := metrics.NewHistogram()
	totals := &metrics.Phase{Index: 1, Name: ph.Name, Start: ph.Start, End: ph.End}
	rd.Totals = &results.Totals{Stages: []*metrics.Phase{totals}}
	for o := 0; o < ops; o++ {
		name := fmt.Sprintf("API %02d", o)
		rd.Summary.Stages[0].Operations = append(rd.Summary.Stages[0].Operations, results.Operation{Name: name, Kind: metrics.KindStep, Scenario: "circ"})
		tag := results.Tag("s1", metrics.Op{Scenario: "circ", Name: name})
		total := metrics.NewStats()
		totals.Ops, totals.Totals = append(totals.Ops, metrics.Op{Scenario: "circ", Name: name, Kind: metrics.KindStep}), append(totals.Totals, total)
		for i := 0; i < intervals; i++ {
			h.Reset()
			level := 2000.0
			if i > 720 {
				level = 4600
			}
			for k := 0; k < 200; k++ { // 20 users x 10 s at ~1 request/s
				us := int64(level * (0.5 + r.Float64()))
				h.RecordValue(us)
				total.Add(time.Duration(us)*time.Microsecond, time.Duration(us)*time.Microsecond, metrics.OK, 0)
			}
			enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
			start := t0.Add(time.Duration(i) * 10 * time.Second).UnixMilli()
			rd.Intervals[tag] = append(rd.Intervals[tag], results.NewIntervalData(start, start+10000, h.TotalCount(), 0, string(enc)))
		}
	}
	return rd
}

// SeedRunDir is a real run directory, of the demo (perflab demo --label
// release=fuzz-seed), as the fuzz targets' seed: its summary.json,
// latency.hlog, intervals.csv and resources.csv.
func SeedRunDir(f *testing.F) (summary, hlog, intervals, resources []byte) {
	f.Helper()
	_, file, _, _ := runtime.Caller(0)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "testdata", "rundir", name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	return read("summary.json"), read("latency.hlog"), read(results.IntervalsCSV), read("resources.csv")
}

// WriteTree writes files under dir, each by its path there with '/'
// between names, making the directories they are in: a plan and the
// files it includes or reads.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, src := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// IncludingPlanFile is the plan of IncludingPlan, by its path there.
const IncludingPlanFile = "tests/checkout/plan.yaml"

// IncludingPlan is a plan whose fragments come from files it includes,
// by their paths (WriteTree): one in a directory of its own
// (common/login.yaml), which includes one in another (more/logout.yaml),
// and one above the plan's directory (../team/auth.yaml), which
// includes one below it (deep/token.yaml). Its one VU requests /login,
// /auth, /token and /logout of target, iterations times.
func IncludingPlan(target string, iterations int) map[string]string {
	return map[string]string{
		IncludingPlanFile: fmt.Sprintf(`name: checkout
target: %s
include: [common/login.yaml, ../team/auth.yaml]
scenarios:
  - {name: s, vus: 1, iterations: %d, flow: [{use: login}, {use: auth}, {use: token}, {use: logout}]}
`, target, iterations),
		"tests/checkout/common/login.yaml": "include: [../more/logout.yaml]\nfragments: {login: [{name: login, url: /login}]}\n",
		"tests/checkout/more/logout.yaml":  "fragments: {logout: [{name: logout, url: /logout}]}\n",
		"tests/team/auth.yaml":             "include: [deep/token.yaml]\nfragments: {auth: [{name: auth, url: /auth}]}\n",
		"tests/team/deep/token.yaml":       "fragments: {token: [{name: token, url: /token}]}\n",
	}
}

// WriteFiles lays the files of a run directory in dir (one directory for
// all the inputs of a fuzz process: a new one each time is slower).
func WriteFiles(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteRunDir writes run as a run directory in a new temporary directory,
// each phase's totals as its one interval, and returns the directory.
func WriteRunDir(t testing.TB, run *metrics.Run) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), run.ID)
	w, err := results.CreateDir(dir, run.ID, run.PlanName, run.Start, run.PlanSource, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range run.Stages {
		if err := w.Sink(ph).Interval(&metrics.Interval{Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(results.Summarize(run, Host), run); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BusyGenerator is what the monitors saw of a load generator saturated in
// the stage named window: perflab's process used 0.95 of a core, its host
// was 50% busy.
func BusyGenerator(window string) *monitor.Analysis {
	return &monitor.Analysis{Windows: []monitor.WindowFigures{{Window: window, Monitors: []monitor.MonitorFigures{
		{Monitor: results.SelfMonitor, CPU: &monitor.CPUFigures{Cores: 0.95}},
		{Monitor: results.GeneratorMonitor, Host: &monitor.HostFigures{BusyAvg: 0.5}},
	}}}}
}

// DriftSeries is the series of a drift verdict by its name, failing the
// test without it.
func DriftSeries(t testing.TB, d *results.Drift, name string) results.DriftSeries {
	t.Helper()
	for _, s := range d.Series {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no series %q in %+v", name, d.Series)
	return results.DriftSeries{}
}
