package ingest_test

import (
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/internal/k6test"
	"github.com/perflab/perflab/k6out"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// k6Shop is the server k6's script runs against, counting what it
// served by the path's first segment: /items/N, /cart, /list answer at
// once, /fail with a 500, /slow after 300 ms (the script's timeout is
// 100 ms).
type k6Shop struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *k6Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	seg := "/" + strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0]
	s.mu.Lock()
	s.n[r.Method+" "+seg]++
	s.mu.Unlock()
	switch seg {
	case "/fail":
		w.WriteHeader(http.StatusInternalServerError)
	case "/slow":
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
	case "/cart":
		w.WriteHeader(http.StatusCreated)
	}
	w.Write([]byte(`{"ok":true}`))
}

func (s *k6Shop) count(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(s.n[key])
}

// closedPort is a port of 127.0.0.1 nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	return port
}

// importK6 imports a k6 result file, at 1 s intervals, into a run
// directory under out.
func importK6(t *testing.T, file, out string, times ...string) (string, *results.Summary) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := k6out.NewReader(f, file, ingest.K6Metrics(times...))
	if err != nil {
		t.Fatal(err)
	}
	dir, sum, err := ingest.Run(ingest.K6(r), "k6", file, ingest.Options{Out: out, Interval: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum
}

// k6Summary is what the test reads of k6's --summary-export: each
// metric's statistics (a trend's avg, min, max in ms; a counter's count;
// a rate's passes, the points that were true) and its checks.
type k6Summary struct {
	Metrics map[string]struct {
		Avg, Min, Max float64
		Count         int64
		Passes, Fails int64
	} `json:"metrics"`
	RootGroup struct {
		Checks map[string]struct{ Passes, Fails int64 } `json:"checks"`
	} `json:"root_group"`
}

// The results of a real k6 run (v1.1.0), its JSON and its CSV output,
// imported: each request the server served is an operation's, failures
// have the kinds perflab gives its own (a 500, a timeout, a refused
// connection), and the counts, errors, minimum, mean and maximum are k6's
// own end-of-test summary's, per request name, per group and for a
// script's own Trend. A scenario that started after the others ended is a
// stage of its own.
func TestImportRealK6(t *testing.T) {
	srv := &k6Shop{n: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := k6test.Run(t, "shop.js", "BASE="+ts.URL, "CLOSED="+closedPort(t))
	var ks k6Summary
	if b, err := os.ReadFile(filepath.Join(dir, "summary.json")); err != nil || json.Unmarshal(b, &ks) != nil {
		t.Fatalf("k6's summary: %v", err)
	}
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) {
			out := t.TempDir()
			// The CSV does not say that cart_time is a Trend of times.
			runDir, sum := importK6(t, filepath.Join(dir, "out."+format), out, "cart_time")
			if len(sum.Stages) != 2 || sum.Stages[0].Name != "browse,buy" || sum.Stages[1].Name != "later" {
				t.Fatalf("stages %+v", sum.Stages)
			}
			ops := map[string]results.Operation{}
			var steps, stepErrs int64
			for _, ph := range sum.Stages {
				for _, op := range ph.Operations {
					ops[op.Name] = op
					if op.Kind == metrics.KindStep {
						steps, stepErrs = steps+op.Count, stepErrs+op.Errors.Total
					}
				}
			}
			url := ts.URL
			want := map[string]struct {
				count  int64
				kind   metrics.Kind
				errors map[string]int64
			}{
				"GET /items/{id}": {srv.count("GET /items"), metrics.KindStep, nil},
				url + "/fail":     {srv.count("GET /fail"), metrics.KindStep, map[string]int64{"http_5xx": 10}},
				url + "/slow":     {srv.count("GET /slow"), metrics.KindStep, map[string]int64{"timeout": 10}},
				"POST /cart":      {srv.count("POST /cart"), metrics.KindStep, nil},
				"GET /list":       {srv.count("GET /list"), metrics.KindStep, nil},
				"checkout":        {12, metrics.KindTransaction, nil},
				"cart_time":       {12, metrics.KindTransaction, nil},
				"browse":          {10, metrics.KindScenario, nil},
				"buy":             {12, metrics.KindScenario, nil},
				"later":           {6, metrics.KindScenario, nil},
			}
			for name, w := range want {
				op, ok := ops[name]
				if !ok || op.Count != w.count || w.count == 0 || op.Kind != w.kind {
					t.Errorf("%s: %+v; want %d of kind %s", name, op, w.count, w.kind)
				}
				for k, n := range w.errors {
					if op.Errors.ByKind[k] != n || op.Errors.Total != n {
						t.Errorf("%s: errors %+v, want %s %d", name, op.Errors, k, n)
					}
				}
			}
			// The closed port's requests never reached the server.
			var closed results.Operation
			for name, op := range ops {
				if strings.HasSuffix(name, "/closed") {
					closed = op
				}
			}
			if closed.Count != 10 || closed.Errors.ByKind["connection_refused"] != 10 {
				t.Errorf("the closed port's requests: %+v", closed)
			}
			// k6's own counts: its requests and their failures
			// (http_req_failed's true points), its checks.
			if steps != ks.Metrics["http_reqs"].Count || stepErrs != ks.Metrics["http_req_failed"].Passes || steps != 10*4+12+6 {
				t.Errorf("the run's requests %d, errors %d; k6's summary %+v, %+v", steps, stepErrs, ks.Metrics["http_reqs"], ks.Metrics["http_req_failed"])
			}
			notes := strings.Join(sum.Origin.NotCarried, "\n")
			for name, c := range ks.RootGroup.Checks {
				if line := "check \"" + name + "\": " + strconv.FormatInt(c.Passes, 10) + " passed, " + strconv.FormatInt(c.Fails, 10) + " failed"; !strings.Contains(notes, line) {
					t.Errorf("the origin does not say %s:\n%s", line, notes)
				}
			}
			// Each latency is k6's: the minimum, mean and maximum of its
			// summary (to the ns k6's values are written in; the CSV
			// rounds them to the µs).
			tol := 1e-6
			if format == "csv" {
				tol = 1e-3
			}
			for name, metric := range map[string]string{
				"GET /items/{id}": "http_req_duration{name:GET /items/{id}}", "POST /cart": "http_req_duration{name:POST /cart}",
				"GET /list": "http_req_duration{name:GET /list}", "checkout": "group_duration{group:::checkout}", "cart_time": "cart_time",
			} {
				k, ok := ks.Metrics[metric]
				l := ops[name].Latency
				if !ok || math.Abs(l.Min-k.Min) > tol || math.Abs(l.Max-k.Max) > tol || math.Abs(l.Mean-k.Avg) > tol {
					t.Errorf("%s: min %v mean %v max %v ms; k6's %s: %+v", name, l.Min, l.Mean, l.Max, metric, k)
				}
			}
			if sum.Origin.Tool != "k6" || sum.Origin.Samples != steps+12+12+10+12+6 {
				t.Errorf("origin %+v", sum.Origin)
			}
			// The run is a run like any other: into the history and back.
			st, err := store.Open(filepath.Join(out, "h.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			id, err := results.Import(st, runDir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := results.FromStore(st, id); err != nil || back.Summary.Origin == nil || len(back.Summary.Stages) != 2 {
				t.Errorf("from the history: %v %+v", err, back)
			}
		})
	}
}

