package lab

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// An analysis that fails (here the drift's, by a panic) fails alone: the
// run completes, its directory and the history hold it whole with the
// analysis named as failed, it is listed as completed, and its status
// line says what failed. Then the drift, judged again, is stored with it.
func TestAnalysisFailsAlone(t *testing.T) {
	longevity = func(*results.Run, judge.LongevityOptions) *results.Drift { panic("a series of nothing") }
	defer func() { longevity = judge.Longevity }()
	srv := runtest.NewFlaky()
	defer srv.Close()
	dir := t.TempDir()
	p := loadFlakyPlan(t, dir, srv.URL)
	var stderr strings.Builder
	out := filepath.Join(dir, "runs")
	res, err := Run(context.Background(), p, Config{Out: out, Progress: "none", Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	// The thresholds failed as the server makes them fail (flakyPlan): the
	// outcome is theirs, not a run lost.
	if res.Outcome != ThresholdsFailed || len(res.Lost) > 0 {
		t.Fatalf("outcome %v, lost %v\n%s", res.Outcome, res.Lost, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the run's drift could not be made: panic: a series of nothing; the run is recorded without it") ||
		!strings.Contains(stderr.String(), "analysis failed: drift") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.AnalysisErrors) != 1 || sum.AnalysisErrors[0].Analysis != results.AnalysisDrift || len(sum.Thresholds) != 4 {
		t.Fatalf("analysis errors %+v, %d thresholds", sum.AnalysisErrors, len(sum.Thresholds))
	}
	st, err := store.Open(filepath.Join(out, "perflab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(store.Filter{ID: res.RunID})
	if err != nil || len(runs) != 1 || runs[0].Status != "completed" {
		t.Fatalf("%v %+v", err, runs)
	}
	stored, err := st.Summary(res.RunID)
	if err != nil || !strings.Contains(string(stored), `"analysis_errors"`) {
		t.Fatalf("%v: the history's summary has no analysis errors", err)
	}
	// Judged again, the verdict is stored with the run: the error is gone.
	sum.Drift = &results.Drift{Verdict: "no degradation: 1 series steady."}
	sum.SetAnalysisError(results.AnalysisDrift, nil)
	var again strings.Builder
	if err := sum.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	if err := st.SetSummary(res.RunID, []byte(again.String())); err != nil {
		t.Fatal(err)
	}
	if stored, _ := st.Summary(res.RunID); strings.Contains(string(stored), `"analysis_errors"`) || !strings.Contains(string(stored), "no degradation") {
		t.Errorf("stored again:\n%s", stored)
	}
}
