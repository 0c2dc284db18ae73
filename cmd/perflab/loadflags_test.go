package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/results"
)

// take returns the requests of path the server saw since the last take.
func (s *distServer) take(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.byPath[path]
	delete(s.byPath, path)
	return n
}

// loadRun runs the binary (perflab run PLAN --out out --quiet args...)
// and returns the run directory it made, the only one not in before.
func loadRun(t *testing.T, bin, planPath, out string, args ...string) (string, *results.Summary) {
	t.Helper()
	before, _ := filepath.Glob(filepath.Join(out, "*", "summary.json"))
	code, stdout, errs := runCLIBin(t, bin, append([]string{"run", planPath, "--out", out, "--quiet"}, args...)...)
	if code != exitOK {
		t.Fatalf("perflab run %v: exit %d\n%s%s", args, code, stdout, errs)
	}
	after, _ := filepath.Glob(filepath.Join(out, "*", "summary.json"))
	for _, f := range after {
		if !strings.Contains(strings.Join(before, "\n"), f) {
			return filepath.Dir(f), summaryAt(t, filepath.Dir(f))
		}
	}
	t.Fatalf("no new run directory in %s", out)
	return "", nil
}

// The load given on the command line runs in place of the plan's: the
// server's counts are the flags', and the run's plan.yaml, its summary,
// the history and perflab show say the load that ran.
func TestLoadFlags(t *testing.T) {
	bin := perflabBin(t)
	srv := newDistServer(t)
	out := t.TempDir()
	planPath := writePlan(t, "name: lf\ntarget: "+srv.URL+"\nscenarios:\n  - name: shop\n    vus: 1\n    iterations: 1\n    flow: [{name: home, url: /home}]\n")

	dir, s := loadRun(t, bin, planPath, out, "--vus", "4", "--iterations", "3")
	if n := srv.take("/home"); n != 12 || count(s, 0, "home") != 12 {
		t.Errorf("--vus 4 --iterations 3: the server counted %d, the run %d, want 12", n, count(s, 0, "home"))
	}
	l := s.Stages[0].Load[0]
	if l.VUs != 4 || l.Iterations != 3 || l.Model != "4 VUs x 3 iterations" {
		t.Errorf("the summary's load: %+v", l)
	}
	stored, err := os.ReadFile(filepath.Join(dir, "plan.yaml"))
	if err != nil || !strings.Contains(string(stored), "vus: 4 # --vus\n    iterations: 3 # --iterations\n") ||
		!strings.HasPrefix(string(stored), "# the load of scenario shop given on the command line: --vus 4 --iterations 3\n") {
		t.Errorf("the run's plan.yaml:\n%s", stored)
	}
	code, shown, errs := runCLIBin(t, bin, "show", "--store", filepath.Join(out, "perflab.db"), s.RunID)
	if code != exitOK || !strings.Contains(shown, "\nload: shop 4 VUs x 3 iterations\n") || !strings.Contains(shown, "summary = 12 in") {
		t.Errorf("perflab show: exit %d\n%s%s", code, shown, errs)
	}
	code, js, _ := runCLIBin(t, bin, "show", "--store", filepath.Join(out, "perflab.db"), s.RunID, "--json")
	if code != exitOK || !strings.Contains(js, `vus: 4 # --vus`) || !strings.Contains(js, `"model": "4 VUs x 3 iterations"`) {
		t.Errorf("the history's run: %s", js)
	}

	// --total-iterations is k6's -i: shared by the VUs.
	_, s = loadRun(t, bin, planPath, out, "--vus", "3", "--total-iterations", "10")
	if n := srv.take("/home"); n != 10 || s.Stages[0].Load[0].TotalIterations != 10 {
		t.Errorf("--total-iterations 10: the server counted %d, the summary %+v", n, s.Stages[0].Load[0])
	}

	// --duration replaces the plan's iterations: the VUs loop for 1s.
	_, s = loadRun(t, bin, planPath, out, "--vus", "2", "--duration", "1s")
	l = s.Stages[0].Load[0]
	if n := srv.take("/home"); n <= 2 || int64(n) != count(s, 0, "home") || l.Iterations != 0 || l.DurationS != 1 || l.Model != "2 VUs for 1s" {
		t.Errorf("--duration 1s: the server counted %d, the run %d; the load %+v", n, count(s, 0, "home"), l)
	}

	// --rate makes the scenario an arrival rate: 40 a second for 1s.
	_, s = loadRun(t, bin, planPath, out, "--rate", "40", "--duration", "1s", "--max-vus", "8")
	l = s.Stages[0].Load[0]
	var dropped int64
	for _, op := range s.Stages[0].Operations {
		dropped += op.Dropped
	}
	if n := srv.take("/home"); int64(n)+dropped != 40 || int64(n) != count(s, 0, "home") || !l.Open || l.Rate != 40 || l.MaxVUs != 8 || l.Model != "40 iterations/s (1-8 VUs) for 1s" {
		t.Errorf("--rate 40: the server counted %d (%d dropped), the run %d; the load %+v", n, dropped, count(s, 0, "home"), l)
	}

	// perflab validate prints the load that would run.
	code, valid, errs := runCLIBin(t, bin, "validate", planPath, "--vus", "[1,2]", "--duration", "5m")
	if code != exitOK || !strings.Contains(valid, "stage 1 vus=1: shop: 1 VUs for 5m0s\n  stage 2 vus=2: shop: 2 VUs for 5m0s") {
		t.Errorf("validate: exit %d\n%s%s", code, valid, errs)
	}
}

