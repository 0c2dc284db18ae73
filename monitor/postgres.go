package monitor

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sqlMarker starts every statement the monitor runs, so that the slow-query
// table can leave them out (pg_stat_statements keeps comments in the text).
const sqlMarker = "/* perflab monitor */"

// maxQueryText bounds the text of a statement in the slow-query table.
const maxQueryText = 4096

// pgMonitor watches a PostgreSQL server: connections by state each interval
// (pg_stat_activity), and the statements executed between Open and Close
// (the delta of two pg_stat_statements snapshots). It sees other roles'
// statements and connection states only if its role is a superuser or has
// pg_read_all_stats; Close reports, as an error, statements it could not see.
type pgMonitor struct {
	spec  Spec
	conn  *pgx.Conn
	stmts string // the snapshot query for this server's version
	sums  string // the statements' calls and time in all, for this version
	start map[stmtKey]stmtStat
}

// stmtKey names a pg_stat_statements entry.
type stmtKey struct {
	user, db uint32
	queryID  int64
	toplevel bool
}

type stmtStat struct {
	calls   int64
	totalMS float64
	query   string
	db      string
}

// errNoStatements is wrapped by the error of a server without
// pg_stat_statements.
var errNoStatements = errors.New("pg_stat_statements is not enabled")

func openPostgres(ctx context.Context, s Spec) (*pgMonitor, error) {
	if s.SlowThreshold == 0 {
		s.SlowThreshold = DefaultSlowThreshold
	}
	m := &pgMonitor{spec: s}
	if err := m.connect(ctx); err != nil {
		return nil, err
	}
	start, _, err := m.snapshot(ctx)
	if err != nil {
		m.conn.Close(ctx)
		return nil, err
	}
	m.start = start
	return m, nil
}

// connect opens the connection, again after it broke, and picks the
// snapshot query for the server's version: total_exec_time since 13
// (total_time before), toplevel since 14.
func (m *pgMonitor) connect(ctx context.Context) error {
	if m.conn != nil && !m.conn.IsClosed() {
		return nil
	}
	conn, err := pgx.Connect(ctx, m.spec.DSN)
	if err != nil {
		return err
	}
	var version int
	if err := conn.QueryRow(ctx, sqlMarker+" SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		conn.Close(ctx)
		return err
	}
	total, toplevel := "total_exec_time", "toplevel"
	if version < 130000 {
		total = "total_time"
	}
	if version < 140000 {
		toplevel = "true"
	}
	m.conn = conn
	m.sums = fmt.Sprintf(sqlMarker+` SELECT coalesce(sum(calls), 0)::float8, coalesce(sum(%s), 0)::float8
		FROM pg_stat_statements WHERE %s AND query NOT LIKE '%s%%'`, total, toplevel, sqlMarker)
	m.stmts = fmt.Sprintf(sqlMarker+` SELECT s.userid, s.dbid, coalesce(s.queryid, 0), %s, coalesce(d.datname, ''),
		s.query, s.calls, s.%s
		FROM pg_stat_statements s LEFT JOIN pg_database d ON d.oid = s.dbid`, toplevel, total)
	return nil
}

func (m *pgMonitor) Spec() Spec { return m.spec }

// Sample counts client connections by state.
func (m *pgMonitor) Sample(ctx context.Context, now time.Time) ([]Point, error) {
	if err := m.connect(ctx); err != nil {
		return nil, err
	}
	var total, active, idle, idleInTx, waiting int64
	err := m.conn.QueryRow(ctx, sqlMarker+` SELECT count(*),
		count(*) FILTER (WHERE state = 'active'),
		count(*) FILTER (WHERE state = 'idle'),
		count(*) FILTER (WHERE state LIKE 'idle in transaction%'),
		count(*) FILTER (WHERE wait_event_type = 'Lock')
		FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`).
		Scan(&total, &active, &idle, &idleInTx, &waiting)
	if err != nil {
		return nil, err
	}
	p := points{now: now, monitor: m.spec.Name}
	// The statements in all, for their mean time over each interval; a
	// server whose pg_stat_statements cannot be read still gives its
	// connections.
	var calls, ms float64
	if err := m.conn.QueryRow(ctx, m.sums).Scan(&calls, &ms); err == nil {
		p.add(MetricStatementCalls, calls)
		p.add(MetricStatementTime, ms)
	}
	p.add(MetricConnTotal, float64(total))
	p.add(MetricConnActive, float64(active))
	p.add(MetricConnIdle, float64(idle))
	p.add(MetricConnIdleInTx, float64(idleInTx))
	p.add(MetricConnLockWaiter, float64(waiting))
	return p.list, nil
}

