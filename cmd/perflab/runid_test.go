package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/store"
)

// badRunIDs are ids that would name no directory of the run's own (., ..,
// a path), an option, or a run id no one could type.
var badRunIDs = []string{"..", ".", "/", "a/b", "../../etc", "", strings.Repeat("a", 201), "a\nb", "x\x00", "-x", "a b", "über"}

// Every command that takes a run id, or reads one from a run directory,
// refuses a bad one before it writes anything: run --run-id, k8s --run-id,
// import and merge (whose run's id is made from the first run's).
func TestRunIDsAreChecked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	planPath := writePlan(t, "name: ids\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{vus: 1, iterations: 3, flow: [{name: a, url: /a}]}]\n")
	for _, id := range badRunIDs {
		out := t.TempDir()
		code, stdout, errs := runCLI(t, "run", planPath, "--run-id", id, "--segment", "0/1", "--out", out, "--store", filepath.Join(out, "h.db"), "--quiet")
		if code != exitUsage || !strings.Contains(errs, "perflab: --run-id: ") || stdout != "" {
			t.Errorf("run --run-id %q: exit %d, %q", id, code, errs)
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("run --run-id %q wrote %v", id, left)
		}
		code, stdout, errs = runCLI(t, "k8s", planPath, "--workers", "2", "--run-id", id)
		if code != exitUsage || !strings.Contains(errs, "perflab: --run-id: ") || stdout != "" {
			t.Errorf("k8s --run-id %q: exit %d, %q, wrote %q", id, code, errs, stdout)
		}
	}
	// A good one works, the longest too.
	out := t.TempDir()
	long := strings.Repeat("r", 200)
	run := runDir(t, planPath, out, "ids", "--run-id", long, "--workers", "1")
	if code, _, errs := runCLI(t, "k8s", planPath, "--workers", "2", "--run-id", long); code != exitOK {
		t.Errorf("k8s --run-id of %d bytes: %s", len(long), errs)
	}

	// A run directory whose summary.json has a bad id is not imported,
	// nor merged.
	for _, id := range []string{"..", "../../escaped", "-x", "a\nb"} {
		dir := filepath.Join(t.TempDir(), "run")
		if err := os.CopyFS(dir, os.DirFS(run)); err != nil {
			t.Fatal(err)
		}
		setRunID(t, dir, id)
		db := filepath.Join(t.TempDir(), "h.db")
		code, _, errs := runCLI(t, "import", "--store", db, dir)
		if code != exitUsage || !strings.Contains(errs, "summary.json: run id") {
			t.Errorf("import of run id %q: exit %d, %q", id, code, errs)
		}
		if st, err := store.Open(db); err == nil {
			if runs, _ := st.Runs(store.Filter{}); len(runs) != 0 {
				t.Errorf("import of run id %q stored %d runs", id, len(runs))
			}
			st.Close()
		}
		mergeOut := filepath.Join(t.TempDir(), "deep", "out")
		code, _, errs = runCLI(t, "merge", "--out", mergeOut, "--store", "off", dir, dir)
		if code != exitUsage || !strings.Contains(errs, "the merged run's id") {
			t.Errorf("merge of run id %q: exit %d, %q", id, code, errs)
		}
		if _, err := os.Stat(filepath.Join(mergeOut, "..", "..", "escaped-merged")); err == nil {
			t.Errorf("merge of run id %q wrote outside --out", id)
		}
	}
}

// setRunID rewrites the run id of a run directory's summary.json.
func setRunID(t *testing.T, dir, id string) {
	t.Helper()
	path := filepath.Join(dir, "summary.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s["run_id"] = id
	if b, err = json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run of a plan named in another script has a directory and an id that
// name it: a short hash of the name (results.RunIDBase), not an empty
// name after the time; its Latin accents are dropped, not the letters.
func TestRunDirOfNonASCIIPlanName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for name, slug := range map[string]string{"Заказ": "3648b2d2", "Crème brûlée": "Creme-brulee"} {
		planPath := writePlan(t, "name: "+name+"\ntarget: "+srv.URL+"\nscenarios: [{vus: 1, iterations: 1, flow: [{name: a, url: /a}]}]\n")
		out := t.TempDir()
		dir := runDir(t, planPath, out, slug)
		if s := readSummary(t, out); s.RunID != filepath.Base(dir) || s.Plan.Name != name {
			t.Errorf("%s: run %q of plan %q in %s", name, s.RunID, s.Plan.Name, dir)
		}
	}
}