// What makes no sense is refused, with why, exit code 1 and nothing sent.
func TestLoadFlagsRefused(t *testing.T) {
	bin := perflabBin(t)
	srv := newDistServer(t)
	one := writePlan(t, "name: one\ntarget: "+srv.URL+"\nscenarios: [{name: shop, vus: 1, iterations: 1, flow: [{name: a, url: /a}]}]\n")
	two := writePlan(t, "name: two\ntarget: "+srv.URL+"\nscenarios:\n  - {name: browse, vus: 1, iterations: 1, flow: [{name: a, url: /a}]}\n  - {name: buy, vus: 1, iterations: 1, flow: [{name: b, url: /b}]}\n")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{two, "--vus", "5"}, "--scenario: the plan has 2 scenarios (browse, buy): name the one whose load --vus gives with --scenario NAME (repeatable)"},
		{[]string{two, "--rate", "5", "--duration", "1s"}, "--scenario: the plan has 2 scenarios (browse, buy): name the one whose load --duration, --rate give with --scenario NAME (repeatable)"},
		{[]string{two, "--scenario", "bye", "--vus", "2"}, `--scenario: the plan has no scenario "bye" (its scenarios: browse, buy) (did you mean "buy"?)`},
		{[]string{two, "--scenario", "buy"}, "--scenario: --scenario names the scenarios whose load the load flags change"},
		{[]string{one, "--vus", "0"}, "--vus: scenario shop: vus: want at least 1, got 0"},
		{[]string{one, "--rate", "1e12", "--duration", "1s"}, "--rate: scenario shop: rate: 1e+12 iterations a second is more than a load generator can start"},
		{[]string{one, "--rate", "10"}, "--rate: scenario shop: it has no duration to run the rate for: give --duration too"},
		{[]string{one, "--rate", "10", "--iterations", "5", "--duration", "1s"}, "--rate: scenario shop: an arrival rate runs for a duration, not a count of iterations"},
		{[]string{one, "--max-vus", "10"}, "--max-vus: scenario shop: --max-vus is the most VUs an arrival rate may use: give it with --rate"},
		{[]string{one, "--iterations", "2", "--total-iterations", "4"}, "--total-iterations: scenario shop: give --iterations (each VU's) or --total-iterations (shared by the VUs), not both"},
		{[]string{one, "--duration", "soon"}, `--duration: scenario shop: duration: `},
		{[]string{one, "--vus", "2", "--workers", "3", "--total-iterations", "2"}, "cannot run on 3 workers"},
	} {
		code, stdout, errs := runCLIBin(t, bin, append([]string{"run", "--out", t.TempDir()}, c.args...)...)
		want := exitUsage
		if strings.Contains(c.msg, "workers") {
			want = exitInvalidPlan // as for the plan's own load
		}
		if code != want || !strings.Contains(errs, c.msg) {
			t.Errorf("perflab run %v: exit %d, want %d saying %q\n%s%s", c.args[1:], code, want, c.msg, stdout, errs)
		}
	}
	if n := srv.take("/a") + srv.take("/b"); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// A distributed run splits the load given on the command line as it
// splits the plan's: the workers together send --vus x --iterations.
func TestLoadFlagsWorkers(t *testing.T) {
	bin := perflabBin(t)
	srv := newDistServer(t)
	out := t.TempDir()
	planPath := writePlan(t, "name: lfw\ntarget: "+srv.URL+"\nscenarios:\n  - {name: shop, vus: 1, iterations: 1, flow: [{name: home, url: /home}]}\n  - {name: idle, vus: 1, iterations: 1, flow: [{name: other, url: /other}]}\n")
	c := exec.Command(bin, "run", planPath, "--workers", "2", "--scenario", "shop", "--vus", "5", "--iterations", "3", "--out", out, "--quiet")
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-lfw"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	s := summaryAt(t, dirs[0])
	if n := srv.take("/home"); n != 15 || count(s, 0, "home") != 15 {
		t.Errorf("--vus 5 --iterations 3 on 2 workers: the server counted %d, the run %d, want 15", n, count(s, 0, "home"))
	}
	if n := srv.take("/other"); n != 1 {
		t.Errorf("the other scenario sent %d, want its plan's 1", n)
	}
	if len(s.Workers) != 2 || s.Stages[0].Load[0].VUs != 5 || s.Stages[0].Load[0].Model != "5 VUs x 3 iterations" {
		t.Errorf("%d workers, the load %+v", len(s.Workers), s.Stages[0].Load)
	}
	if !strings.Contains(stdout.String(), "load: shop 5 VUs x 3 iterations; idle 1 VUs x 1 iterations") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}
