package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// perflab compare gives each stage the peak memory the runs' tables give
// it: the peak of perflab's own process (tens of MB), also in stages
// shorter than the sampling interval, whose edges' samples fall just
// outside them (compare once showed 0.0 MB there).
func TestCompareShowsThePeakMemory(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	// Stages of 300 ms, sampled every second.
	plan := writePlan(t, "name: mem\ntarget: "+srv.URL+"\ninterval: 1s\nvars: {users: [1, 2]}\nscenarios: [{vus: '${users}', duration: 300ms, flow: [{name: a, url: /a}]}]\n")
	var dirs []string
	for range 2 {
		dirs = append(dirs, runDir(t, plan, t.TempDir(), "mem", "--store", "off"))
	}
	// The peak each run's summary (its resources table) gives each window.
	peak := func(dir, window string) float64 {
		rd, err := results.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range rd.Summary.Resources.Windows {
			for _, m := range w.Monitors {
				if w.Window == window && m.Monitor == results.SelfMonitor && len(m.Memory) > 0 {
					return m.Memory[0].PeakBytes / (1 << 20)
				}
			}
		}
		t.Errorf("%s: no memory of %s in %s", dir, results.SelfMonitor, window)
		return 0
	}
	code, js, errs := runCLI(t, "compare", "--json", dirs[0], dirs[1])
	if code != exitOK {
		t.Fatal(errs)
	}
	var rc judge.RunComparison
	if err := json.Unmarshal([]byte(js), &rc); err != nil {
		t.Fatal(err)
	}
	_, text, _ := runCLI(t, "compare", dirs[0], dirs[1])
	windows := map[string]bool{}
	for _, r := range rc.Resources {
		if r.Monitor != results.SelfMonitor {
			continue
		}
		windows[r.Stage] = true
		base, cand := peak(dirs[0], r.Stage), peak(dirs[1], r.Stage)
		if r.BasePeakMB < 5 || r.CandPeakMB < 5 || r.BasePeakMB != base || r.CandPeakMB != cand {
			t.Errorf("%s: peak %.1f and %.1f MB, the runs' tables %.1f and %.1f MB", r.Stage, r.BasePeakMB, r.CandPeakMB, base, cand)
		}
		if !strings.Contains(text, fmt.Sprintf("%.1f", base)) || !strings.Contains(text, fmt.Sprintf("%.1f", cand)) {
			t.Errorf("%s: %.1f and %.1f MB not in the table:\n%s", r.Stage, base, cand, text)
		}
	}
	if len(windows) != 3 || !windows["users=1"] || !windows["users=2"] || !windows["run"] {
		t.Errorf("windows compared %v, want users=1, users=2 and run", windows)
	}
}
