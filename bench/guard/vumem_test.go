package guard

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// vuEngines are the engines whose VUs TestVUMemory weighs, with the plan
// line that picks each. The goroutine engine's VUs each have their own
// connection, as the event loop's do: from a shared pool, how many
// connections 2,200 VUs open depends on how many are in flight at once
// (5.3 to 7.4 KB a VU over three runs).
var vuEngines = []struct{ name, http string }{
	{"loop", "{event_loop: true}"},
	{"goroutines", "{event_loop: false, connections: per-vu}"},
}

// TestVUMemory holds what a VU costs in memory to its budget: the bytes
// perflab allocates for a VU that sends one request and then waits, which
// it holds for as long as the VU lives (10,000 VUs in think time hold
// 10,000 times as much). Counted as the guard counts instructions, not
// timed: perflab runs with every allocation profiled
// (GODEBUG=memprofilerate=1), once with few VUs and once with many, and
// the difference of the bytes allocated, over the difference of the VUs,
// is a VU's, whatever the machine's speed (the allocations that depend on
// time, as the monitors', are the same in both runs but for a few KB,
// under 10 bytes a VU; each run ends once its VUs have been answered). A goroutine's stack is not among them: the
// goroutine engine's VUs cost their stacks besides.
func TestVUMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs perflab four times with a few thousand VUs")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go tool (go tool pprof)")
	}
	budgets := loadBudgets(t)
	bin := perflabBinary(t)
	srv := newCounted()
	defer srv.Close()
	dir := t.TempDir()
	const few, many = 200, 2200
	got := map[string]float64{}
	for _, e := range vuEngines {
		t.Run(e.name, func(t *testing.T) {
			var bytes [2]float64
			for i, vus := range []int{few, many} {
				bytes[i] = allocated(t, goBin, bin, dir, srv, e.http, vus)
			}
			perVU := math.Round((bytes[1] - bytes[0]) / (many - few))
			got[e.name] = perVU
			t.Logf("%s: %.0f bytes a VU (%.0f bytes with %d VUs, %.0f with %d)", e.name, perVU, bytes[0], few, bytes[1], many)
			if *update {
				return
			}
			budget, ok := budgets.VUBytes[e.name]
			if !ok {
				t.Fatalf("budgets.json has no vu_bytes for %q: add it (go test ./bench/guard -run TestVUMemory -update)", e.name)
			}
			margin := budget * budgets.margins("vu-"+e.name).VUBytes
			switch {
			case perVU > budget+margin:
				t.Errorf("%s: %.0f bytes a VU, over its budget of %.0f (+%.1f%%): a VU got bigger (go tool pprof -sample_index=alloc_space of perflab run --memprofile shows where)",
					e.name, perVU, budget, (perVU/budget-1)*100)
			case perVU < budget-margin:
				t.Errorf("%s: %.0f bytes a VU, under its budget of %.0f (-%.1f%%): lower the budget with the change that made it smaller (go test ./bench/guard -run TestVUMemory -update)",
					e.name, perVU, budget, (1-perVU/budget)*100)
			}
		})
	}
	if *update && !t.Failed() {
		if budgets.VUBytes == nil {
			budgets.VUBytes = map[string]float64{}
		}
		for name, b := range got {
			budgets.VUBytes[name] = b
		}
		saveBudgets(t, budgets)
	}
}

var profileTotal = regexp.MustCompile(`of ([0-9.]+)B total`)

// allocated runs vus VUs of one request each, then an hour's think time,
// cut short by SIGINT once the server has answered them all (on a busy
// machine, a few thousand VUs may take seconds to send their requests),
// and returns the bytes perflab allocated.
func allocated(t *testing.T, goBin, bin, dir string, srv *counted, http string, vus int) float64 {
	t.Helper()
	plan := filepath.Join(dir, fmt.Sprintf("vus-%d.yaml", vus))
	src := fmt.Sprintf(`name: vus
target: %s
interval: 1h
http: %s
scenarios:
  - name: wait
    vus: %d
    duration: 5m
    think: 1h
    flow:
      - {name: GET /, url: /}
`, srv.URL, http, vus)
	if err := os.WriteFile(plan, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, fmt.Sprintf("vus-%d.prof", vus))
	run := exec.Command(bin, "run", plan, "--out", filepath.Join(dir, "runs"), "--store", "off", "--quiet", "--memprofile", prof)
	run.Env = append(os.Environ(), "GODEBUG=memprofilerate=1")
	var out bytes.Buffer
	run.Stdout, run.Stderr = &out, &out
	srv.n.Store(0)
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(4 * time.Minute); srv.n.Load() < int64(vus) && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the last responses judged
	run.Process.Signal(os.Interrupt)
	err := run.Wait()
	if err != nil && run.ProcessState.ExitCode() != 130 { // interrupted, as asked
		t.Fatalf("perflab run: %v\n%s", err, out.Bytes())
	}
	if m := summaryLine.FindSubmatch(out.Bytes()); m == nil || string(m[1]) != strconv.Itoa(vus) || string(m[2]) != "0" {
		t.Fatalf("want %d requests and no error, got:\n%s", vus, out.Bytes())
	}
	top, err := exec.Command(goBin, "tool", "pprof", "-sample_index=alloc_space", "-unit=B", "-top", "-nodecount=1", bin, prof).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, top)
	}
	m := profileTotal.FindSubmatch(top)
	if m == nil {
		t.Fatalf("no total in go tool pprof's output:\n%s", top)
	}
	b, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// counted is a test server of the cases' answers that counts its requests.
type counted struct {
	*httptest.Server
	n atomic.Int64
}

func newCounted() *counted {
	c := &counted{}
	h := server()
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		c.n.Add(1)
	}))
	return c
}
