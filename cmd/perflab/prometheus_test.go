package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// freePort is a port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// promQuery asks Prometheus' HTTP API for an instant vector's values, by
// one label's value.
func promQuery(t *testing.T, base, q, by string) map[string]float64 {
	t.Helper()
	res, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("%s: %v %+v", q, err, body)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		v, _ := strconv.ParseFloat(r.Value[1].(string), 64)
		out[r.Metric[by]] = v
	}
	return out
}

// A real Prometheus scrapes perflab run --metrics-listen while the run
// goes, and receives its remote writes (--prometheus-remote-write); by
// either way, its counts at the end are the run's summary.json's, exactly.
func TestPrometheusScrapesTheRun(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		testenv.Missing(t, "prometheus is not installed (apt-get install prometheus; .ci/run does)")
	}
	bin := perflabBin(t)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		if r.URL.Path == "/b" && n.Add(1)%10 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	metricsPort, promPort := freePort(t), freePort(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(`global: {scrape_interval: 500ms, evaluation_interval: 10s}
scrape_configs:
  - job_name: perflab
    static_configs: [{targets: ["127.0.0.1:`+metricsPort+`"]}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address=127.0.0.1:"+promPort, "--web.enable-remote-write-receiver", "--log.level=warn")
	var plog strings.Builder
	p.Stderr = &plog
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Process.Kill()
	base := "http://127.0.0.1:" + promPort
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get(base + "/-/ready"); err == nil && res.StatusCode == 200 {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus did not start:\n%s", plog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Prometheus applies its targets some seconds after it starts: the run
	// starts once the target has been scraped (and found down) once.
	for {
		res, err := http.Get(base + "/api/v1/targets")
		if err == nil {
			var tg struct {
				Data struct {
					ActiveTargets []struct{ LastScrape time.Time }
				}
			}
			json.NewDecoder(res.Body).Decode(&tg)
			res.Body.Close()
			if len(tg.Data.ActiveTargets) > 0 && !tg.Data.ActiveTargets[0].LastScrape.IsZero() && tg.Data.ActiveTargets[0].LastScrape.Year() > 2000 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus never scraped its target:\n%s", plog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	plan := writePlan(t, "name: scraped\ntarget: "+srv.URL+"\ninterval: 500ms\nscenarios: [{name: shop, vus: 3, duration: 3s, flow: [{name: a, url: /a}, {name: b, url: /b}]}]\n")
	out := t.TempDir()
	code, _, errs := runCLIBin(t, bin, "run", plan, "--out", out, "--quiet", "--label", "release=P1",
		"--metrics-listen", "127.0.0.1:"+metricsPort, "--metrics-linger", "3s", "--prometheus-remote-write", base+"/api/v1/write")
	if code != exitOK {
		t.Fatalf("run: %d\n%s", code, errs)
	}
	s := readSummary(t, out)
	var failed, okB int64
	for _, op := range s.Stages[0].Operations {
		if op.Name == "b" {
			failed, okB = op.Errors.Total, op.Count-op.Errors.Total
		}
	}
	// Scraped series have the job's label; remote-written ones none.
	for _, job := range []string{"perflab", ""} {
		sel := fmt.Sprintf(`{run_id=%q,label_release="P1",stage="all",job=%q}`, s.RunID, job)
		requests := promQuery(t, base, "max_over_time(perflab_requests_total"+sel+"[5m])", "operation")
		errors := promQuery(t, base, "max_over_time(perflab_errors_total"+sel+"[5m])", "error")
		latency := promQuery(t, base, "max_over_time(perflab_latency_seconds_count"+sel+"[5m])", "operation")
		for _, op := range []string{"a", "b", "shop"} {
			if got, want := requests[op], float64(count(s, 0, op)); got != want || want == 0 {
				t.Errorf("job %q: %s: Prometheus has %v requests, summary.json %v", job, op, got, want)
			}
		}
		if got := errors["http_5xx"]; got != float64(failed) || failed == 0 {
			t.Errorf("job %q: errors: Prometheus %v, summary.json %d failed (%v)", job, got, failed, errors)
		}
		if got := latency["b"]; got != float64(okB) {
			t.Errorf("job %q: b's latency histogram counts %v, summary.json %d successful", job, got, okB)
		}
	}
	// The Grafana dashboard's queries, as Grafana would send them for this
	// run during its load: each is valid PromQL and finds the run's data
	// (but for what a closed model without transactions has none of).
	b, err := os.ReadFile(filepath.Join("..", "..", "grafana", "perflab-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	at := strconv.FormatFloat(float64(s.End.Add(-time.Second).UnixMilli())/1000, 'f', 3, 64)
	vars := strings.NewReplacer("$run_id", s.RunID, "$stage", ".*", "$__rate_interval", "2s", "$__range", "1m")
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			n := promQueryAt(t, base, vars.Replace(tg.Expr), at)
			empty := strings.Contains(p.Title, "Transactions") || strings.Contains(p.Title, "Start delay")
			if n == 0 && !empty {
				t.Errorf("dashboard panel %q: no data for the run (%s)", p.Title, tg.Expr)
			}
		}
	}
}

// promQueryAt runs an instant query at a time and returns how many series
// it gives; an invalid query fails the test.
func promQueryAt(t *testing.T, base, q, at string) int {
	t.Helper()
	res, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q) + "&time=" + at)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("%s: %v %s", q, err, body.Error)
	}
	return len(body.Data.Result)
}

// runCLIBin runs the perflab binary and returns its exit code and output.
func runCLIBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	c := exec.Command(bin, args...)
	var stdout, stderr strings.Builder
	c.Stdout, c.Stderr = &stdout, &stderr
	c.Run()
	return c.ProcessState.ExitCode(), stdout.String(), stderr.String()
}
