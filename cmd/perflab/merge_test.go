package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/results"
)

// Two load generators (two perflab processes) share a load at the same
// time; perflab merge makes one run of them: its counts and errors are the
// server's own, its threshold is judged on the whole (it fails on one
// generator's run alone and holds on the two), it is in the history, and
// every command reads it.
func TestMergeTwoGenerators(t *testing.T) {
	bin := perflabBin(t)
	var gets, posts, failed atomic.Int64
	var bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		switch {
		case r.Method == http.MethodGet:
			gets.Add(1)
		default:
			posts.Add(1)
			// One generator's requests say bad=1: every fourth of those fails.
			if r.URL.Query().Get("bad") == "1" && bad.Add(1)%4 == 0 {
				failed.Add(1)
				w.WriteHeader(http.StatusInternalServerError)
			}
		}
	}))
	defer srv.Close()
	plan := writePlan(t, `name: shared
target: `+srv.URL+`
interval: 200ms
vars: {bad: "0"}
scenarios:
  - name: orders
    vus: 2
    iterations: 40
    flow:
      - {name: list, url: /orders}
      - {name: order, method: POST, url: "/orders?bad=${bad}"}
thresholds: ["order: errors < 20%"]
`)
	out := t.TempDir()
	db := filepath.Join(out, "perflab.db")
	var cmds []*exec.Cmd
	for _, bad := range []string{"0", "1"} {
		c := exec.Command(bin, "run", plan, "--out", out, "--quiet", "--store", "off", "--set", "bad="+bad)
		c.Stderr = os.Stderr
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	codes := []int{}
	for _, c := range cmds {
		c.Wait()
		codes = append(codes, c.ProcessState.ExitCode())
	}
	// Alone, the generator of bad requests fails the threshold (25%).
	if codes[0] != exitOK || codes[1] != exitThresholds {
		t.Fatalf("exit codes %v, want 0 and %d", codes, exitThresholds)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-shared*"))
	if len(dirs) != 2 {
		t.Fatalf("run directories %v", dirs)
	}
	code, stdout, stderr := runCLI(t, "merge", "--out", out, "--store", db, "--label", "release=A", dirs[0], dirs[1])
	if code != exitOK {
		t.Fatalf("merge exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "merged 2 runs into run ") || !strings.Contains(stdout, "thresholds: 1 passed, 0 failed") {
		t.Errorf("merge said:\n%s\n%s", stdout, stderr)
	}
	merged, _ := filepath.Glob(filepath.Join(out, "*-merged"))
	if len(merged) != 1 {
		t.Fatalf("merged directories %v", merged)
	}
	rd, err := results.ReadDir(merged[0])
	if err != nil {
		t.Fatal(err)
	}
	s := rd.Summary
	ops := map[string]results.Operation{}
	for _, op := range s.Stages[0].Operations {
		ops[op.Name] = op
	}
	if n := ops["list"].Count; n != gets.Load() || n != 160 {
		t.Errorf("merged list: %d requests, the server saw %d, want 160", n, gets.Load())
	}
	if o := ops["order"]; o.Count != posts.Load() || o.Errors.Total != failed.Load() || o.Errors.ByKind["http_5xx"] != failed.Load() || failed.Load() != 20 {
		t.Errorf("merged order: %d requests, %d failed; the server saw %d, failed %d (want 20)", o.Count, o.Errors.Total, posts.Load(), failed.Load())
	}
	if ops["orders"].Count != 160 || s.Stages[0].Load[0].VUs != 4 || s.Labels["release"] != "A" {
		t.Errorf("merged scenario %d iterations, %d VUs, labels %v", ops["orders"].Count, s.Stages[0].Load[0].VUs, s.Labels)
	}
	// Its intervals hold every request: the interval counts add up.
	var n int64
	for _, iv := range rd.IntervalsOf(1, ops["list"]) {
		n += iv.Count
	}
	if n != 160 {
		t.Errorf("the merged intervals of list count %d requests, want 160", n)
	}
	// The history has it; show, report and compare read it.
	id := filepath.Base(merged[0])
	if code, list, _ := runCLI(t, "runs", "--store", db, "--label", "release=A"); code != exitOK || !strings.Contains(list, id) {
		t.Errorf("runs:\n%s", list)
	}
	if code, page, errs := runCLI(t, "report", "--store", db, id, "--format", "md"); code != exitOK || !strings.Contains(page, "| order | 160 | 20 |") {
		t.Errorf("report %d: %s\n%s", code, errs, page)
	}
	if code, cmp, errs := runCLI(t, "compare", dirs[0], merged[0]); code != exitOK || !strings.Contains(cmp, "verdicts:") {
		t.Errorf("compare %d: %s\n%s", code, errs, cmp)
	}
	// A run that did not finish has no totals and is refused, by name.
	killed := filepath.Join(t.TempDir(), "killed")
	if err := os.CopyFS(killed, os.DirFS(dirs[0])); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(killed, "summary.json"))
	os.Remove(filepath.Join(killed, results.TotalsFile))
	if code, _, errs := runCLI(t, "merge", "--out", out, "--store", "off", dirs[0], killed); code == exitOK || !strings.Contains(errs, "part 2 ("+killed+"): no exact totals") {
		t.Errorf("merge of a killed run: %d %s", code, errs)
	}
}
