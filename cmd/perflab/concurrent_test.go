package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// Ten runs of one plan started at once, as a script or a CI matrix starts
// them, into one directory and one new history, twenty times over: every
// run gets its own id and directory, exits 0, and is whole in its
// directory and in the history.
func TestConcurrentRuns(t *testing.T) {
	bin := perflabBin(t)
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	const runs, iterations = 10, 5
	plan := writePlan(t, "name: together\ntarget: "+srv.URL+"\nscenarios: [{vus: 1, iterations: 5, flow: [{name: a, url: /a}]}]\n")
	for trial := range 20 {
		out := t.TempDir()
		before := served.Load()
		var wg sync.WaitGroup
		codes := make([]int, runs)
		stderrs := make([]bytes.Buffer, runs)
		cmds := make([]*exec.Cmd, runs)
		for i := range runs {
			cmds[i] = exec.Command(bin, "run", plan, "--out", out, "--quiet")
			cmds[i].Stderr = &stderrs[i]
		}
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := cmds[i].Run()
				if ee, ok := err.(*exec.ExitError); ok {
					codes[i] = ee.ExitCode()
				} else if err != nil {
					codes[i] = -1
				}
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != exitOK {
				t.Fatalf("trial %d: run %d exited %d:\n%s", trial, i, c, stderrs[i].String())
			}
		}
		if got := served.Load() - before; got != runs*iterations {
			t.Fatalf("trial %d: the server saw %d requests, want %d", trial, got, runs*iterations)
		}
		dirs, _ := filepath.Glob(filepath.Join(out, "*-together*"))
		var ids []string
		for _, d := range dirs {
			ids = append(ids, filepath.Base(d))
			rd, err := results.ReadDir(d)
			if err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			s := rd.Summary
			var logged int64
			for _, iv := range rd.IntervalsOf(1, s.Stages[0].Operations[0]) {
				logged += iv.Count
			}
			if s.RunID != filepath.Base(d) || s.Status != "completed" || count(s, 0, "a") != iterations || logged != iterations {
				t.Errorf("trial %d: %s: run %s %s, %d requests, %d in its intervals; want %d", trial, d, s.RunID, s.Status, count(s, 0, "a"), logged, iterations)
			}
			var m results.Manifest
			if b, err := os.ReadFile(filepath.Join(d, results.ManifestFile)); err != nil || json.Unmarshal(b, &m) != nil || m.RunID != s.RunID {
				t.Errorf("trial %d: %s: run.json %+v (%v)", trial, d, m, err)
			}
		}
		if len(ids) != runs {
			t.Fatalf("trial %d: %d run directories, want %d: %v", trial, len(ids), runs, ids)
		}
		st, err := store.Open(filepath.Join(out, "perflab.db"))
		if err != nil {
			t.Fatal(err)
		}
		stored, err := st.Runs(store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var storedIDs []string
		for _, r := range stored {
			storedIDs = append(storedIDs, r.ID)
			rd, err := results.FromStore(st, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "completed" || count(rd.Summary, 0, "a") != iterations {
				t.Errorf("trial %d: stored run %s %s with %d requests", trial, r.ID, r.Status, count(rd.Summary, 0, "a"))
			}
		}
		st.Close()
		sort.Strings(storedIDs)
		if len(storedIDs) != runs || !slices.Equal(storedIDs, ids) {
			t.Fatalf("trial %d: the history holds %v, the directory %v", trial, storedIDs, ids)
		}
	}
}

// A run whose history cannot be written is whole in its directory but not
// where it was asked to be recorded: it exits 3, says what was lost and
// how to record it later, and `perflab import` then does.
func TestLostHistoryExits3(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := t.TempDir()
	bad := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(bad, bytes.Repeat([]byte("not a database\n"), 512), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := writePlan(t, "name: lost\ntarget: "+srv.URL+"\nscenarios: [{vus: 1, iterations: 3, flow: [{name: a, url: /a}]}]\n")
	code, _, errs := runCLI(t, "run", plan, "--out", out, "--store", bad, "--quiet")
	if code != exitRunFailed || !strings.Contains(errs, "not all recorded: the run history") || !strings.Contains(errs, "perflab import") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-lost"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	if s := readSummary(t, out); s.Status != "completed" || count(s, 0, "a") != 3 {
		t.Errorf("the directory holds %s with %d requests", s.Status, count(s, 0, "a"))
	}
	good := filepath.Join(t.TempDir(), "good.db")
	if code, _, errs := runCLI(t, "import", "--store", good, dirs[0]); code != exitOK {
		t.Fatalf("import: %s", errs)
	}
	if code, list, _ := runCLI(t, "runs", "--store", good); code != exitOK || !strings.Contains(list, filepath.Base(dirs[0])) {
		t.Errorf("runs after import: %s", list)
	}
}
