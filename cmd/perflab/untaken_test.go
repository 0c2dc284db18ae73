package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/judge"
)

// A threshold of an operation that never ran (a step under an if that
// never holds, a choice's branch never taken) passes with a note, in the
// terminal's table, summary.json, the Markdown report and junit.xml (a
// skipped test case): "p95 < 500ms" exited 4, "no successful operation to
// measure". A plan that wants the operation to run says "count > 0", which
// fails it; an operation that ran and always failed still fails.
func TestThresholdOfAnUntakenBranch(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/broken" {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	flow := `scenarios:
  - name: s
    vus: 1
    iterations: 3
    flow:
      - {name: home, url: /}
      - {name: never, url: /never, if: "false"}
      - choose:
          - {weight: 1, steps: [{name: taken, url: /taken}]}
          - {weight: 0, steps: [{name: untaken, url: /untaken}]}
`
	out := t.TempDir()
	path := writePlan(t, "target: "+srv.URL+"\nthresholds: [\"p95 < 500ms\", \"errors < 1%\"]\n"+flow)
	code, stdout, stderr := runCLI(t, "run", path, "--out", out, "--store", "off", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, stdout, stderr)
	}
	for _, want := range []string{"thresholds: 8 passed, 0 failed", "ok   p95 < 500ms              never                all            " + judge.NeverRan,
		"ok   errors < 1%              untaken              all            " + judge.NeverRan} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	notes := map[string]string{}
	for _, r := range readSummary(t, out).Thresholds {
		if r.Note != "" {
			notes[r.Threshold+" "+r.Operation] = r.Note
		}
		if !r.Pass {
			t.Errorf("summary.json: %+v failed", r)
		}
	}
	if len(notes) != 4 || notes["p95 < 500ms never"] != judge.NeverRan || notes["errors < 1% untaken"] != judge.NeverRan {
		t.Errorf("summary.json's notes: %v", notes)
	}
	escaped := strings.ReplaceAll(judge.NeverRan, ">", "&gt;")
	dir, _ := filepath.Glob(filepath.Join(out, "*"))
	x, _ := os.ReadFile(filepath.Join(dir[0], "junit.xml"))
	if !strings.Contains(string(x), `<testsuite name="perflab thresholds" tests="8" failures="0" skipped="4">`) ||
		!strings.Contains(string(x), `<testcase classname="all" name="never: p95 &lt; 500ms">`+"\n    "+`<skipped message="`+escaped+`"></skipped>`) {
		t.Errorf("junit.xml:\n%s", x)
	}
	if code, md, _ := runCLI(t, "report", dir[0]); code != exitOK || !strings.Contains(md, "| p95 &lt; 500ms | untaken | all | "+escaped+" | pass |") {
		t.Errorf("report: exit %d\n%s", code, md)
	}

	// Asked to run, by a count, the untaken step fails; so does one that
	// ran and always failed, for want of a successful one to measure.
	path = writePlan(t, "target: "+srv.URL+"\nthresholds: [\"never: count > 0\", \"taken: count == 3\", \"broken: p95 < 500ms\"]\n"+flow+
		"      - {name: broken, url: /broken}\n")
	code, stdout, stderr = runCLI(t, "run", path, "--out", t.TempDir(), "--store", "off", "--quiet")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitThresholds, stdout, stderr)
	}
	for _, want := range []string{"thresholds: 1 passed, 2 failed", "FAIL never: count > 0         never                all            ran 0 times",
		"FAIL broken: p95 < 500ms      broken               all            no successful operation to measure", "ok   taken: count == 3        taken                all            ran 3 times"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["/never"]+seen["/untaken"] != 0 || seen["/taken"] != 6 || seen["/broken"] != 3 {
		t.Errorf("the server saw %v", seen)
	}
}
