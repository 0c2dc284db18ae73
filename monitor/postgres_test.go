package monitor

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/perflab/perflab/internal/testenv"
)

// The postgres tests need the server named by PERFLAB_TEST_POSTGRES (which
// .ci/run starts), with pg_stat_statements preloaded and created in its
// database. The role needs no grant: it reads its own statements.
func postgresDSN(t *testing.T) string {
	return testenv.Getenv(t, "PERFLAB_TEST_POSTGRES", ".ci/run starts PostgreSQL and sets it; the postgres monitor is not tested")
}

func TestPostgresSlowQueries(t *testing.T) {
	dsn := postgresDSN(t)
	ctx := context.Background()
	m, err := Open(ctx, Spec{Name: "db", Kind: KindPostgres, DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for range 3 {
		if _, err := conn.Exec(ctx, "SELECT pg_sleep(0.15), 1 AS monitor_test"); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		if _, err := conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 100)"); err != nil {
			t.Fatal(err)
		}
	}

	pts := sampleNow(t, m)
	if v := mustValue(t, pts, MetricConnTotal); v < 1 {
		t.Errorf("connections_total = %v with the test's connection open", v)
	}
	if v := mustValue(t, pts, MetricConnIdle); v < 1 {
		t.Errorf("connections_idle = %v with the test's connection idle", v)
	}

	f, err := m.Close(ctx)
	if err != nil && !strings.Contains(err.Error(), "pg_read_all_stats") {
		t.Fatal(err)
	}
	if f.SlowThresholdMS != 100 || f.Statements < 2 {
		t.Errorf("threshold %v ms, %d statements", f.SlowThresholdMS, f.Statements)
	}
	var slow *SlowQuery
	for i, q := range f.SlowQueries {
		if strings.Contains(q.Query, "generate_series") || strings.Contains(q.Query, sqlMarker) {
			t.Errorf("fast or monitor query listed as slow: %+v", q)
		}
		// Its own shape: cmd/perflab's test, maybe running at the same
		// time on the same database, sleeps with a bare pg_sleep.
		if strings.Contains(q.Query, "pg_sleep") && strings.Contains(q.Query, "monitor_test") {
			slow = &f.SlowQueries[i]
		}
	}
	if slow == nil {
		t.Fatalf("pg_sleep is not in the slow queries %+v", f.SlowQueries)
	}
	if slow.Calls != 3 || slow.MeanMS < 150 || slow.TotalMS < 450 || slow.Monitor != "db" || slow.Database == "" {
		t.Errorf("slow query %+v: want 3 calls of at least 150 ms", *slow)
	}
}

// The statements' calls and time in all are sampled every interval: the
// analysis gives their mean time in a window.
func TestPostgresStatementTime(t *testing.T) {
	dsn := postgresDSN(t)
	ctx := context.Background()
	m := mustOpen(t, Spec{Name: "db", Kind: KindPostgres, DSN: dsn})
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	t0 := time.Now()
	before := sampleNow(t, m)
	for range 4 {
		if _, err := conn.Exec(ctx, "SELECT pg_sleep(0.05), 2 AS statement_time_test"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	t1 := time.Now()
	after, err := m.Sample(ctx, t1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		before[i].Time = t0
	}
	a := Analyze(append(before, after...), nil, []Window{{Name: "w", Start: t0, End: t1}})
	st := a.Windows[0].Monitors[0].Statements
	// Other tests may use the database meanwhile: at least the four.
	if st == nil || st.Calls < 4 || st.MeanMS*float64(st.Calls) < 200 {
		t.Errorf("statements %+v: want at least 4 calls and 200 ms in all", st)
	}
}

func TestPostgresWithoutStatements(t *testing.T) {
	dsn := postgresDSN(t)
	// The server's maintenance database has no pg_stat_statements.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres"
	_, err = Open(context.Background(), Spec{Kind: KindPostgres, DSN: u.String()})
	if err == nil {
		testenv.Missing(t, "pg_stat_statements is enabled in database postgres too: no database without it to test the error on")
	}
	if !errors.Is(err, errNoStatements) ||
		!strings.Contains(err.Error(), "shared_preload_libraries = 'pg_stat_statements'") ||
		!strings.Contains(err.Error(), "CREATE EXTENSION pg_stat_statements") {
		t.Errorf("err = %v, want how to enable pg_stat_statements", err)
	}
}

func TestExplainStatements(t *testing.T) {
	notLoaded := &pgconn.PgError{Code: "55000", Message: "pg_stat_statements must be loaded via shared_preload_libraries"}
	err := explainStatements(notLoaded, "app")
	if !errors.Is(err, errNoStatements) || !strings.Contains(err.Error(), "in database app") ||
		!strings.Contains(err.Error(), notLoaded.Message) {
		t.Errorf("err = %v", err)
	}
	other := &pgconn.PgError{Code: "28P01", Message: "password authentication failed"}
	if err := explainStatements(other, "app"); err != other {
		t.Errorf("an unrelated error became %v", err)
	}
}

func TestPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Open(ctx, Spec{Name: "db", Kind: KindPostgres, DSN: "postgres://u:p@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"})
	if err == nil || !strings.Contains(err.Error(), "monitor db:") {
		t.Errorf("err = %v", err)
	}
}
