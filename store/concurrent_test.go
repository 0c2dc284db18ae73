package store

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Several processes open a new history at once (runs started together by
// a script): each migration runs once, every opener finds the schema up to
// date, and each begins its run.
func TestConcurrentOpeners(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		for trial := range 10 {
			concurrentOpeners(t, filepath.Join(t.TempDir(), fmt.Sprintf("h%d.db", trial)), func() {})
		}
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := postgres(t)
		for range 5 {
			concurrentOpeners(t, dsn, func() { resetSchema(t, dsn) })
		}
	})
}

func concurrentOpeners(t *testing.T, path string, reset func()) {
	t.Helper()
	reset()
	const n = 10
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			st, err := Open(path)
			if err != nil {
				errs[i] = err
				return
			}
			defer st.Close()
			errs[i] = st.Begin(fmt.Sprintf("run-%d", i), "p", []byte("name: p\n"), time.Now(), map[string]string{"i": fmt.Sprint(i)})
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(Filter{})
	if err != nil || len(runs) != n {
		t.Fatalf("%d runs in the history (%v), want %d", len(runs), err, n)
	}
	var versions []int
	rows, err := st.db.Query(`SELECT version FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		rows.Scan(&v)
		versions = append(versions, v)
	}
	if len(versions) != len(migrations) || versions[len(versions)-1] != len(migrations) {
		t.Errorf("schema versions %v, want each of 1..%d once", versions, len(migrations))
	}
}

// resetSchema empties the package's PostgreSQL schema (dsn with or without
// its search path).
func resetSchema(t *testing.T, dsn string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{"DROP SCHEMA IF EXISTS store_test CASCADE", "CREATE SCHEMA store_test"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("preparing the test schema: %v", err)
		}
	}
}

// A run id is claimed once: a second Begin of it is ErrExists.
func TestBeginTwice(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Begin("r", "p", nil, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Begin("r", "p", nil, time.Now(), nil); !errors.Is(err, ErrExists) {
		t.Errorf("second Begin: %v, want ErrExists", err)
	}
}

// A run stored as running whose process is gone is killed: on this host
// when its process is not there, anywhere when its heartbeat is older than
// StaleAfter; it ends at its last stored interval, or at its start.
func TestKilledRuns(t *testing.T) {
	st, err := Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A pid that was a process of this host and is not any more.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	host, _ := os.Hostname()
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	now := time.Now().UnixMilli()
	for _, r := range []struct {
		id, host  string
		pid       int
		heartbeat int64
	}{
		{"alive", host, os.Getpid(), now},
		{"dead-pid", host, dead, now},
		{"elsewhere-fresh", "another-host", 1, now},
		{"elsewhere-stale", "another-host", 1, now - (StaleAfter + time.Second).Milliseconds()},
		{"before-heartbeats", "", 0, 0},
	} {
		if err := st.Begin(r.id, "p", nil, t0, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := st.db.Exec(`UPDATE runs SET host = ?, pid = ?, heartbeat_ms = ? WHERE id = ?`, r.host, r.pid, r.heartbeat, r.id); err != nil {
			t.Fatal(err)
		}
	}
	// dead-pid stored one interval before it died.
	if _, err := st.db.Exec(`INSERT INTO histograms (run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist)
		VALUES ('dead-pid', 1, 'all', 's', 'a', 'step', 0, ?, ?, 1, 0, '')`, t0.UnixMilli(), t0.UnixMilli()+1500); err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alive": "running", "dead-pid": Killed, "elsewhere-fresh": "running", "elsewhere-stale": Killed, "before-heartbeats": Killed}
	for _, r := range runs {
		if r.Status != want[r.ID] {
			t.Errorf("%s: %s, want %s", r.ID, r.Status, want[r.ID])
		}
		switch {
		case r.ID == "dead-pid" && !r.End.Equal(t0.Add(1500*time.Millisecond)):
			t.Errorf("dead-pid ends %v, want its last interval's end %v", r.End, t0.Add(1500*time.Millisecond))
		case r.Status == Killed && r.ID != "dead-pid" && !r.End.Equal(t0):
			t.Errorf("%s ends %v, want its start %v (no interval stored)", r.ID, r.End, t0)
		}
	}
	// A heartbeat keeps a run of another host running.
	if _, err := st.db.Exec(`UPDATE runs SET heartbeat_ms = 0 WHERE id = 'elsewhere-fresh'`); err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat("elsewhere-fresh"); err != nil {
		t.Fatal(err)
	}
	if runs, _ := st.Runs(Filter{ID: "elsewhere-fresh"}); len(runs) != 1 || runs[0].Status != "running" {
		t.Errorf("after a heartbeat: %+v", runs)
	}
}
