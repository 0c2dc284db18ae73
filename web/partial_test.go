package web

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// steady is a run of 2.5 s at a constant 20 requests a second, at 1 s
// intervals, recorded in a history: its last interval, from 2 s to the
// stage's end, is partial.
type steady struct {
	st     *store.Store
	id     string
	dir    string // the run directory
	served int64  // the requests the server answered
	run    *results.Run
}

func steadyRun(t testing.TB) *steady {
	t.Helper()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	t.Cleanup(srv.Close)
	tmp := t.TempDir()
	path := filepath.Join(tmp, "steady.yaml")
	src := "name: steady\ntarget: " + srv.URL + "\ninterval: 1s\nscenarios: [{name: s, rate: 20, vus: 2, max_vus: 20, duration: 2500ms, flow: [{name: get, url: /get}]}]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(tmp, "h.db")
	res, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(tmp, "runs"), Store: db, Progress: "none"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rd, err := results.FromStore(st, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return &steady{st: st, id: res.RunID, dir: res.Dir, served: served.Load(), run: rd}
}

// allows says whether a rate of an interval of secs seconds is the
// load's: the server's requests over the stage's length, give or take
// the three requests that may land on either side of its edges.
func (s *steady) allows(rate, secs float64) bool {
	want := float64(s.served) / s.run.Summary.Stages[0].Duration
	return math.Abs(rate-want)*secs <= 3
}

// A stage's last interval, cut short by its end, is partial where its
// intervals are kept (the history, intervals.csv) and served (the live
// charts' series, the report's series); its rate, over its own length,
// is the load's as the others' are (20 a second, by the server's count),
// where over the whole interval it would look halved.
func TestPartialIntervalMarked(t *testing.T) {
	s := steadyRun(t)
	ph := s.run.Summary.Stages[0]
	nominal := s.run.Summary.IntervalLength()
	ivs := s.run.IntervalsOf(1, results.Operation{Scenario: "s", Name: "get", Kind: metrics.KindStep})
	if nominal != time.Second || len(ivs) != 3 {
		t.Fatalf("%d intervals of %v, want 3 of 1s", len(ivs), nominal)
	}
	var total int64
	for i, iv := range ivs {
		total += iv.Count
		if last := i == len(ivs)-1; iv.Partial(nominal) != last {
			t.Errorf("interval %d (%d ms): partial %v", i, iv.EndMs-iv.StartMs, iv.Partial(nominal))
		}
		if rate := float64(iv.Count) / iv.Seconds(); !s.allows(rate, iv.Seconds()) {
			t.Errorf("interval %d: %d requests in %.3f s, %.1f/s; the server answered %d in %.3f s", i, iv.Count, iv.Seconds(), rate, s.served, ph.Duration)
		}
	}
	if total != s.served || ph.Operations[0].Count != s.served {
		t.Errorf("the intervals hold %d requests, the stage %d, the server answered %d", total, ph.Operations[0].Count, s.served)
	}

	// intervals.csv: its partial column.
	f, err := os.Open(filepath.Join(s.dir, results.IntervalsCSV))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	at := slices.Index(rows[0], "partial")
	for _, r := range rows[1:] {
		if r[3] == string(metrics.KindStep) && at >= 0 {
			flags = append(flags, r[at])
		}
	}
	if at < 0 || !slices.Equal(flags, []string{"0", "0", "1"}) {
		t.Errorf("intervals.csv: header %v, the step's partial column %v", rows[0], flags)
	}

	// The live charts' series, as served.
	res, body := get(t, New(Options{Store: s.st}), "/api/runs/"+s.id+"/series")
	var ser struct {
		T, RPS  []float64
		P95     []*float64
		Partial []bool
	}
	if err := json.Unmarshal([]byte(body), &ser); res.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("%d %v\n%s", res.StatusCode, err, body)
	}
	if !slices.Equal(ser.Partial, []bool{false, false, true}) || len(ser.RPS) != 3 || ser.P95[2] == nil {
		t.Fatalf("series %s", body)
	}
	for i, rate := range ser.RPS {
		if secs := ivs[i].Seconds(); !s.allows(rate, secs) {
			t.Errorf("series: interval %d: %.1f/s over %.3f s; the server answered %d in %.3f s", i, rate, secs, s.served, ph.Duration)
		}
	}

	// The report's charts over time: the partial interval apart from the
	// lines, at its rate.
	charts, err := report.RunCharts(s.run)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range charts.Stages[0] {
		switch c.Slug {
		case "throughput-over-time", "p95-over-time":
			seen++
			if sr := c.Series[0]; len(sr.Points) != 2 || len(sr.Partial) != 1 || sr.Partial[0].X != 2 || !strings.Contains(c.SVG(), `class="partial"`) {
				t.Errorf("%s: %d points in the line, partial %v", c.Slug, len(sr.Points), sr.Partial)
			} else if c.Slug == "throughput-over-time" && !s.allows(sr.Partial[0].Y, ivs[2].Seconds()) {
				t.Errorf("%s: the partial interval at %.1f/s", c.Slug, sr.Partial[0].Y)
			}
		}
	}
	if seen != 2 {
		t.Errorf("%d of the 2 charts over time", seen)
	}
}
