package lab

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

const flakyPlan = `name: flaky
target: TARGET
interval: 100ms
scenarios:
  - {name: s, vus: 4, total_iterations: 200, flow: [{name: flaky, url: /f}]}
thresholds:
  - "flaky: min < 20ms"
  - "flaky: min(ko) < 20ms"
  - "flaky: min(ko) >= 20ms"
  - "flaky: min(all) >= 20ms"
`

// A run's failed operations are timed wherever its successful ones are:
// the tables give a KO row with their count and times, summary.json its
// failed_latency_ms with percentiles, intervals.csv and latency.hlog each
// interval's, the history the same histograms; the thresholds judge the
// times they name.
func TestFailedTimesInARun(t *testing.T) {
	srv := runtest.NewFlaky()
	defer srv.Close()
	ok, ko := &srv.OK, &srv.KO
	dir := t.TempDir()
	p := loadFlakyPlan(t, dir, srv.URL)
	var stdout bytes.Buffer
	res, err := Run(context.Background(), p, Config{Out: filepath.Join(dir, "runs"), Progress: "none", Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	fl := findOp(t, res.Summary, "flaky")
	if fl.Count != 200 || fl.Count != ok.Load()+ko.Load() || fl.Errors.Total != ko.Load() {
		t.Fatalf("perflab %d requests, %d failed; the server %d, %d of them 500", fl.Count, fl.Errors.Total, ok.Load()+ko.Load(), ko.Load())
	}
	checkKO(t, "summary", fl)

	// The tables: the KO row under the operation, its count and median.
	table := stdout.String()
	koRow := ""
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "KO" && koRow == "" {
			koRow = l
		}
	}
	if f := strings.Fields(koRow); len(f) < 5 || f[1] != strconv.FormatInt(fl.KOCount(), 10) || f[4] != results.Ms(fl.Failed.P50) {
		t.Errorf("no KO row of %d failures, median %s, in the table:\n%s", fl.KOCount(), results.Ms(fl.Failed.P50), table)
	}
	// The thresholds, of the times they name: the successes' from 2 ms,
	// the failures' from 20 ms (none faster), all of them from 2 ms.
	want := map[string]struct {
		actual float64
		pass   bool
	}{"flaky: min < 20ms": {fl.Latency.Min, true}, "flaky: min(ko) < 20ms": {fl.Failed.Min, false}, "flaky: min(ko) >= 20ms": {fl.Failed.Min, true}, "flaky: min(all) >= 20ms": {fl.Latency.Min, false}}
	for _, r := range res.Summary.Thresholds {
		if w := want[r.Threshold]; r.Operation == "flaky" && (r.Pass != w.pass || r.Actual != w.actual) {
			t.Errorf("%s: %+v, want actual %.3f, pass %v", r.Threshold, r, w.actual, w.pass)
		}
	}
	if res.Outcome != ThresholdsFailed {
		t.Errorf("outcome %v: the KO threshold should fail the run", res.Outcome)
	}

	// summary.json as written.
	b, err := os.ReadFile(filepath.Join(res.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stages []struct {
			Operations []struct {
				Name   string            `json:"name"`
				Failed metrics.KOSummary `json:"failed_latency_ms"`
			} `json:"operations"`
		} `json:"stages"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, o := range doc.Stages[0].Operations {
		if o.Name == "flaky" && o.Failed != *fl.Failed {
			t.Errorf("summary.json failed_latency_ms %+v, want %+v", o.Failed, *fl.Failed)
		}
	}

	// intervals.csv: the intervals' KO counts add up to the run's.
	rows := readCSVFile(t, filepath.Join(res.Dir, results.IntervalsCSV))
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var koSum int64
	for _, r := range rows[1:] {
		if r[col["operation"]] == "flaky" {
			n, _ := strconv.ParseInt(r[col["ko_count"]], 10, 64)
			koSum += n
			if p50, _ := strconv.ParseFloat(r[col["ko_p50_ms"]], 64); n > 0 && p50 < 20 {
				t.Errorf("an interval's KO p50 %.3f ms, below the server's 20", p50)
			}
		}
	}
	if koSum != fl.Failed.Count {
		t.Errorf("intervals.csv KO counts add up to %d, the run's %d", koSum, fl.Failed.Count)
	}

	// Read back from its directory, and from the history: the same.
	rd, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := findOp(t, rd.Summary, "flaky"); *got.Failed != *fl.Failed || intervalsKO(t, rd, "flaky") != fl.Failed.Count {
		t.Errorf("read back: %+v, intervals %d; want %+v", got.Failed, intervalsKO(t, rd, "flaky"), fl.Failed)
	}
	st, err := store.Open(filepath.Join(dir, "runs", "perflab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, err := results.FromStore(st, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if n := intervalsKO(t, hist, "flaky"); n != fl.Failed.Count {
		t.Errorf("the history's intervals hold %d failures, the run %d", n, fl.Failed.Count)
	}

	// Killed before its summary: the failures' figures are rebuilt from
	// the intervals.
	for _, f := range []string{"summary.json", results.TotalsFile} {
		if err := os.Remove(filepath.Join(res.Dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	killed, err := results.ReadDir(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if k := findOp(t, killed.Summary, "flaky").Failed; k == nil || k.Count != fl.Failed.Count || k.P50 < 20 {
		t.Errorf("rebuilt from the intervals: %+v, want %d failures from 20 ms", k, fl.Failed.Count)
	}
}

// A distributed run's failures are its workers': each worker's KO
// histogram adds into the merged run's, exactly.
func TestFailedTimesMergeAcrossWorkers(t *testing.T) {
	srv := runtest.NewFlaky()
	defer srv.Close()
	ok, ko := &srv.OK, &srv.KO
	merged := runWorkers(t, t.TempDir(), strings.ReplaceAll(flakyPlan, "TARGET", srv.URL), "flaky-1", 2)
	fl := findOp(t, merged.Summary, "flaky")
	if fl.Count != 200 || fl.Errors.Total != ko.Load() || fl.Count != ok.Load()+ko.Load() {
		t.Fatalf("merged: %d failed of %d; the server %d of %d", fl.Errors.Total, fl.Count, ko.Load(), ok.Load()+ko.Load())
	}
	checkKO(t, "merged", fl)
	var parts int64
	for _, w := range merged.Summary.Workers {
		rd, err := results.ReadDir(filepath.Join(filepath.Dir(merged.Dir), w.Part))
		if err != nil {
			t.Fatal(err)
		}
		parts += findOp(t, rd.Summary, "flaky").Failed.Count
	}
	if parts != fl.Failed.Count || len(merged.Summary.Workers) != 2 {
		t.Errorf("the workers' KO counts add up to %d, the merged run's %d", parts, fl.Failed.Count)
	}
	rd, err := results.ReadDir(merged.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := intervalsKO(t, rd, "flaky"); n != fl.Failed.Count {
		t.Errorf("the merged intervals hold %d failures, the run %d", n, fl.Failed.Count)
	}
}

// checkKO checks an operation's failures against the server's: each one
// timed, none faster than its 20 ms, and the successes' median below
// theirs (a busy machine adds to both: two workers under -race, beside
// other tests, took the failures' median from 21 to 49 ms; the engine's
// tests bound it closer).
func checkKO(t *testing.T, what string, op results.Operation) {
	t.Helper()
	f := op.Failed
	if f == nil || f.Count != op.Errors.Total || f.Count == 0 {
		t.Fatalf("%s: failed latency %+v of %d failures", what, f, op.Errors.Total)
	}
	if f.Min < 20 || f.P50 < 20 || op.Latency.Min < 2 || op.Latency.P50 >= f.P50 {
		t.Errorf("%s: KO min %.2f p50 %.2f ms, OK p50 %.2f ms: want KO from 20 ms, OK about 2", what, f.Min, f.P50, op.Latency.P50)
	}
}

func findOp(t *testing.T, s *results.Summary, name string) results.Operation {
	t.Helper()
	for _, op := range s.Stages[0].Operations {
		if op.Name == name && op.Kind == metrics.KindStep {
			return op
		}
	}
	t.Fatalf("no step %s", name)
	return results.Operation{}
}

// intervalsKO is how many failures an operation's interval histograms of
// failures hold.
func intervalsKO(t *testing.T, rd *results.Run, name string) int64 {
	t.Helper()
	var n int64
	for _, d := range rd.FailedOf(rd.Summary.Stages[0].Index, findOp(t, rd.Summary, name)) {
		q, err := d.Quantiles()
		if err != nil {
			t.Fatal(err)
		}
		n += q.N
	}
	return n
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// loadFlakyPlan writes flakyPlan against target in dir and loads it.
func loadFlakyPlan(t *testing.T, dir, target string) *plan.Plan {
	t.Helper()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(flakyPlan, "TARGET", target)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
