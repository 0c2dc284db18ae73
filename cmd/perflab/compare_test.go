package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/analyze"
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

// delayServer answers after base plus a jitter of up to a fifth of it,
// drawn from its seed.
func delayServer(t *testing.T, base time.Duration, seed uint64) *httptest.Server {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed+1))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		d := base + time.Duration(r.Int64N(int64(base/5)))
		mu.Unlock()
		time.Sleep(d)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Two runs of 6 s, whose plan gives no interval: their 200 ms intervals
// (30 a run) give perflab compare a verdict where one interval of 10 s
// each gave "too few samples". A service answering in 100 ms, then in
// 25 ms, is significantly faster; two runs of one service answering in
// 100 ms (each its own jitter, from its own seed: three such pairs) show
// no significant change. The eight runs go at once, each perflab in a
// process of its own, each against a server of its own.
func TestCompareShortRuns(t *testing.T) {
	bin := perflabBin(t)
	type run struct {
		base time.Duration
		seed uint64
		dir  string
	}
	runs := []*run{{base: 100 * time.Millisecond, seed: 1}, {base: 25 * time.Millisecond, seed: 2}}
	for seed := uint64(3); seed < 9; seed++ {
		runs = append(runs, &run{base: 100 * time.Millisecond, seed: seed})
	}
	var wg sync.WaitGroup
	for i, r := range runs {
		srv := delayServer(t, r.base, r.seed)
		plan := writePlan(t, fmt.Sprintf("name: short%d\ntarget: %s\nscenarios: [{name: s, vus: 4, duration: 6s, flow: [{name: get, url: /get}]}]\n", i, srv.URL))
		out := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errs bytes.Buffer
			cmd := exec.Command(bin, "run", plan, "--out", out, "--store", "off", "--quiet")
			cmd.Stderr = &errs
			if err := cmd.Run(); err != nil {
				t.Errorf("run %d: %v\n%s", i, err, errs.String())
				return
			}
			dirs, _ := filepath.Glob(filepath.Join(out, fmt.Sprintf("*-short%d", i)))
			if len(dirs) == 1 {
				r.dir = dirs[0]
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	compare := func(a, b *run) *judge.OpComparison {
		t.Helper()
		code, js, errs := runCLI(t, "compare", "--json", a.dir, b.dir)
		var rc judge.RunComparison
		if code != exitOK || json.Unmarshal([]byte(js), &rc) != nil {
			t.Fatalf("compare: %d %s", code, errs)
		}
		for i, c := range rc.Ops {
			if c.Operation == "get" {
				return &rc.Ops[i]
			}
		}
		t.Fatalf("compare: no get in %s", js)
		return nil
	}
	for _, r := range runs {
		if s := readSummary(t, filepath.Dir(r.dir)); s.IntervalLength() != 200*time.Millisecond {
			t.Errorf("%s: intervals of %v, want 200ms", r.dir, s.IntervalLength())
		}
	}
	// The servers' p75 scale with their base: 25 ms is 75% less, give
	// or take what the machine adds to each request.
	want := float64(runs[1].base-runs[0].base) / float64(runs[0].base)
	ab := compare(runs[0], runs[1])
	t.Logf("100 ms against 25 ms: %s, p75 %.2f and %.2f ms, %+.1f%%, p %.3g, %d+%d intervals", ab.Test.Verdict, ab.BasePct, ab.CandPct, 100*ab.Change, ab.Test.P, ab.Test.N1, ab.Test.N2)
	if ab.Test.Verdict != analyze.Better || ab.Test.P >= 0.001 || ab.Test.N1 < 25 || ab.Test.N2 < 25 || math.Abs(ab.Change-want) > 0.05 {
		t.Errorf("100 ms against 25 ms: %s, p %.3g, %d+%d intervals, %+.1f%% (want %+.0f%%)", ab.Test.Verdict, ab.Test.P, ab.Test.N1, ab.Test.N2, 100*ab.Change, 100*want)
	}
	_, text, _ := runCLI(t, "compare", runs[0].dir, runs[1].dir)
	if say := fmt.Sprintf("get is %.0f%% faster at p75", -100*ab.Change); !strings.Contains(text, say) || strings.Contains(text, "too few samples") {
		t.Errorf("compare does not say %q:\n%s", say, text)
	}
	for i := 2; i < len(runs); i += 2 {
		aa := compare(runs[i], runs[i+1])
		t.Logf("A/A, seeds %d and %d: %s, p75 %.2f and %.2f ms, %+.1f%%, p %.3g, %d+%d intervals", runs[i].seed, runs[i+1].seed, aa.Test.Verdict, aa.BasePct, aa.CandPct, 100*aa.Change, aa.Test.P, aa.Test.N1, aa.Test.N2)
		if aa.Test.Verdict != analyze.NoChange || aa.Test.N1 < 25 || aa.Test.N2 < 25 {
			t.Errorf("A/A, seeds %d and %d: %s, p %.3g, %d+%d intervals, %+.1f%%", runs[i].seed, runs[i+1].seed, aa.Test.Verdict, aa.Test.P, aa.Test.N1, aa.Test.N2, 100*aa.Change)
		}
	}
}
