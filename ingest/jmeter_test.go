package ingest_test

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/internal/jmetertest"
	"github.com/perflab/perflab/jtl"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// shop is the server JMeter's plan runs against: every 7th GET /item
// says out of stock (the plan's assertion fails it), every 10th POST /cart
// answers 500. It counts what it served.
type shop struct {
	mu sync.Mutex
	n  map[string]int
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.n[r.URL.Path]++
	k := s.n[r.URL.Path]
	s.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	switch {
	case r.URL.Path == "/cart" && k%10 == 0:
		w.WriteHeader(http.StatusInternalServerError)
	case r.URL.Path == "/item" && k%7 == 0:
		fmt.Fprint(w, `{"stock":false}`)
		return
	}
	fmt.Fprint(w, `{"stock":true}`)
}

func (s *shop) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[path]
}

// importJTL imports a JMeter result file, at 1 s intervals, into a run
// directory under out.
func importJTL(t *testing.T, file, out string) (string, *results.Summary) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := jtl.NewReader(f, file, jtl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, sum, err := ingest.Run(ingest.JMeter(r), "jmeter", file, ingest.Options{Out: out, Interval: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum
}

// The results of a real JMeter run, CSV and XML, imported: each request
// the server served is an operation's, failures have the kinds perflab
// gives its own (a closed port, a failed assertion, a 500), the counts
// JMeter's summariser printed are the run's, and each latency is the
// file's, exactly.
func TestImportRealJMeter(t *testing.T) {
	for _, format := range []string{"csv", "xml"} {
		t.Run(format, func(t *testing.T) {
			srv := &shop{n: map[string]int{}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			file, log := jmetertest.Run(t, ts.URL, "plan.jmx", format)
			out := t.TempDir()
			dir, sum := importJTL(t, file, out)
			ops := map[string]results.Operation{}
			for _, op := range sum.Stages[0].Operations {
				ops[op.Name] = op
			}
			want := map[string]struct {
				count  int
				kind   metrics.Kind
				errors map[string]int64
			}{
				"GET closed port": {4, metrics.KindStep, map[string]int64{"connection_refused": 4}},
				"GET item":        {srv.count("/item"), metrics.KindStep, map[string]int64{"check_failed": int64(srv.count("/item") / 7)}},
				"POST cart":       {srv.count("/cart"), metrics.KindStep, map[string]int64{"http_5xx": int64(srv.count("/cart") / 10)}},
				"GET list":        {srv.count("/list"), metrics.KindStep, nil},
				"buy":             {100, metrics.KindTransaction, nil},
				"browse":          {100, metrics.KindTransaction, nil},
			}
			for name, w := range want {
				op, ok := ops[name]
				if !ok || op.Count != int64(w.count) || w.count == 0 || op.Kind != w.kind {
					t.Errorf("%s: %+v; want %d of kind %s", name, op, w.count, w.kind)
					continue
				}
				for k, n := range w.errors {
					if op.Errors.ByKind[k] != n || op.Errors.Total != n {
						t.Errorf("%s: errors %+v, want %s %d", name, op.Errors, k, n)
					}
				}
			}
			// A transaction fails as its first failed step did.
			buy := ops["buy"].Errors
			if buy.Total < max(ops["GET item"].Errors.Total, ops["POST cart"].Errors.Total) || buy.Total > ops["GET item"].Errors.Total+ops["POST cart"].Errors.Total ||
				buy.ByKind["check_failed"]+buy.ByKind["http_5xx"] != buy.Total {
				t.Errorf("buy's errors %+v", buy)
			}
			// JMeter's summariser counts the samples outside transactions
			// that generate a parent sample (GET list's are browse's).
			m := regexp.MustCompile(`summary =\s+(\d+) in .* Err:\s+(\d+)`).FindAllStringSubmatch(log, -1)
			if len(m) == 0 {
				t.Fatalf("no summariser line in JMeter's log:\n%s", log)
			}
			n, _ := strconv.ParseInt(m[len(m)-1][1], 10, 64)
			nErr, _ := strconv.ParseInt(m[len(m)-1][2], 10, 64)
			var steps, stepErrs int64
			for _, op := range sum.Stages[0].Operations {
				if op.Kind == metrics.KindStep && op.Name != "GET list" {
					steps, stepErrs = steps+op.Count, stepErrs+op.Errors.Total
				}
			}
			if steps != n || stepErrs != nErr {
				t.Errorf("JMeter's summariser: %d samples, %d errors; the run's %d, %d", n, nErr, steps, stepErrs)
			}
			if sum.Origin == nil || sum.Origin.Tool != "jmeter" || sum.Origin.Samples != 504 {
				t.Errorf("origin %+v", sum.Origin)
			}
			checkLatencies(t, file, format, sum)
			// The run is a run like any other: into the history and back.
			st, err := store.Open(filepath.Join(out, "h.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			id, err := results.Import(st, dir, map[string]string{"tool": "jmeter"})
			if err != nil {
				t.Fatal(err)
			}
			back, err := results.FromStore(st, id)
			if err != nil || back.Summary.Stages[0].Operations[0].Count != sum.Stages[0].Operations[0].Count || back.Summary.Origin == nil {
				t.Errorf("from the history: %v %+v", err, back)
			}
		})
	}
}

// checkLatencies reads the CSV result file on its own (encoding/csv) and
// checks each step's exact minimum, mean and maximum of its successful
// samples against the run's. (The XML file is JMeter's same run written
// the other way: its summary was checked above.)
func checkLatencies(t *testing.T, file, format string, sum *results.Summary) {
	t.Helper()
	if format != "csv" {
		return
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	type acc struct{ n, sum, min, max int64 }
	by := map[string]*acc{}
	for _, r := range rows[1:] {
		if r[7] != "true" {
			continue
		}
		ms, _ := strconv.ParseInt(r[1], 10, 64)
		a := by[r[2]]
		if a == nil {
			a = &acc{min: ms, max: ms}
			by[r[2]] = a
		}
		a.n, a.sum, a.min, a.max = a.n+1, a.sum+ms, min(a.min, ms), max(a.max, ms)
	}
	for _, op := range sum.Stages[0].Operations {
		a := by[op.Name]
		if a == nil {
			continue
		}
		s := op.Latency
		// The mean to the last bits a float64 division can differ in.
		if s.Min != float64(a.min) || s.Max != float64(a.max) || math.Abs(s.Mean-float64(a.sum)/float64(a.n)) > 1e-9 {
			t.Errorf("%s: min %v mean %v max %v ms; the file's %d %v %d", op.Name, s.Min, s.Mean, s.Max, a.min, float64(a.sum)/float64(a.n), a.max)
		}
	}
}

// Thread groups that JMeter ran one after another (a sweep: 2 threads,
// then 6) are the run's stages, each with its threads as VUs and its own
// requests, and the run's scaling is theirs.
func TestImportJMeterSweep(t *testing.T) {
	srv := &shop{n: map[string]int{}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	file, _ := jmetertest.Run(t, ts.URL, "sweep.jmx", "csv")
	_, sum := importJTL(t, file, t.TempDir())
	if len(sum.Stages) != 2 {
		t.Fatalf("%d stages: %+v", len(sum.Stages), sum.Stages)
	}
	var total int64
	for i, want := range []struct {
		name string
		vus  int
	}{{"users-2=2", 2}, {"users-6=6", 6}} {
		ph := sum.Stages[i]
		if ph.Name != want.name || len(ph.Load) != 1 || ph.Load[0].VUs != want.vus || len(ph.Operations) != 1 || ph.Operations[0].Count != int64(60*want.vus) {
			t.Errorf("stage %d: %s %+v %+v", i+1, ph.Name, ph.Load, ph.Operations)
		}
		if i > 0 && ph.Start.Before(sum.Stages[i-1].End) {
			t.Errorf("stage %d starts at %v, before stage %d ends at %v", i+1, ph.Start, i, sum.Stages[i-1].End)
		}
		total += ph.Operations[0].Count
	}
	if total != int64(srv.count("/item")) || sum.Scaling == nil {
		t.Errorf("%d requests, the server's %d; scaling %+v", total, srv.count("/item"), sum.Scaling)
	}
}
