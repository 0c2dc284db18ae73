package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite", pure Go

	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/metrics"
)

// Store is a run history in a SQLite file or a PostgreSQL database.
type Store struct {
	db       *sql.DB
	postgres bool
}

// q adapts a query's ? placeholders to the database.
func (s *Store) q(query string) string {
	if !s.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// migrations are applied in order; each runs once, recorded in
// schema_version. Never edit a released one: add the next. The SQL is
// common to SQLite and PostgreSQL.
var migrations = [][]string{
	{
		`CREATE TABLE runs (
			id TEXT PRIMARY KEY,
			plan TEXT NOT NULL,
			plan_hash TEXT NOT NULL,
			plan_source TEXT NOT NULL,
			status TEXT NOT NULL,
			error TEXT NOT NULL DEFAULT '',
			start_ms BIGINT NOT NULL,
			end_ms BIGINT NOT NULL DEFAULT 0,
			labels TEXT NOT NULL DEFAULT '{}',
			summary TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE labels (
			run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			key TEXT NOT NULL,
			value TEXT NOT NULL,
			PRIMARY KEY (run_id, key)
		)`,
		`CREATE INDEX labels_kv ON labels(key, value)`,
		// A histogram of successful latencies (µs) per run, stage,
		// operation and interval (ivl -1: the whole stage), HdrHistogram
		// V2 compressed and base64 encoded.
		`CREATE TABLE histograms (
			run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			phase BIGINT NOT NULL,
			phase_name TEXT NOT NULL,
			scenario TEXT NOT NULL,
			operation TEXT NOT NULL,
			kind TEXT NOT NULL,
			ivl BIGINT NOT NULL,
			start_ms BIGINT NOT NULL,
			end_ms BIGINT NOT NULL,
			count BIGINT NOT NULL,
			errors BIGINT NOT NULL,
			hist TEXT NOT NULL,
			PRIMARY KEY (run_id, phase, scenario, operation, ivl)
		)`,
	},
	{
		// What the monitors sampled during a run (resources.csv).
		`CREATE TABLE samples (
			run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			t_ms BIGINT NOT NULL,
			monitor TEXT NOT NULL,
			metric TEXT NOT NULL,
			value DOUBLE PRECISION NOT NULL
		)`,
		`CREATE INDEX samples_run ON samples(run_id, t_ms)`,
	},
	{
		// The kind joins the key: a scenario named like its step keeps
		// its own histograms.
		`CREATE TABLE histograms_v3 (
			run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			phase BIGINT NOT NULL,
			phase_name TEXT NOT NULL,
			scenario TEXT NOT NULL,
			operation TEXT NOT NULL,
			kind TEXT NOT NULL,
			ivl BIGINT NOT NULL,
			start_ms BIGINT NOT NULL,
			end_ms BIGINT NOT NULL,
			count BIGINT NOT NULL,
			errors BIGINT NOT NULL,
			hist TEXT NOT NULL,
			PRIMARY KEY (run_id, phase, scenario, operation, kind, ivl)
		)`,
		`INSERT INTO histograms_v3 SELECT run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist FROM histograms`,
		`DROP TABLE histograms`,
		`ALTER TABLE histograms_v3 RENAME TO histograms`,
	},
	{
		// Open models: the service time (from the send) and the start
		// delay (from the due time to the send) beside the latency; ''
		// where the operation has none.
		`ALTER TABLE histograms ADD COLUMN service_time TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE histograms ADD COLUMN start_delay TEXT NOT NULL DEFAULT ''`,
	},
	{
		// Who runs a run, and when it last said it was alive: a run whose
		// process is gone is shown as killed, not running for ever.
		`ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE runs ADD COLUMN pid BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN heartbeat_ms BIGINT NOT NULL DEFAULT 0`,
	},
	{
		// A finished run's exact statistics per phase and operation
		// (totals.jsonl of its run directory), by which runs merge
		// exactly; '' for runs stored before, or not finished.
		`ALTER TABLE runs ADD COLUMN totals TEXT NOT NULL DEFAULT ''`,
	},
	{
		// Distributed runs: a worker's part is a run of its own whose
		// parent is the distributed run; the workers register, meet at
		// barriers and end in workers, and share the run's setup, start
		// and teardown in distributed (distributed.go).
		`ALTER TABLE runs ADD COLUMN parent TEXT NOT NULL DEFAULT ''`,
		`CREATE TABLE distributed (
			run_id TEXT PRIMARY KEY,
			workers BIGINT NOT NULL,
			plan_hash TEXT NOT NULL,
			created_ms BIGINT NOT NULL,
			setup TEXT NOT NULL DEFAULT '',
			setup_error TEXT NOT NULL DEFAULT '',
			setup_vars TEXT NOT NULL DEFAULT '{}',
			start_ms BIGINT NOT NULL DEFAULT 0,
			teardown BIGINT NOT NULL DEFAULT -1,
			abort TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE TABLE workers (
			run_id TEXT NOT NULL,
			idx BIGINT NOT NULL,
			part TEXT NOT NULL,
			host TEXT NOT NULL,
			pid BIGINT NOT NULL,
			registered_ms BIGINT NOT NULL,
			heartbeat_ms BIGINT NOT NULL,
			stage BIGINT NOT NULL DEFAULT 0,
			ivl BIGINT NOT NULL DEFAULT -1,
			state TEXT NOT NULL DEFAULT 'running',
			ended_ms BIGINT NOT NULL DEFAULT 0,
			PRIMARY KEY (run_id, idx)
		)`,
	},
	{
		// Each histogram's main percentiles (µs; -1 where not known, as
		// for rows stored before): a day of intervals is charted without
		// decoding 172,800 histograms, and SQL can chart them directly.
		`ALTER TABLE histograms ADD COLUMN p50_us BIGINT NOT NULL DEFAULT -1`,
		`ALTER TABLE histograms ADD COLUMN p95_us BIGINT NOT NULL DEFAULT -1`,
		`ALTER TABLE histograms ADD COLUMN p99_us BIGINT NOT NULL DEFAULT -1`,
		`ALTER TABLE histograms ADD COLUMN max_us BIGINT NOT NULL DEFAULT -1`,
		// Each interval's steps together (every request of the interval):
		// what a run page's live charts draw, read without decoding.
		`CREATE TABLE traffic (
			run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
			phase BIGINT NOT NULL,
			ivl BIGINT NOT NULL,
			start_ms BIGINT NOT NULL,
			end_ms BIGINT NOT NULL,
			count BIGINT NOT NULL,
			errors BIGINT NOT NULL,
			p50_us BIGINT NOT NULL,
			p95_us BIGINT NOT NULL,
			p99_us BIGINT NOT NULL,
			max_us BIGINT NOT NULL,
			PRIMARY KEY (run_id, phase, ivl)
		)`,
	},
	{
		// A finished run's verdict (Verdict): its thresholds (-1: not
		// known), its drift, its open models' dropped iterations and its
		// total, read from its summary as it is stored (fillVerdicts for
		// the runs stored before), so that a list of runs reads no summary.
		`ALTER TABLE runs ADD COLUMN thresholds BIGINT NOT NULL DEFAULT -1`,
		`ALTER TABLE runs ADD COLUMN thresholds_failed BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN degraded BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN dropped BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN due BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN requests BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN errors BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE runs ADD COLUMN rps DOUBLE PRECISION NOT NULL DEFAULT 0`,
		// An open model's iterations dropped in each interval, on its
		// scenario's rows: a distributed run's threshold of dropped
		// iterations that aborts is judged on them; 0 in rows stored
		// before, and in the intervals of runs imported (a run directory
		// keeps the stage's dropped iterations, not each interval's).
		`ALTER TABLE histograms ADD COLUMN dropped BIGINT NOT NULL DEFAULT 0`,
	},
	{
		// The latency of the failed operations that were sent (KO), as
		// hist is the successful ones': '' where none failed, and in the
		// rows stored before.
		`ALTER TABLE histograms ADD COLUMN failed TEXT NOT NULL DEFAULT ''`,
	},
	{
		// On a scenario's own rows of an interval, the most VUs in an
		// iteration at once (metrics.Interval.PeakVUs); -1 on the other
		// rows, and in the rows stored before.
		`ALTER TABLE histograms ADD COLUMN peak_vus BIGINT NOT NULL DEFAULT -1`,
	},
	{
		// The bytes received in response bodies (metrics.Stats.Bytes),
		// -1 in the rows stored before; and the failures by kind and
		// message (metrics.Stats.Failures) as JSON, '' where none failed
		// and in the rows stored before.
		`ALTER TABLE histograms ADD COLUMN bytes BIGINT NOT NULL DEFAULT -1`,
		`ALTER TABLE histograms ADD COLUMN failures TEXT NOT NULL DEFAULT ''`,
	},
	{
		// The files the plan includes (metrics.PlanFile), as JSON: with
		// plan_source, the plan whole; '' where it includes none and in
		// the rows stored before.
		`ALTER TABLE runs ADD COLUMN plan_includes TEXT NOT NULL DEFAULT ''`,
	},
}

// migrationFills are what migrations compute in Go rather than SQL, by
// the number of the migration they follow, in its transaction.
var migrationFills = map[int]func(ctx context.Context, conn *sql.Conn, q func(string) string) error{
	9: fillVerdicts,
}

// DefaultPath is the store used when none is named: beside the run directories.
func DefaultPath(out string) string { return filepath.Join(out, "perflab.db") }

// IsPostgres reports whether a store name is a PostgreSQL URL.
func IsPostgres(name string) bool {
	return strings.HasPrefix(name, "postgres://") || strings.HasPrefix(name, "postgresql://")
}

// Open opens the store named by path — a SQLite file (created if needed) or
// a postgres:// URL — and brings its schema up to date.
func Open(path string) (*Store, error) {
	if IsPostgres(path) {
		db, err := sql.Open("pgx", path)
		if err != nil {
			return nil, err
		}
		s := &Store{db: db, postgres: true}
		if err := s.migrate(); err != nil {
			db.Close()
			return nil, fmt.Errorf("store %s: %w", Redact(path), err)
		}
		return s, nil
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	// Processes opening a new file together (runs started at once) can
	// meet SQLITE_BUSY where SQLite does not wait its busy timeout (while
	// one of them turns the file to WAL, or recovers its log): such an
	// open is tried again, for up to openPatience.
	var err error
	for wait, deadline := 10*time.Millisecond, time.Now().Add(openPatience); ; wait = min(2*wait, 500*time.Millisecond) {
		var s *Store
		if s, err = openSQLite(path); err == nil {
			return s, nil
		}
		if !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return nil, fmt.Errorf("store %s: %w", path, err)
		}
		time.Sleep(wait)
	}
}

// openPatience is how long opening a SQLite history waits for others
// opening it at the same time.
const openPatience = 30 * time.Second

func openSQLite(path string) (*Store, error) {
	db, err := sqliteDB(path)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// sqliteDB opens a SQLite file as the history uses it.
func sqliteDB(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // SQLite: one writer; keeps transactions simple
	return db, nil
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (the database is
// locked by another connection).
func isBusy(err error) bool {
	return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// migrateLock is the PostgreSQL advisory lock that serialises migrations
// of concurrent openers ("perflab" in ASCII).
const migrateLock = 0x706572666c6162

// migrate brings the schema up to date. Several processes may open a new
// history at once (runs started together by a script): the version is read
// and the migrations applied in one transaction that holds the database's
// write lock (SQLite's BEGIN IMMEDIATE, a PostgreSQL advisory lock), so
// each migration runs once and the others find it done.
func (s *Store) migrate() error { return s.migrateTo(len(migrations)) }

// migrateTo applies the migrations up to the n-th (a test makes the
// history of an earlier perflab so).
func (s *Store) migrateTo(n int) error {
	ctx := context.Background()
	// An up-to-date schema needs no lock.
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err == nil && v == n {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	begin := "BEGIN IMMEDIATE"
	if s.postgres {
		begin = "BEGIN"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			conn.ExecContext(ctx, "ROLLBACK")
		}
	}()
	if s.postgres {
		if _, err := conn.ExecContext(ctx, fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, migrateLock)); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this perflab knows (%d)", v, len(migrations))
	}
	for i := v; i < n; i++ {
		for _, stmt := range migrations[i] {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if fill := migrationFills[i+1]; fill != nil {
			if err := fill(ctx, conn, s.q); err != nil {
				return fmt.Errorf("migration %d: %w", i+1, err)
			}
		}
		if _, err := conn.ExecContext(ctx, s.q(`INSERT INTO schema_version (version) VALUES (?)`), i+1); err != nil {
			return err
		}
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return err
	}
	done = true
	return nil
}

// Run is a stored run.
type Run struct {
	ID       string            `json:"id"`
	Plan     string            `json:"plan"`
	PlanHash string            `json:"plan_hash"`
	Status   string            `json:"status"`
	Error    string            `json:"error,omitempty"`
	Start    time.Time         `json:"start"`
	End      time.Time         `json:"end"`
	Labels   map[string]string `json:"labels"`
	// Host and PID are the process that made the run, and Heartbeat when
	// it last said it was alive (zero for runs imported or stored before
	// perflab kept them).
	Host      string    `json:"host,omitempty"`
	PID       int       `json:"pid,omitempty"`
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// Parent is, for a worker's part of a distributed run, that run.
	Parent string `json:"parent,omitempty"`
	// Verdict is what its summary says beyond its status; nil for a run
	// that has none (running, killed) or whose summary did not read.
	Verdict *Verdict `json:"verdict,omitempty"`
}

// Killed is the status of a run whose process ended without finishing it
// (kill -9, a machine lost, a CI job's timeout): a stored run still
// "running" whose process is gone, or that has not said it was alive for
// StaleAfter.
const Killed = metrics.StatusKilled

// HeartbeatEvery is how often a running run says it is alive; StaleAfter
// how long without that makes it killed, for a run made on another machine
// (on this one, its process is looked up).
const (
	HeartbeatEvery = 10 * time.Second
	StaleAfter     = 6 * HeartbeatEvery
)

// PlanHash identifies a plan's text, with the files it includes: of a
// plan that includes none, the hash of its text alone.
func PlanHash(src []byte, includes ...metrics.PlanFile) string {
	h := sha256.New()
	h.Write(src)
	for _, f := range includes {
		// Each length said before its text: no two lists hash alike.
		fmt.Fprintf(h, "\x00%d:%s%d:%s", len(f.Path), f.Path, len(f.Source), f.Source)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Begin records a run that is starting, made by this process. A run of that
// id in the history already is ErrExists.
func (s *Store) Begin(id, plan string, planSource []byte, start time.Time, labels map[string]string, includes ...metrics.PlanFile) error {
	lj, _ := json.Marshal(labels)
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	host, _ := os.Hostname()
	if _, err := tx.Exec(s.q(`INSERT INTO runs (id, plan, plan_hash, plan_source, status, start_ms, labels, host, pid, heartbeat_ms) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)`),
		id, plan, PlanHash(planSource, includes...), string(planSource), start.UnixMilli(), string(lj), host, os.Getpid(), time.Now().UnixMilli()); err != nil {
		if isUnique(err) {
			return fmt.Errorf("%w: run %s", ErrExists, id)
		}
		return err
	}
	if len(includes) > 0 {
		ij, err := json.Marshal(includes)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(s.q(`UPDATE runs SET plan_includes = ? WHERE id = ?`), string(ij), id); err != nil {
			return err
		}
	}
	for k, v := range labels {
		if _, err := tx.Exec(s.q(`INSERT INTO labels (run_id, key, value) VALUES (?, ?, ?)`), id, k, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// isUnique reports whether err is a violated uniqueness constraint.
func isUnique(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" // unique_violation
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Heartbeat says that a running run's process is alive.
func (s *Store) Heartbeat(id string) error {
	_, err := s.db.Exec(s.q(`UPDATE runs SET heartbeat_ms = ? WHERE id = ? AND status = 'running'`), time.Now().UnixMilli(), id)
	return err
}

// Interval stores one interval of a stage: a histogram per operation that
// ran in it. Each interval is its own transaction, so a crash loses at most
// the interval being written.
func (s *Store) Interval(runID string, ph *metrics.Phase, iv *metrics.Interval) error {
	return s.histograms(runID, ph, iv)
}

// histograms stores a row per operation of iv.Ops, and iv.PeakVUs (by
// scenario, nil for a stage's totals, whose iv.Index is -1) on the
// scenarios' own rows: a scenario's row is written in an interval where
// VUs were busy though no iteration ended, as intervals.csv's is. The
// histograms' encodings are iv's (metrics.Interval.Digest): those the run
// directory's log made of the same interval.
func (s *Store) histograms(runID string, ph *metrics.Phase, iv *metrics.Interval) error {
	index, start, end, ops, peak := iv.Index, iv.Start, iv.End, iv.Ops, iv.PeakVUs
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(s.q(`INSERT INTO histograms (` + histogramColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, phase, scenario, operation, kind, ivl) DO UPDATE SET
			start_ms = excluded.start_ms, end_ms = excluded.end_ms, count = excluded.count, errors = excluded.errors, hist = excluded.hist,
			service_time = excluded.service_time, start_delay = excluded.start_delay, failed = excluded.failed, peak_vus = excluded.peak_vus,
			bytes = excluded.bytes, failures = excluded.failures,
			p50_us = excluded.p50_us, p95_us = excluded.p95_us, p99_us = excluded.p99_us, max_us = excluded.max_us, dropped = excluded.dropped`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	// Steps of one name in several transactions are one API: one row.
	keys, merged := metrics.MergeByKey(ph.Ops, ops)
	if index >= 0 {
		if err := s.addTraffic(tx, traffic(runID, ph.Index, iv, keys, merged)); err != nil {
			return err
		}
	}
	for i, st := range merged {
		vus := int64(-1)
		if v, ok := peak[keys[i].Scenario]; ok && keys[i].Kind == metrics.KindScenario {
			vus = v
		}
		if st.Count == 0 && st.Dropped == 0 && vus <= 0 {
			continue
		}
		var svc, delay []byte
		if st.SvcOK.N > 0 {
			svc, _ = iv.Encode(st.Svc)
		}
		if st.DelayAll.N > 0 {
			delay, _ = iv.Encode(st.Delay)
		}
		op := keys[i]
		enc, q := iv.Digest(st)
		failed, _, _ := iv.FailDigest(st)
		if _, err := stmt.Exec(runID, ph.Index, ph.Name, op.Scenario, op.Name, string(op.Kind), index,
			start.UnixMilli(), end.UnixMilli(), st.Count, st.ErrorCount(), string(enc), string(svc), string(delay),
			q.P50, q.P95, q.P99, q.Max, st.Dropped, string(failed), vus, st.Bytes, failuresJSON(st.Failures())); err != nil {
			return err
		}
		iv.Point()
	}
	return tx.Commit()
}

// Traffic is an interval's steps together: every request of the interval.
type Traffic struct {
	RunID          string
	Phase, Ivl     int
	StartMs, EndMs int64
	Count, Errors  int64
	// Quantiles are of the successful requests' latencies.
	Quantiles metrics.Quantiles
}

// traffic is an interval's steps together (keys and stats are its
// operations, merged by key): one step's own figures, or those of a
// histogram the steps are merged into, taken from a pool (each is 190 KB,
// and an interval's end should not make one).
func traffic(runID string, phase int, iv *metrics.Interval, keys []metrics.Op, stats []*metrics.Stats) Traffic {
	t := Traffic{RunID: runID, Phase: phase, Ivl: iv.Index, StartMs: iv.Start.UnixMilli(), EndMs: iv.End.UnixMilli()}
	var steps []*metrics.Stats
	for i, st := range stats {
		if keys[i].Kind == metrics.KindStep && st.Count > 0 {
			steps = append(steps, st)
			t.Count += st.Count
			t.Errors += st.ErrorCount()
		}
	}
	switch len(steps) {
	case 0:
	case 1:
		if steps[0].OK.N > 0 {
			_, t.Quantiles = iv.Digest(steps[0])
		}
	default:
		h := trafficHists.Get().(*hdr.Histogram)
		defer trafficHists.Put(h)
		h.Reset()
		for _, st := range steps {
			if st.OK.N > 0 {
				h.Merge(st.Hist)
				iv.Point()
			}
		}
		t.Quantiles = metrics.QuantilesOf(h)
	}
	return t
}

var trafficHists = sync.Pool{New: func() any { return metrics.NewHistogram() }}

func (s *Store) addTraffic(tx *sql.Tx, t Traffic) error {
	if t.Count == 0 {
		return nil
	}
	q := t.Quantiles
	_, err := tx.Exec(s.q(`INSERT INTO traffic (run_id, phase, ivl, start_ms, end_ms, count, errors, p50_us, p95_us, p99_us, max_us)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, phase, ivl) DO UPDATE SET start_ms = excluded.start_ms, end_ms = excluded.end_ms, count = excluded.count,
			errors = excluded.errors, p50_us = excluded.p50_us, p95_us = excluded.p95_us, p99_us = excluded.p99_us, max_us = excluded.max_us`),
		t.RunID, t.Phase, t.Ivl, t.StartMs, t.EndMs, t.Count, t.Errors, q.P50, q.P95, q.P99, q.Max)
	return err
}

// TrafficOf is a run's traffic, interval by interval in time order; none
// for a run stored before the history kept it (decode its histograms).
func (s *Store) TrafficOf(runID string) ([]Traffic, error) {
	rows, err := s.db.Query(s.q(`SELECT phase, ivl, start_ms, end_ms, count, errors, p50_us, p95_us, p99_us, max_us
		FROM traffic WHERE run_id = ? ORDER BY start_ms, phase, ivl`), runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Traffic
	for rows.Next() {
		t := Traffic{RunID: runID}
		q := &t.Quantiles
		if err := rows.Scan(&t.Phase, &t.Ivl, &t.StartMs, &t.EndMs, &t.Count, &t.Errors, &q.P50, &q.P95, &q.P99, &q.Max); err != nil {
			return nil, err
		}
		q.N = t.Count - t.Errors
		out = append(out, t)
	}
	return out, rows.Err()
}

// Finish records how a run ended, its summary.json, its exact totals
// (totals.jsonl) and each stage's histograms over the whole stage.
func (s *Store) Finish(runID, status, runErr string, end time.Time, summary, totals []byte, stages []*metrics.Phase) error {
	for _, ph := range stages {
		if err := s.histograms(runID, ph, &metrics.Interval{Index: -1, Start: ph.Start, End: ph.End, Ops: ph.Totals}); err != nil {
			return err
		}
	}
	return s.finishRun(s.db.Exec, runID, status, runErr, end, summary, totals)
}

// finishRun records how a run ended, its summary and totals, and the
// verdict its summary says, by exec (the store's, or a transaction's).
func (s *Store) finishRun(exec func(string, ...any) (sql.Result, error), id, status, runErr string, end time.Time, summary, totals []byte) error {
	args := append([]any{status, runErr, end.UnixMilli(), string(summary), string(totals)}, verdictArgs(summary)...)
	_, err := exec(s.q(`UPDATE runs SET status = ?, error = ?, end_ms = ?, summary = ?, totals = ?, `+verdictSet+` WHERE id = ?`), append(args, id)...)
	return err
}

// SetSummary replaces a finished run's summary.json, and the verdict its
// columns keep, with a summary judged again (perflab drift RUN --save):
// its status, totals and intervals stay as they were.
func (s *Store) SetSummary(runID string, summary []byte) error {
	args := append([]any{string(summary)}, verdictArgs(summary)...)
	r, err := s.db.Exec(s.q(`UPDATE runs SET summary = ?, `+verdictSet+` WHERE id = ? AND summary <> ''`), append(args, runID)...)
	if err != nil {
		return err
	}
	if n, err := r.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("%w: %s (or it has no summary yet)", ErrNotFound, runID)
	}
	return nil
}

// Filter selects runs: all labels must match; Plan, if set, must too.
type Filter struct {
	Labels map[string]string
	Plan   string
	Limit  int
	// ID selects one run (a worker's part too).
	ID string
	// Parent selects the parts of a distributed run; without it (or ID),
	// parts are not listed: the run they make is.
	Parent string
}

// Runs lists runs, newest first. A run stored as running whose process is
// gone is listed as Killed, ending at its last stored interval (at its
// start when it stored none).
func (s *Store) Runs(f Filter) ([]Run, error) {
	q := `SELECT id, plan, plan_hash, status, error, start_ms, end_ms, labels, host, pid, heartbeat_ms, parent, ` + verdictColumns + `,
		CASE WHEN status = 'running' THEN (SELECT COALESCE(MAX(h.end_ms), 0) FROM histograms h WHERE h.run_id = r.id) ELSE 0 END
		FROM runs r WHERE 1 = 1`
	var args []any
	switch {
	case f.Parent != "":
		q += ` AND parent = ?`
		args = append(args, f.Parent)
	case f.ID == "":
		q += ` AND parent = ''`
	}
	if f.Plan != "" {
		q += ` AND plan = ?`
		args = append(args, f.Plan)
	}
	if f.ID != "" {
		q += ` AND id = ?`
		args = append(args, f.ID)
	}
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q += ` AND EXISTS (SELECT 1 FROM labels l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)`
		args = append(args, k, f.Labels[k])
	}
	q += ` ORDER BY start_ms DESC, id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.Query(s.q(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	now := time.Now()
	host, _ := os.Hostname()
	for rows.Next() {
		var r Run
		var start, end, beat, last int64
		var labels string
		var vs verdictScan
		dest := append([]any{&r.ID, &r.Plan, &r.PlanHash, &r.Status, &r.Error, &start, &end, &labels, &r.Host, &r.PID, &beat, &r.Parent}, vs.dest()...)
		if err := rows.Scan(append(dest, &last)...); err != nil {
			return nil, err
		}
		r.Verdict = vs.verdict()
		r.Start = time.UnixMilli(start)
		if end > 0 {
			r.End = time.UnixMilli(end)
		}
		if beat > 0 {
			r.Heartbeat = time.UnixMilli(beat)
		}
		if err := json.Unmarshal([]byte(labels), &r.Labels); err != nil {
			return nil, err
		}
		if r.Status == metrics.StatusRunning && gone(r, host, now) {
			r.Status = Killed
			r.End = r.Start
			if last > start {
				r.End = time.UnixMilli(last)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// gone reports whether a run stored as running has lost its process: on
// this host, its process is not there; elsewhere (or when the process
// there is another with the same pid), it has not said it was alive for
// StaleAfter.
func gone(r Run, host string, now time.Time) bool {
	if r.Host == host && r.PID > 0 && !processAlive(r.PID) {
		return true
	}
	return now.Sub(r.Heartbeat) > StaleAfter
}

// ErrExists means a run of that id is in the history already.
var ErrExists = errors.New("already in the history")

// ErrNotFound means no run has the given id.
var ErrNotFound = errors.New("no such run")

// Summary returns a finished run's summary.json.
func (s *Store) Summary(runID string) ([]byte, error) {
	var sum string
	err := s.db.QueryRow(s.q(`SELECT summary FROM runs WHERE id = ?`), runID).Scan(&sum)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, runID)
	}
	if err != nil {
		return nil, err
	}
	if sum == "" {
		return nil, fmt.Errorf("%w: run %s", ErrNoSummary, runID)
	}
	return []byte(sum), nil
}

// Totals returns a finished run's exact totals (totals.jsonl), or none
// for a run that did not finish or was stored before perflab kept them.
func (s *Store) Totals(runID string) ([]byte, error) {
	t, err := s.runText(runID, "totals")
	if err != nil || t == "" {
		return nil, err
	}
	return []byte(t), nil
}

// runText is a text column of a run's row (column is the code's, never
// a value given).
func (s *Store) runText(runID, column string) (string, error) {
	var t string
	err := s.db.QueryRow(s.q(`SELECT `+column+` FROM runs WHERE id = ?`), runID).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: %s", ErrNotFound, runID)
	}
	return t, err
}

// ErrNoSummary means a run has not finished: it is still running, or it was
// killed. Its intervals are stored all the same (Histograms).
var ErrNoSummary = errors.New("no summary: the run did not finish")

// Histogram is one stored histogram.
type Histogram struct {
	Phase      int
	PhaseName  string
	Kind       string
	Scenario   string
	Operation  string
	Interval   int // -1: the whole stage
	Start, End time.Time
	Count      int64
	Errors     int64
	// Dropped is an open model's iterations dropped, on its scenario's
	// rows (0 in the intervals of a run imported: its directory keeps
	// only the stage's).
	Dropped int64
	// Encoded is the histogram as stored (V2 compressed, base64); Hist
	// decodes it. ServiceTime and StartDelay are an open model's other
	// two, encoded the same way ("" when it has none), and Failed the
	// latency of the failed operations ("" when none was timed).
	Encoded                         string
	ServiceTime, StartDelay, Failed string
	// Quantiles are the histogram's, nil for a row stored before they
	// were (decode it).
	Quantiles *metrics.Quantiles
	// PeakVUs is, on a scenario's own row of an interval, the most VUs in
	// an iteration at once; -1 when not known (the other rows, and the
	// rows stored before the history kept it).
	PeakVUs int64
	// Bytes is the bytes received in response bodies; -1 when not known
	// (the rows stored before the history kept them).
	Bytes int64
	// Failures are the failures by kind and message
	// (metrics.Stats.Failures); nil where none failed, and in the rows
	// stored before the history kept them.
	Failures []metrics.ErrorMessage
}

// failuresJSON is failures as the histograms' failures column holds
// them: "" for none.
func failuresJSON(fs []metrics.ErrorMessage) string {
	if len(fs) == 0 {
		return ""
	}
	b, err := json.Marshal(fs)
	if err != nil {
		return "" // plain strings and numbers: it cannot fail
	}
	return string(b)
}

// histogramColumns are the columns of histograms, in the order writes
// and reads give them.
const histogramColumns = `run_id, phase, phase_name, scenario, operation, kind, ivl, start_ms, end_ms, count, errors, hist, service_time, start_delay, p50_us, p95_us, p99_us, max_us, dropped, failed, peak_vus, bytes, failures`

// readColumns are histogramColumns as histogramRows scans them.
const readColumns = `phase, phase_name, kind, scenario, operation, ivl, start_ms, end_ms, count, errors, hist, service_time, start_delay, p50_us, p95_us, p99_us, max_us, dropped, failed, peak_vus, bytes, failures`

// Hist decodes the histogram.
func (h Histogram) Hist() (*hdr.Histogram, error) {
	d, err := hdr.Decode([]byte(h.Encoded))
	if err != nil {
		return nil, err
	}
	d.SetStartTimeMs(h.Start.UnixMilli())
	d.SetEndTimeMs(h.End.UnixMilli())
	return d, nil
}

// Histograms returns a run's histograms, still encoded, in stage, operation
// and interval order.
func (s *Store) Histograms(runID string) ([]Histogram, error) {
	return s.histogramRows(`SELECT `+readColumns+`
		FROM histograms WHERE run_id = ? ORDER BY phase, scenario, operation, kind, ivl`, runID)
}

// StageIntervals returns a run's histograms of stage phase's intervals
// after interval after (-1: from the first) up to upTo, still encoded, in
// interval order: what a run has stored since it was last asked.
func (s *Store) StageIntervals(runID string, phase, after, upTo int) ([]Histogram, error) {
	return s.histogramRows(`SELECT `+readColumns+`
		FROM histograms WHERE run_id = ? AND phase = ? AND ivl > ? AND ivl <= ? ORDER BY ivl, scenario, operation`, runID, phase, after, upTo)
}

func (s *Store) histogramRows(query string, args ...any) ([]Histogram, error) {
	rows, err := s.db.Query(s.q(query), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Histogram
	for rows.Next() {
		var h Histogram
		var start, end int64
		var q metrics.Quantiles
		var failures string
		if err := rows.Scan(&h.Phase, &h.PhaseName, &h.Kind, &h.Scenario, &h.Operation, &h.Interval, &start, &end, &h.Count, &h.Errors, &h.Encoded, &h.ServiceTime, &h.StartDelay,
			&q.P50, &q.P95, &q.P99, &q.Max, &h.Dropped, &h.Failed, &h.PeakVUs, &h.Bytes, &failures); err != nil {
			return nil, err
		}
		if failures != "" {
			if err := json.Unmarshal([]byte(failures), &h.Failures); err != nil {
				return nil, fmt.Errorf("histograms: stage %d %s interval %d: failures: %w", h.Phase, h.Operation, h.Interval, err)
			}
		}
		h.Start, h.End = time.UnixMilli(start), time.UnixMilli(end)
		if q.P50 >= 0 {
			q.N = h.Count - h.Errors
			h.Quantiles = &q
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Redact hides a URL's password, for messages:
// postgres://user:[redacted]@host/db.
func Redact(dsn string) string { return secret.Text(dsn) }

// WithSearchPath returns a PostgreSQL URL whose sessions use schema, so that
// several histories can share one database.
func WithSearchPath(dsn, schema string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

// Encoded is a histogram as stored: for imports of runs written elsewhere.
type Encoded struct {
	Phase                          int
	PhaseName, Scenario, Operation string
	Kind                           string
	Interval                       int // -1: the whole stage
	StartMs, EndMs                 int64
	Count, Errors                  int64
	Dropped                        int64  // an open model's, on its scenario's rows
	Hist                           string // V2 compressed, base64
	// An open model's service time and start delay, and the latency of
	// the failed operations, encoded as Hist; "" when it has none.
	ServiceTime, StartDelay, Failed string
	// Quantiles are Hist's; nil to have Complete take them from Hist.
	Quantiles *metrics.Quantiles
	// PeakVUs is, on a scenario's own row of an interval, the most VUs
	// in an iteration at once; -1 when not known. The zero value is
	// stored as 0: give -1 on the other rows.
	PeakVUs int64
	// Bytes is the bytes received in response bodies; -1 when not
	// known (the zero value is stored as 0 bytes).
	Bytes int64
	// Failures are the failures by kind and message; nil for none.
	Failures []metrics.ErrorMessage
}

// Import stores a finished run read from elsewhere (a run directory) in one
// transaction.
func (s *Store) Import(id, plan string, planSource []byte, start, end time.Time, status string, labels map[string]string, summary, totals []byte, hs []Encoded, includes ...metrics.PlanFile) error {
	if have, err := s.Runs(Filter{ID: id}); err == nil && len(have) > 0 {
		return fmt.Errorf("%w: run %s", ErrExists, id)
	}
	if err := s.Begin(id, plan, planSource, start, labels, includes...); err != nil {
		return err
	}
	return s.Complete(id, status, "", end, summary, totals, hs)
}

// Complete records the results of a run begun in the history (Begin) and
// made elsewhere, in one transaction: how it ended, its summary.json, its
// exact totals and its histograms (such as a distributed run, merged from
// its workers' parts).
func (s *Store) Complete(id, status, runErr string, end time.Time, summary, totals []byte, hs []Encoded) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(s.q(`INSERT INTO histograms (` + histogramColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, h := range hs {
		q := h.Quantiles
		if q == nil {
			p, err := hdr.DecodePacked([]byte(h.Hist))
			if err != nil {
				return fmt.Errorf("run %s: stage %d %s interval %d: %w", id, h.Phase, h.Operation, h.Interval, err)
			}
			v := metrics.QuantilesOf(p)
			q = &v
		}
		if _, err := stmt.Exec(id, h.Phase, h.PhaseName, h.Scenario, h.Operation, h.Kind, h.Interval, h.StartMs, h.EndMs, h.Count, h.Errors, h.Hist, h.ServiceTime, h.StartDelay,
			q.P50, q.P95, q.P99, q.Max, h.Dropped, h.Failed, h.PeakVUs, h.Bytes, failuresJSON(h.Failures)); err != nil {
			return err
		}
	}
	if err := s.trafficOf(tx, id, hs); err != nil {
		return err
	}
	if err := s.finishRun(tx.Exec, id, status, runErr, end, summary, totals); err != nil {
		return err
	}
	return tx.Commit()
}

// trafficOf stores the traffic of a run's intervals, each interval's
// step histograms decoded into one, an interval at a time.
func (s *Store) trafficOf(tx *sql.Tx, id string, hs []Encoded) error {
	var steps []int
	for i, h := range hs {
		if h.Interval >= 0 && h.Kind == string(metrics.KindStep) {
			steps = append(steps, i)
		}
	}
	slices.SortStableFunc(steps, func(a, b int) int {
		return cmp.Or(cmp.Compare(hs[a].Phase, hs[b].Phase), cmp.Compare(hs[a].Interval, hs[b].Interval))
	})
	acc := metrics.NewHistogram()
	for i := 0; i < len(steps); {
		first := hs[steps[i]]
		t := Traffic{RunID: id, Phase: first.Phase, Ivl: first.Interval, StartMs: first.StartMs, EndMs: first.EndMs}
		acc.Reset()
		for ; i < len(steps) && hs[steps[i]].Phase == t.Phase && hs[steps[i]].Interval == t.Ivl; i++ {
			h := hs[steps[i]]
			if err := metrics.DecodeInto(acc, []byte(h.Hist)); err != nil {
				return fmt.Errorf("run %s: stage %d %s interval %d: %w", id, h.Phase, h.Operation, h.Interval, err)
			}
			t.StartMs, t.EndMs = min(t.StartMs, h.StartMs), max(t.EndMs, h.EndMs)
			t.Count += h.Count
			t.Errors += h.Errors
		}
		t.Quantiles = metrics.QuantilesOf(acc)
		if err := s.addTraffic(tx, t); err != nil {
			return err
		}
	}
	return nil
}

// PlanSource returns the text of the plan a run ran.
func (s *Store) PlanSource(runID string) ([]byte, error) {
	src, err := s.runText(runID, "plan_source")
	if err != nil {
		return nil, err
	}
	return []byte(src), nil
}

// PlanIncludes returns the files the plan a run ran includes, as they
// were read (none for a run stored before the history kept them).
func (s *Store) PlanIncludes(runID string) ([]metrics.PlanFile, error) {
	js, err := s.runText(runID, "plan_includes")
	if err != nil || js == "" {
		return nil, err
	}
	var files []metrics.PlanFile
	if err := json.Unmarshal([]byte(js), &files); err != nil {
		return nil, fmt.Errorf("run %s: the plan's included files: %w", runID, err)
	}
	return files, nil
}

// Sample is one value a monitor sampled.
type Sample struct {
	Time            time.Time
	Monitor, Metric string
	Value           float64
}

// AddSamples stores a run's monitor samples, in one transaction.
func (s *Store) AddSamples(runID string, samples []Sample) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(s.q(`INSERT INTO samples (run_id, t_ms, monitor, metric, value) VALUES (?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, x := range samples {
		if _, err := stmt.Exec(runID, x.Time.UnixMilli(), x.Monitor, x.Metric, x.Value); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Samples reads a run's monitor samples in time order.
func (s *Store) Samples(runID string) ([]Sample, error) {
	rows, err := s.db.Query(s.q(`SELECT t_ms, monitor, metric, value FROM samples WHERE run_id = ? ORDER BY t_ms, monitor, metric`), runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sample
	for rows.Next() {
		var x Sample
		var t int64
		if err := rows.Scan(&t, &x.Monitor, &x.Metric, &x.Value); err != nil {
			return nil, err
		}
		x.Time = time.UnixMilli(t)
		out = append(out, x)
	}
	return out, rows.Err()
}