// snapshot reads pg_stat_statements, leaving out the monitor's own
// statements, and counts the entries hidden by a lack of privileges.
func (m *pgMonitor) snapshot(ctx context.Context) (map[stmtKey]stmtStat, int, error) {
	rows, err := m.conn.Query(ctx, m.stmts)
	if err != nil {
		return nil, 0, explainStatements(err, m.conn.Config().Database)
	}
	out := map[stmtKey]stmtStat{}
	hidden := 0
	var (
		k stmtKey
		s stmtStat
	)
	_, err = pgx.ForEachRow(rows, []any{&k.user, &k.db, &k.queryID, &k.toplevel, &s.db, &s.query, &s.calls, &s.totalMS}, func() error {
		switch {
		case k.queryID == 0:
			hidden++
		case !strings.HasPrefix(s.query, sqlMarker):
			out[k] = s
		}
		return nil
	})
	if err != nil {
		return nil, 0, explainStatements(err, m.conn.Config().Database)
	}
	return out, hidden, nil
}

// explainStatements turns the errors of a database without
// pg_stat_statements into one that says how to enable it.
func explainStatements(err error, database string) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case "42P01", // undefined_table: no CREATE EXTENSION in this database
		"55000": // object_not_in_prerequisite_state: not in shared_preload_libraries
	default:
		return err
	}
	return fmt.Errorf("%w in database %s (%s): set shared_preload_libraries = 'pg_stat_statements' in postgresql.conf, "+
		"restart PostgreSQL, then run CREATE EXTENSION pg_stat_statements; in that database",
		errNoStatements, database, pgErr.Message)
}

// Close takes the second snapshot and returns the statements executed
// since Open whose mean execution time exceeded the threshold.
func (m *pgMonitor) Close(ctx context.Context) (*Final, error) {
	if err := m.connect(ctx); err != nil {
		return nil, err
	}
	defer m.conn.Close(ctx)
	end, hidden, err := m.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	f := &Final{
		Monitor:         m.spec.Name,
		SlowThresholdMS: float64(m.spec.SlowThreshold) / float64(time.Millisecond),
		SlowQueries:     []SlowQuery{},
	}
	for k, e := range end {
		calls, totalMS := e.calls, e.totalMS
		if s, ok := m.start[k]; ok && s.calls <= e.calls {
			calls -= s.calls
			totalMS -= s.totalMS
		} // else the entry is new, or was evicted or reset since: all of it is in the run
		if calls <= 0 {
			continue
		}
		f.Statements++
		if mean := totalMS / float64(calls); mean > f.SlowThresholdMS {
			f.SlowQueries = append(f.SlowQueries, SlowQuery{
				Monitor: m.spec.Name, Database: e.db, Query: clip(e.query, maxQueryText),
				Calls: calls, MeanMS: mean, TotalMS: totalMS,
			})
		}
	}
	sort.Slice(f.SlowQueries, func(i, j int) bool { return f.SlowQueries[i].TotalMS > f.SlowQueries[j].TotalMS })
	if hidden > 0 {
		err = fmt.Errorf("pg_stat_statements hides %d entries of other roles from role %s: "+
			"grant it pg_read_all_stats for a complete slow-query table", hidden, m.conn.Config().User)
	}
	return f, err
}

// clip shortens s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
