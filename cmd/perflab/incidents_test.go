package main

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/results"
)

// runSummary runs a plan against target and reads its summary.json.
func runSummary(t *testing.T, target, flow string, duration string) *results.Summary {
	t.Helper()
	out := t.TempDir()
	plan := writePlan(t, "target: "+target+"\ninterval: 100ms\nhttp: {timeout: 2s}\nscenarios: [{name: s, vus: 4, duration: "+duration+", flow: "+flow+"}]\n")
	if code, stdout, errs := runCLI(t, "run", plan, "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*-*"))
	b, err := os.ReadFile(filepath.Join(dirs[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum results.Summary
	if err := json.Unmarshal(b, &sum); err != nil || sum.Drift == nil {
		t.Fatalf("%v: no drift in %s", err, b)
	}
	return &sum
}

// A real run whose service answers every third request with 503 from
// 4.8 s to 7.2 s of 12 s: one incident of the system, at those times, at
// the top of the verdict; not degraded. A busy machine may add incidents
// that the generator's host explains (a stall of the whole generator: its
// throughput 0 for a second), told as suspect: they are not the system's.
func TestIncidentBurstInARun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 s run")
	}
	srv := httptest.NewServer(runtest.Outage(4800*time.Millisecond, 7200*time.Millisecond))
	defer srv.Close()
	sum := runSummary(t, srv.URL, "[{name: b, url: /b}]", "12s")
	d := sum.Drift
	system := slices.DeleteFunc(slices.Clone(d.Incidents), func(inc results.Incident) bool { return inc.Suspect != "" })
	if d.Degraded || len(system) != 1 {
		t.Fatalf("verdict %s\nincidents %+v", d.Verdict, d.Incidents)
	}
	inc := system[0]
	// The run's first request is its start, give or take the first
	// interval's few milliseconds.
	if math.Abs(inc.StartS-4.8) > 0.35 || math.Abs(inc.EndS-7.2) > 0.35 {
		t.Errorf("from %.1f s to %.1f s: %s", inc.StartS, inc.EndS, inc.Sentence)
	}
	if !strings.HasPrefix(d.Verdict, "no lasting degradation") || !regexp.MustCompile(`\d incidents?( \(\d of them while the generator's host was busier or saturated: suspect\))?: from `).MatchString(d.Verdict) ||
		!strings.Contains(d.Verdict, "error ratio of b ") || !strings.Contains(d.Verdict, "HTTP 503 Service Unavailable") {
		t.Errorf("verdict: %s", d.Verdict)
	}
}

// A service that resets every connection for its first 1.5 s, then
// answers: an incident at the start, not a degradation.
func TestIncidentNotReadyInARun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s run")
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(2 * time.Millisecond) }))
	ln := srv.Listener
	var ready atomic.Int64
	srv.Listener = &resetting{Listener: ln, ready: &ready}
	srv.Start()
	defer srv.Close()
	sum := runSummary(t, srv.URL, "[{name: get, url: /}]", "10s")
	d := sum.Drift
	if d.Degraded || len(d.Incidents) == 0 {
		t.Fatalf("verdict %s\nincidents %+v", d.Verdict, d.Incidents)
	}
	inc := d.Incidents[0]
	// The stage starts a little before the first connection, which starts
	// the 1.5 s: on a busy machine, by up to a few intervals.
	if inc.StartS != 0 || inc.EndS < 1.4 || inc.EndS > 2.1 || !strings.Contains(inc.Sentence, "for the first ") || !regexp.MustCompile(`error ratio of get (9\d\.\d\d|100\.00)%`).MatchString(inc.Sentence) {
		t.Errorf("incident %+v", inc)
	}
}

// resetting is a listener that resets each connection it accepts in its
// first 1.5 s (from its first), then hands them on.
type resetting struct {
	net.Listener
	ready *atomic.Int64
}

func (l *resetting) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		now := time.Now().UnixNano()
		l.ready.CompareAndSwap(0, now+int64(1500*time.Millisecond))
		if now >= l.ready.Load() {
			return c, nil
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // a reset, at once
		}
		c.Close()
	}
}
