package results_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

func TestSummaryJSONGolden(t *testing.T) {
	var b bytes.Buffer
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	runtest.Golden(t, "summary.json", b.Bytes())
	// Figures a reader relies on.
	op := s.Stages[0].Operations[0]
	if op.Count != 102 || op.Errors.Total != 2 || op.Latency.Min != 1 || op.Latency.Max != 100 || op.Latency.Mean != 50.5 {
		t.Errorf("operation figures: %+v", op)
	}
	if op.RPS != 10.2 {
		t.Errorf("rps %v, want 10.2 (102 in 10s)", op.RPS)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back["format"] != results.Format {
		t.Errorf("summary.json does not round-trip: %v", err)
	}
}

func TestSummaryLine(t *testing.T) {
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	// Requests are the steps only: 102 in 10 s; mean over all 102 requests,
	// failed included: (5050 + 3000 + 0.5) / 102 = 78.93 ms.
	want := "summary = 102 in 00:00:10 = 10.2/s Avg: 79 Min: 1 Max: 3000 Err: 2 (1.96%)"
	if s.Total.Line != want {
		t.Errorf("got  %s\nwant %s", s.Total.Line, want)
	}
	// The JMeter summary line of the XACML PDP report's 72-hour stability run.
	line := results.SummaryLine(results.Total{Requests: 222450112, Errors: 17, Duration: 72*3600 + 39, RPS: 858.1, Mean: 5, Min: 1, Max: 946942})
	if line != "summary = 222450112 in 72:00:39 = 858.1/s Avg: 5 Min: 1 Max: 946942 Err: 17 (0.00%)" {
		t.Errorf("stability run's summary line: %s", line)
	}
}

// The interval log is readable by HdrHistogram's own reader and holds
// exactly the histograms recorded.
func TestRunDirLogRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	// A start that is not a whole second: readers must still place
	// intervals at the right milliseconds.
	t0 := runtest.T0.Add(437 * time.Millisecond)
	rd, err := results.CreateDir(dir, "x-run", "x", t0, []byte("name: x\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := runtest.Fixture()
	ph := run.Stages[0]
	sink := rd.Sink(ph)
	var want []*hdr.Histogram
	for i := 0; i < 3; i++ {
		// The scenario's VUs: 2, 5, then 3 busy in iterations none of
		// which ended in the interval (a row of its own all the same).
		iv := &metrics.Interval{Index: i, Start: t0.Add(time.Duration(i) * 10 * time.Second), End: t0.Add(time.Duration(i+1) * 10 * time.Second),
			PeakVUs: map[string]int64{"flow": []int64{2, 5, 3}[i]}}
		for range ph.Ops {
			iv.Ops = append(iv.Ops, metrics.NewStats())
		}
		for v := 1; v <= 50*(i+1); v++ {
			iv.Ops[0].Add(time.Duration(v)*time.Millisecond, time.Duration(v)*time.Millisecond, metrics.OK, 0)
		}
		want = append(want, iv.Ops[0].Hist.Clone())
		if err := sink.Interval(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := rd.Finish(results.Summarize(run, runtest.Host), run); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(filepath.Join(dir, "latency.hlog"))
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	for i := 0; ; i++ {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			if i != 3 {
				t.Fatalf("read %d histograms, wrote 3", i)
			}
			break
		}
		if h.Tag() == "s1/flow/flow/.scenario" && h.TotalCount() == 0 {
			i-- // the scenario's row of its VUs, with no iteration ended
			continue
		}
		if h.Tag() != "s1/flow/CREATE_ANCHOR" {
			t.Errorf("tag %q", h.Tag())
		}
		if h.TotalCount() != want[i].TotalCount() || h.ValueAtQuantile(99) != want[i].ValueAtQuantile(99) || h.Max() != want[i].Max() {
			t.Errorf("interval %d: read back %d values, p99 %d; wrote %d, %d", i, h.TotalCount(), h.ValueAtQuantile(99), want[i].TotalCount(), want[i].ValueAtQuantile(99))
		}
		if h.StartTimeMs()-t0.UnixMilli() != int64(i)*10000 {
			t.Errorf("interval %d starts at +%d ms", i, h.StartTimeMs()-t0.UnixMilli())
		}
	}
	for _, name := range []string{"summary.json", results.ManifestFile, "plan.yaml"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || len(b) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	back, err := results.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var vus []int64
	for _, d := range back.IntervalsOf(1, results.Operation{Name: "flow", Kind: metrics.KindScenario, Scenario: "flow"}) {
		vus = append(vus, d.PeakVUs)
	}
	if fmt.Sprint(vus) != "[2 5 3]" {
		t.Errorf("the scenario's VUs read back from intervals.csv: %v, wrote [2 5 3]", vus)
	}
	for _, d := range back.IntervalsOf(1, results.Operation{Name: "CREATE_ANCHOR", Kind: metrics.KindStep, Scenario: "flow"}) {
		if d.PeakVUs != -1 {
			t.Errorf("a step's row has VUs %d, want none (-1)", d.PeakVUs)
		}
	}
}

// Run directories written before tags carried the kind keep their
// transactions' intervals under the bare name.
func TestIntervalsOfLegacyTags(t *testing.T) {
	iv := []*results.IntervalData{results.NewIntervalData(0, 1000, 1, 0, "")}
	tx := results.Operation{Name: "checkout", Kind: metrics.KindTransaction, Scenario: "s"}
	rd := &results.Run{Summary: &results.Summary{Stages: []results.PhaseSummary{{Index: 1, Operations: []results.Operation{tx}}}},
		Intervals: map[string][]*results.IntervalData{"s1/s/checkout": iv}}
	if got := rd.IntervalsOf(1, tx); len(got) != 1 {
		t.Errorf("legacy transaction tag not found")
	}
	// When a step has the bare name, the bare tag is the step's.
	rd.Summary.Stages[0].Operations = append(rd.Summary.Stages[0].Operations, results.Operation{Name: "checkout", Kind: metrics.KindStep, Scenario: "s"})
	if got := rd.IntervalsOf(1, tx); got != nil {
		t.Errorf("the step's intervals given to the transaction")
	}
	rd.Intervals["s1/s/checkout/.transaction"] = iv
	if got := rd.IntervalsOf(1, tx); len(got) != 1 {
		t.Errorf("current transaction tag not found")
	}
}

// A sweep whose best throughput is at its largest VU count never saturated,
// and says so instead of naming that count as the saturation point.
func TestScalingSentence(t *testing.T) {
	pts := []results.ScalingPoint{{VUs: 1}, {VUs: 2}, {VUs: 4}}
	if got := (&results.Scaling{Points: pts, SaturationVUs: 2, Tolerance: 0.05}).Sentence(); got != "throughput stops increasing at 2 VUs (the fewest within 5% of the best)" {
		t.Error(got)
	}
	if got := (&results.Scaling{Points: pts, SaturationVUs: 4, Tolerance: 0.05}).Sentence(); got != "throughput was still increasing at 4 VUs, the most tried: no saturation within the sweep" {
		t.Error(got)
	}
}

// A run that never finished is rebuilt from its stored intervals with its
// open model's service time and start delay, and a run directory keeps
// them through import into the history and export back.
func TestOpenModelDurationsThroughTheHistory(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := runtest.OpenRun()
	ph := run.Stages[0]
	if err := st.Begin("killed", "open", []byte("name: open\n"), run.Start, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Interval("killed", ph, &metrics.Interval{Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
		t.Fatal(err)
	}
	rd, err := results.FromStore(st, "killed")
	if err != nil {
		t.Fatal(err)
	}
	op := rd.Summary.Stages[0].Operations[1]
	if d, s := op.StartDelay, op.ServiceTime; d == nil || s == nil || d.P50 != 1 || d.Max != 2 || s.P99 != 1 {
		t.Fatalf("rebuilt from the history: start delay %+v, service time %+v", d, s)
	}
	tag := results.StageTag(1, "s", "s", metrics.KindScenario)
	for _, suffix := range []string{results.ServiceTimeTag, results.StartDelayTag} {
		if ivs := rd.Intervals[tag+suffix]; len(ivs) != 1 {
			t.Errorf("%s: %d intervals read from the history, want 1", tag+suffix, len(ivs))
		}
	}

	// A run directory, into the history and out again.
	dir := runtest.WriteRunDir(t, run)
	if _, err := results.Import(st, dir, nil); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "back")
	if _, err := results.Export(st, "open", out); err != nil {
		t.Fatal(err)
	}
	orig, err1 := results.ReadDir(dir)
	back, err2 := results.ReadDir(out)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for _, suffix := range []string{"", results.ServiceTimeTag, results.StartDelayTag} {
		a, b := orig.Intervals[tag+suffix], back.Intervals[tag+suffix]
		if len(a) != 1 || len(b) != 1 || a[0].Encoded() != b[0].Encoded() {
			t.Errorf("%s: %d intervals written, %d after import and export, or they differ", tag+suffix, len(a), len(b))
		}
	}
}

// A run's id is its start and its plan's name made safe for a directory:
// Latin letters with accents lose them, ligatures and full-width letters
// are the letters they stand for, and a name whose letters are of
// another script (or that has none) gets a short hash of it, the first
// 8 hex digits of its SHA-256: never an empty name, and two names of
// another script are two ids.
func TestRunIDBaseNames(t *testing.T) {
	start := time.Date(2026, 11, 26, 3, 46, 13, 311e6, time.UTC)
	long := strings.Repeat("Ж", 30) + strings.Repeat("a", 120)
	for name, want := range map[string]string{
		"checkout":               "checkout",
		"shop / checkout!":       "shop-checkout",
		"Café Crème — ß":         "Cafe-Creme-ss",
		"Łódź Æsir ø":            "Lodz-AEsir-o",
		"Ｆｕｌｌ ｗｉｄｔｈ ﬁle":         "Full-width-file",
		"Заказ":                  "3648b2d2",
		"Оплата":                 "1d0f59fc",
		"Заказ v2":               "v2-290a6b26",
		"注文":                     "266125dd",
		"🚀":                      "ebbc0b28",
		"!!!":                    "e84c538e",
		"":                       "run",
		long:                     strings.Repeat("a", 91) + "-" + fmt.Sprintf("%x", sha256.Sum256([]byte(long)))[:8],
		strings.Repeat("b", 150): strings.Repeat("b", 100),
	} {
		id := results.RunIDBase(start, name)
		if want = "20261126-034613.311-" + want; id != want {
			t.Errorf("%q: %q, want %q", name, id, want)
		}
		if err := results.CheckRunID(id); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