// k6's error codes and statuses have the kinds perflab gives the same
// failures of its own.
func TestK6Kind(t *testing.T) {
	for _, c := range []struct {
		metric string
		tags   k6out.Tags
		want   metrics.ErrKind
	}{
		{"http_req_duration", k6out.Tags{Status: "200", ExpectedResponse: "true"}, metrics.OK},
		{"http_req_duration", k6out.Tags{Status: "404", ExpectedResponse: "true"}, metrics.OK}, // the script expected it
		{"http_req_duration", k6out.Tags{Status: "200", ExpectedResponse: "false"}, metrics.HTTP2xx},
		{"http_req_duration", k6out.Tags{Status: "503", ExpectedResponse: "false", ErrorCode: "1503"}, metrics.HTTP5xx},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1050"}, metrics.Timeout},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1101"}, metrics.DNS},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1211"}, metrics.Connect},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1212"}, metrics.ConnRefused},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1220"}, metrics.ConnReset},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1201"}, metrics.Write},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1311"}, metrics.TLS},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1630"}, metrics.Read},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1020"}, metrics.NotSent},
		{"http_req_duration", k6out.Tags{Status: "0", ExpectedResponse: "false", ErrorCode: "1000"}, metrics.Other},
		// Before k6 0.31: no expected_response.
		{"http_req_duration", k6out.Tags{Status: "302"}, metrics.OK},
		{"http_req_duration", k6out.Tags{Status: "500"}, metrics.HTTP5xx},
		{"http_req_duration", k6out.Tags{Status: "0", ErrorCode: "1212"}, metrics.ConnRefused},
		{"grpc_req_duration", k6out.Tags{Status: "0"}, metrics.OK},
		{"grpc_req_duration", k6out.Tags{Status: "5"}, metrics.GRPCNotFound},
		{"grpc_req_duration", k6out.Tags{Status: "14"}, metrics.GRPCUnavailable},
		{"grpc_req_duration", k6out.Tags{Status: "0", ErrorCode: "1000"}, metrics.Other},
	} {
		if got := ingest.K6Kind(c.metric, c.tags); got != c.want {
			t.Errorf("%s %+v: %s, want %s", c.metric, c.tags, got, c.want)
		}
	}
}
