package lab

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/store"
)

// BenchmarkRendezvous is what the start barrier adds to a distributed
// run's start: from the moment the last of 3 workers has joined to the
// load's common start (Stage 1 returning in every worker), in a SQLite
// history, and in PostgreSQL where PERFLAB_TEST_POSTGRES names one. The
// issue's bound is 1 s; the start margin alone is startMargin (300 ms).
func BenchmarkRendezvous(b *testing.B) {
	stores := map[string]string{"sqlite": filepath.Join(b.TempDir(), "h.db")}
	if dsn := os.Getenv("PERFLAB_TEST_POSTGRES"); dsn != "" {
		// A schema of its own, made anew.
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []string{"DROP SCHEMA IF EXISTS lab_bench CASCADE", "CREATE SCHEMA lab_bench"} {
			if _, err := db.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
		stores["postgres"] = store.WithSearchPath(dsn, "lab_bench")
	}
	for name, path := range stores {
		b.Run(name, func(b *testing.B) {
			st, err := store.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			const n = 3
			var worst time.Duration
			var total time.Duration
			prefix := fmt.Sprintf("bench-%d", time.Now().UnixNano())
			for i := 0; i < b.N; i++ {
				id := fmt.Sprintf("%s-%d", prefix, i)
				cs := make([]*coordinator, n)
				for w := range n {
					if _, err := st.Join(id, w, n, "bench", []byte("name: bench"), "sig", time.Now(), nil); err != nil {
						b.Fatal(err)
					}
					cs[w] = &coordinator{st: st, w: Worker{RunID: id, Segment: plan.Segment{Index: w, Count: n}, JoinTimeout: time.Minute}, stderr: io.Discard}
				}
				joined := time.Now()
				var wg sync.WaitGroup
				var mu sync.Mutex
				var last time.Duration
				for _, c := range cs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := c.Join(context.Background()); err != nil {
							b.Error(err)
						}
						if err := c.Stage(context.Background(), 1); err != nil {
							b.Error(err)
						}
						mu.Lock()
						last = max(last, time.Since(joined))
						mu.Unlock()
					}()
				}
				wg.Wait()
				worst, total = max(worst, last), total+last
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/start")
			b.ReportMetric(float64(worst.Milliseconds()), "ms/worst-start")
		})
	}
}
