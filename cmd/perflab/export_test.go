package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// perflab export writes a run into a new or empty directory, and refuses
// one holding anything (another run's export), leaving it as it was.
func TestExportRefusesAFullDirectory(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := t.TempDir()
	db := filepath.Join(out, "perflab.db")
	var ids []string
	for _, name := range []string{"first", "second"} {
		plan := writePlan(t, "name: "+name+"\ntarget: "+srv.URL+"\ninterval: 100ms\nscenarios: [{vus: 1, iterations: 5, flow: [{name: a, url: /a}]}]\n")
		ids = append(ids, filepath.Base(runDir(t, plan, out, name)))
	}
	// A missing directory, under a missing one, is made.
	dir := filepath.Join(t.TempDir(), "exports", "first")
	if code, _, errs := runCLI(t, "export", "--store", db, ids[0], dir); code != exitOK {
		t.Fatalf("export into a new directory: %s", errs)
	}
	before := snapshot(t, dir)
	if !strings.Contains(before["summary.json"], `"run_id": "`+ids[0]+`"`) {
		t.Fatalf("summary.json of the export: %.200s", before["summary.json"])
	}
	// The second run into the first's directory: refused, nothing changed.
	code, out2, errs := runCLI(t, "export", "--store", db, ids[1], dir)
	if code != exitUsage || out2 != "" || !strings.Contains(errs, "perflab: "+dir+" is not empty (it holds ") || !strings.Contains(errs, "give a new or empty directory") {
		t.Errorf("export into a full directory: exit %d, %q %q", code, out2, errs)
	}
	after := snapshot(t, dir)
	if len(after) != len(before) {
		t.Errorf("files %d, were %d", len(after), len(before))
	}
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed", name)
		}
	}
	// A file is no directory.
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "export", "--store", db, ids[1], file); code != exitUsage || !strings.Contains(errs, "is a file, not a directory") {
		t.Errorf("export into a file: exit %d, %q", code, errs)
	}
	// An empty directory is taken.
	empty := t.TempDir()
	if code, _, errs := runCLI(t, "export", "--store", db, ids[1], empty); code != exitOK {
		t.Fatalf("export into an empty directory: %s", errs)
	}
	if b, err := os.ReadFile(filepath.Join(empty, "summary.json")); err != nil || !bytes.Contains(b, []byte(`"run_id": "`+ids[1]+`"`)) {
		t.Errorf("the second export: %v %.200s", err, b)
	}
}

// snapshot is every file of a directory, by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}
