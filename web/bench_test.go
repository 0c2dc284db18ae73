package web

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// BenchmarkRunPage24h opens the page of a 24-hour run at 10 s intervals
// with 20 operations from a SQLite history, as a browser does: the page
// (the report's tables and charts) and its live charts' series. The
// issue's bound is 2 s.
func BenchmarkRunPage24h(b *testing.B) {
	st := longHistory(b)
	warm := New(Options{Store: st})
	for _, path := range []string{"/runs/long", "/api/runs/long/series", "cached /runs/long", "cached /api/runs/long/series"} {
		b.Run(path, func(b *testing.B) {
			url, cached := strings.CutPrefix(path, "cached ")
			if cached { // opened before: from the finished run's cache
				warm.ServeHTTP(httptest.NewRecorder(), newRequest(http.MethodGet, url, nil))
			} else {
				url = path
			}
			var took time.Duration
			for i := 0; i < b.N; i++ {
				app := warm
				if !cached {
					app = New(Options{Store: st}) // a first open: nothing cached
				}
				w := httptest.NewRecorder()
				t0 := time.Now()
				app.ServeHTTP(w, newRequest(http.MethodGet, url, nil))
				took += time.Since(t0)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", path, w.Code, w.Body.String())
				}
				b.ReportMetric(float64(w.Body.Len()), "bytes")
			}
			b.ReportMetric(took.Seconds()/float64(b.N), "s/page")
		})
	}
}

// longHistory is a SQLite history holding runtest.LongRun as run "long",
// completed.
func longHistory(b *testing.B) *store.Store {
	rd := runtest.LongRun(b, 20)
	s := rd.Summary
	s.Status, s.Plan.Name, s.Start, s.End = metrics.StatusCompleted, "longevity", s.Stages[0].Start, s.Stages[0].End
	s.Duration = s.End.Sub(s.Start).Seconds()
	s.Interval = 10
	dir := filepath.Join(b.TempDir(), "long")
	if err := results.WriteDir(rd, dir); err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if _, err := results.Import(st, dir, nil); err != nil {
		b.Fatal(err)
	}
	return st
}
