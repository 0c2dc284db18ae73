package store

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// A summary as perflab wrote it before its total counted dropped
// iterations: 3 threshold results, 1 failed; the drift degraded; in its
// one stage an open model (buy) that dropped 300 of 1,000 iterations
// due, another (sell) that dropped none of 200, a closed model (browse)
// that looped 50 times.
const oldSummary = `{"format": "perflab.summary/v1", "run_id": "old", "status": "completed",
 "stages": [{"index": 1, "name": "all",
   "load": [{"scenario": "buy", "vus": 2, "open": true, "rate": 1000}, {"scenario": "sell", "vus": 1, "open": true, "rate": 200}, {"scenario": "browse", "vus": 2}],
   "operations": [
     {"name": "buy", "kind": "scenario", "scenario": "buy", "count": 700, "dropped": 300},
     {"name": "GET /buy", "kind": "step", "scenario": "buy", "count": 700},
     {"name": "sell", "kind": "scenario", "scenario": "sell", "count": 200},
     {"name": "browse", "kind": "scenario", "scenario": "browse", "count": 50}]}],
 "total": {"requests": 950, "errors": 19, "rps": 950, "line": "summary = 950 ..."},
 "thresholds": [{"threshold": "p95 < 1s", "pass": true}, {"threshold": "dropped < 1%", "operation": "buy", "pass": false}, {"threshold": "dropped < 1%", "operation": "sell", "pass": true}],
 "drift": {"degraded": true, "verdict": "throughput fell"}}`

// wantOld is oldSummary's verdict.
var wantOld = Verdict{Thresholds: 3, ThresholdsFailed: 1, Degraded: true, Dropped: 300, Due: 1200, Requests: 950, Errors: 19, RPS: 950}

func TestVerdictOf(t *testing.T) {
	v, err := VerdictOf([]byte(oldSummary))
	if err != nil || *v != wantOld {
		t.Fatalf("%+v, %v; want %+v", v, err, wantOld)
	}
	if got, want := Status("completed", v), "completed; thresholds failed: 1 of 3; drift: degraded; dropped 300 of 1200 iterations due (25.00%)"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	// Incidents and a failed analysis, read from a summary.
	inc, err := VerdictOf([]byte(`{"drift": {"degraded": false, "incidents": [{"stage": "a"}, {"stage": "a"}]}, "analysis_errors": [{"analysis": "regressions", "error": "x"}]}`))
	if err != nil || inc.Incidents != 2 || inc.AnalysisFailed != "regressions" {
		t.Fatalf("%+v, %v", inc, err)
	}
	if got, want := Status("completed", inc), "completed; drift: 2 incidents; analysis failed: regressions"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	clean := &Verdict{Thresholds: 5, Due: 10}
	if got := Status("completed", clean); got != "completed" {
		t.Errorf("a clean run's status: %q", got)
	}
	if got := Status("killed", nil); got != "killed" {
		t.Errorf("an unknown verdict's status: %q", got)
	}
	notes := v.Notes()
	if len(notes) != 3 || !notes[0].Fail || !notes[1].Fail || notes[2].Fail {
		t.Errorf("notes %+v: want the thresholds and the drift failing, the dropped iterations a warning", notes)
	}
	if _, err := VerdictOf([]byte("{")); err == nil {
		t.Error("a summary that does not read has a verdict")
	}
}

// A history made by the perflab before verdicts had columns (schema 8)
// is migrated: each finished run gets the verdict its summary says, a run
// not finished none; runs that finish from then on get theirs as they are
// stored (Finish, Import).
func TestVerdictMigration(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { verdictMigration(t, filepath.Join(t.TempDir(), "h.db")) })
	t.Run("postgres", func(t *testing.T) { verdictMigration(t, postgres(t)) })
}

// oldStore is the history at path as the perflab of its first n
// migrations made it.
func oldStore(t *testing.T, path string, n int) *Store {
	t.Helper()
	var old *Store
	if IsPostgres(path) {
		db, err := sql.Open("pgx", path)
		if err != nil {
			t.Fatal(err)
		}
		old = &Store{db: db, postgres: true}
	} else {
		db, err := sqliteDB(path)
		if err != nil {
			t.Fatal(err)
		}
		old = &Store{db: db}
	}
	if err := old.migrateTo(n); err != nil {
		t.Fatal(err)
	}
	return old
}

// migrated closes an old history and opens it again, migrated.
func migrated(t *testing.T, old *Store, path string) *Store {
	t.Helper()
	old.Close()
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// beforeVerdicts is the number of migrations of the schema that had no
// verdict columns.
const beforeVerdicts = 8

func verdictMigration(t *testing.T, path string) {
	old := oldStore(t, path, beforeVerdicts)
	t0 := time.UnixMilli(1_700_000_000_000)
	for _, id := range []string{"old", "going"} {
		if err := old.Begin(id, "shop", []byte("name: shop\n"), t0, nil); err != nil {
			t.Fatal(err)
		}
	}
	// How that perflab recorded a finished run (Finish, Complete).
	if _, err := old.db.Exec(old.q(`UPDATE runs SET status = ?, error = ?, end_ms = ?, summary = ?, totals = ? WHERE id = ?`),
		"completed", "", t0.Add(time.Second).UnixMilli(), oldSummary, "", "old"); err != nil {
		t.Fatal(err)
	}
	st := migrated(t, old, path)
	defer st.Close()
	verdicts := func() map[string]*Verdict {
		t.Helper()
		runs, err := st.Runs(Filter{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*Verdict{}
		for _, r := range runs {
			out[r.ID] = r.Verdict
		}
		return out
	}
	vs := verdicts()
	if v := vs["old"]; v == nil || *v != wantOld {
		t.Errorf("the finished run, migrated: %+v, want %+v", v, wantOld)
	}
	if v, ok := vs["going"]; !ok || v != nil {
		t.Errorf("the run not finished: %+v, want no verdict", v)
	}

	// Runs stored from now on: a clean one finishing, one imported.
	clean := `{"stages": [{"load": [{"scenario": "buy", "open": true}], "operations": [{"name": "buy", "kind": "scenario", "scenario": "buy", "count": 40}]}],
		"total": {"requests": 40, "rps": 20}, "thresholds": [{"pass": true}, {"pass": true}]}`
	if err := st.Finish("going", metrics.StatusCompleted, "", t0.Add(2*time.Second), []byte(clean), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Import("imported", "shop", nil, t0, t0.Add(time.Second), metrics.StatusCompleted, nil, []byte(oldSummary), nil, nil); err != nil {
		t.Fatal(err)
	}
	vs = verdicts()
	if v, want := vs["going"], (Verdict{Thresholds: 2, Due: 40, Requests: 40, RPS: 20}); v == nil || *v != want {
		t.Errorf("finished: %+v, want %+v", v, want)
	}
	if v := vs["imported"]; v == nil || *v != wantOld {
		t.Errorf("imported: %+v, want %+v", v, wantOld)
	}
	st.Close()

	// Opened again: migrated once, the verdicts kept.
	var err error
	if st, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v := verdicts()["old"]; v == nil || *v != wantOld {
		t.Errorf("reopened: %+v", v)
	}
}
