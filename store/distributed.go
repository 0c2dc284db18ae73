package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/perflab/perflab/metrics"
)

// A distributed run is one run made by several workers (load generators),
// each running its share of the plan (plan.Segment) and recording it as a
// part: a run of its own, id RUN-wINDEX, whose parent is the distributed
// run. The workers meet here: each registers (Join), waits until all have
// (the start barrier), shares setup's values and a start time, says at
// which stage it is, that its load has ended and that its part is
// recorded; the one that runs teardown merges the parts into the run.

// Worker states.
const (
	WorkerRunning  = "running"  // registered, its load not ended
	WorkerEnded    = "ended"    // its load ended: it waits for the others
	WorkerFinished = "finished" // its part is recorded in the history
	WorkerFailed   = "failed"   // it stopped without a part to merge
)

// WorkerBeat is how often a worker says it is alive; after WorkerStale
// without that, a worker on another machine is taken for dead (on this
// machine, its process is looked up).
const (
	WorkerBeat  = time.Second
	WorkerStale = 15 * time.Second
)

// Worker is a worker of a distributed run as the history has it.
type Worker struct {
	Index      int
	Part       string // its part's run id
	Host       string
	PID        int
	Registered time.Time
	Heartbeat  time.Time
	Stage      int // the stage it is at, from 1 (0: not started)
	// Interval is the last interval of Stage it has stored (-1: none):
	// intervals up to it are whole in the history.
	Interval int
	State    string
	Ended    time.Time
}

// Dead reports whether a worker that has not finished lost its process:
// on this host, the process is gone; elsewhere, it has not said it was
// alive for WorkerStale.
func (w Worker) Dead(host string, now time.Time) bool {
	if w.State == WorkerFinished || w.State == WorkerFailed {
		return false
	}
	if w.Host == host && w.PID > 0 && !processAlive(w.PID) {
		return true
	}
	return now.Sub(w.Heartbeat) > WorkerStale
}

// Distributed is what the workers of a run share.
type Distributed struct {
	RunID    string
	Workers  int
	PlanHash string
	Created  time.Time
	// Setup is "" until a worker takes it, then "running", "ok" or
	// "failed" (SetupError); SetupVars are the values it extracted.
	Setup      string
	SetupError string
	SetupVars  map[string]string
	// Start is when the load starts (zero until decided).
	Start time.Time
	// Teardown is the worker that runs teardown and merges the run (-1:
	// none yet).
	Teardown int
	// Abort, if set, stops every worker: why.
	Abort string
}

// PartID is the run id of worker index's part of run id.
func PartID(id string, index int) string { return fmt.Sprintf("%s-w%d", id, index) }

// Join registers worker index of a run of count workers: the run is
// recorded as running (with its labels) by the first worker to join, and
// the worker's part as a run of its own (id PartID) whose parent it is.
// sig identifies what the worker runs (the plan's text and the values set
// from outside): a run of that id made otherwise (another plan or values,
// another count of workers) and an index registered already are errors.
func (s *Store) Join(id string, index, count int, plan string, planSource []byte, sig string, start time.Time, labels map[string]string, includes ...metrics.PlanFile) (part string, err error) {
	hash := PlanHash([]byte(sig))
	now := time.Now().UnixMilli()
	host, _ := os.Hostname()
	part = PartID(id, index)
	// The run, once: any worker may be first. A conflict is another's.
	if err := s.Begin(id, plan, planSource, start, labels, includes...); err != nil && !errors.Is(err, ErrExists) {
		return "", err
	}
	// Not this process's run: no process to look up, only heartbeats.
	if _, err := s.db.Exec(s.q(`UPDATE runs SET host = '', pid = 0 WHERE id = ? AND pid = ?`), id, os.Getpid()); err != nil {
		return "", err
	}
	if _, err := s.db.Exec(s.q(`INSERT INTO distributed (run_id, workers, plan_hash, created_ms) VALUES (?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING`),
		id, count, hash, now); err != nil {
		return "", err
	}
	d, err := s.Distributed(id)
	if err != nil {
		return "", err
	}
	switch {
	case d.Workers != count:
		return "", fmt.Errorf("run %s is a run of %d workers, not %d: give every worker the same --segment count", id, d.Workers, count)
	case d.PlanHash != hash:
		return "", fmt.Errorf("run %s runs another plan (or other --set values, or another interval): every worker of a run must run the same plan", id)
	}
	var status string
	if err := s.db.QueryRow(s.q(`SELECT status FROM runs WHERE id = ?`), id).Scan(&status); err != nil {
		return "", err
	}
	if status != "running" {
		return "", fmt.Errorf("run %s has ended (%s): a distributed run's workers must start together; give this run a new --run-id", id, status)
	}
	if _, err := s.db.Exec(s.q(`INSERT INTO workers (run_id, idx, part, host, pid, registered_ms, heartbeat_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		id, index, part, host, os.Getpid(), now, now); err != nil {
		if isUnique(err) {
			return "", fmt.Errorf("worker %d of run %s has joined already: give each worker its own --segment index", index, id)
		}
		return "", err
	}
	if err := s.Begin(part, plan, planSource, start, nil, includes...); err != nil {
		return "", fmt.Errorf("worker %d's part: %w", index, err)
	}
	if _, err := s.db.Exec(s.q(`UPDATE runs SET parent = ? WHERE id = ?`), id, part); err != nil {
		return "", err
	}
	return part, nil
}

// Distributed reads what the workers of run id share.
func (s *Store) Distributed(id string) (*Distributed, error) {
	d := &Distributed{RunID: id}
	var created, start int64
	var vars string
	err := s.db.QueryRow(s.q(`SELECT workers, plan_hash, created_ms, setup, setup_error, setup_vars, start_ms, teardown, abort FROM distributed WHERE run_id = ?`), id).
		Scan(&d.Workers, &d.PlanHash, &created, &d.Setup, &d.SetupError, &vars, &start, &d.Teardown, &d.Abort)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no distributed run %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, err
	}
	d.Created = time.UnixMilli(created)
	if start > 0 {
		d.Start = time.UnixMilli(start)
	}
	if err := json.Unmarshal([]byte(vars), &d.SetupVars); err != nil {
		return nil, err
	}
	return d, nil
}

// Workers lists the workers of run id that have registered, by index.
func (s *Store) Workers(id string) ([]Worker, error) {
	rows, err := s.db.Query(s.q(`SELECT idx, part, host, pid, registered_ms, heartbeat_ms, stage, ivl, state, ended_ms FROM workers WHERE run_id = ? ORDER BY idx`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Worker
	for rows.Next() {
		var w Worker
		var reg, beat, ended int64
		if err := rows.Scan(&w.Index, &w.Part, &w.Host, &w.PID, &reg, &beat, &w.Stage, &w.Interval, &w.State, &ended); err != nil {
			return nil, err
		}
		w.Registered, w.Heartbeat = time.UnixMilli(reg), time.UnixMilli(beat)
		if ended > 0 {
			w.Ended = time.UnixMilli(ended)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

// Beat says that worker index of run id is alive, and the run with it.
func (s *Store) Beat(id string, index int) error {
	now := time.Now().UnixMilli()
	if _, err := s.db.Exec(s.q(`UPDATE workers SET heartbeat_ms = ? WHERE run_id = ? AND idx = ?`), now, id, index); err != nil {
		return err
	}
	_, err := s.db.Exec(s.q(`UPDATE runs SET heartbeat_ms = ? WHERE (id = ? OR id = ?) AND status = 'running'`), now, id, PartID(id, index))
	return err
}

// SetStage says that worker index of run id is at stage (from 1).
func (s *Store) SetStage(id string, index, stage int) error {
	_, err := s.db.Exec(s.q(`UPDATE workers SET stage = ?, ivl = -1, heartbeat_ms = ? WHERE run_id = ? AND idx = ?`), stage, time.Now().UnixMilli(), id, index)
	return err
}

// Stored says that worker index of run id has stored interval ivl of its
// stage.
func (s *Store) Stored(id string, index, ivl int) error {
	_, err := s.db.Exec(s.q(`UPDATE workers SET ivl = ? WHERE run_id = ? AND idx = ? AND ivl < ?`), ivl, id, index, ivl)
	return err
}

// SetWorker records a worker's state; ended or failed, when.
func (s *Store) SetWorker(id string, index int, state string) error {
	_, err := s.db.Exec(s.q(`UPDATE workers SET state = ?, ended_ms = CASE WHEN ended_ms = 0 THEN ? ELSE ended_ms END, heartbeat_ms = ? WHERE run_id = ? AND idx = ?`),
		state, time.Now().UnixMilli(), time.Now().UnixMilli(), id, index)
	return err
}

// claim sets a column of the run's shared row from its unset value, and
// reports whether this call did (no other worker had).
func (s *Store) claim(query string, args ...any) (bool, error) {
	res, err := s.db.Exec(s.q(query), args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ClaimSetup reports whether this worker is the one to run setup.
func (s *Store) ClaimSetup(id string) (bool, error) {
	return s.claim(`UPDATE distributed SET setup = 'running' WHERE run_id = ? AND setup = ''`, id)
}

// SetupDone records setup's end: its values, or why it failed.
func (s *Store) SetupDone(id string, vars map[string]string, setupErr error) error {
	vj, _ := json.Marshal(vars)
	state, msg := "ok", ""
	if setupErr != nil {
		state, msg = "failed", setupErr.Error()
	}
	_, err := s.db.Exec(s.q(`UPDATE distributed SET setup = ?, setup_error = ?, setup_vars = ? WHERE run_id = ?`), state, msg, string(vj), id)
	return err
}

// SetStart decides when the load starts, unless a worker has: the start
// the run has is returned.
func (s *Store) SetStart(id string, at time.Time) (time.Time, error) {
	if _, err := s.claim(`UPDATE distributed SET start_ms = ? WHERE run_id = ? AND start_ms = 0`, at.UnixMilli(), id); err != nil {
		return time.Time{}, err
	}
	d, err := s.Distributed(id)
	if err != nil {
		return time.Time{}, err
	}
	return d.Start, nil
}

// ClaimTeardown reports whether worker index is the one to run teardown
// and merge the run.
func (s *Store) ClaimTeardown(id string, index int) (bool, error) {
	return s.claim(`UPDATE distributed SET teardown = ? WHERE run_id = ? AND teardown = -1`, index, id)
}

// Abort asks every worker of run id to stop, saying why (the first reason
// stays).
func (s *Store) Abort(id, why string) error {
	_, err := s.db.Exec(s.q(`UPDATE distributed SET abort = ? WHERE run_id = ? AND abort = ''`), why, id)
	return err
}

// FailRun records that a run ended without results to merge (its workers
// never all started, or none finished).
func (s *Store) FailRun(id, why string) error {
	_, err := s.db.Exec(s.q(`UPDATE runs SET status = 'failed', error = ?, end_ms = ? WHERE id = ? AND status = 'running'`), why, time.Now().UnixMilli(), id)
	return err
}

// Live is how far a running distributed run has gone: its shared state,
// its workers, and the requests (steps) its parts have stored so far, to
// the last interval each wrote.
func (s *Store) Live(id string) (*Distributed, []Worker, int64, error) {
	d, err := s.Distributed(id)
	if err != nil {
		return nil, nil, 0, err
	}
	ws, err := s.Workers(id)
	if err != nil {
		return nil, nil, 0, err
	}
	var n int64
	err = s.db.QueryRow(s.q(`SELECT COALESCE(SUM(h.count), 0) FROM histograms h JOIN runs r ON r.id = h.run_id
		WHERE r.parent = ? AND h.ivl >= 0 AND h.kind = 'step'`), id).Scan(&n)
	return d, ws, n, err
}

// Progress is how far a run has gone: its status (killed when its process
// is gone) and the end of the last interval it, or a worker's part of it,
// has stored (zero before the first).
func (s *Store) Progress(id string) (status string, last time.Time, err error) {
	runs, err := s.Runs(Filter{ID: id})
	if err != nil {
		return "", time.Time{}, err
	}
	if len(runs) == 0 {
		return "", time.Time{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	var ms int64
	err = s.db.QueryRow(s.q(`SELECT COALESCE(MAX(end_ms), 0) FROM histograms
		WHERE run_id = ? OR run_id IN (SELECT id FROM runs WHERE parent = ?)`), id, id).Scan(&ms)
	if ms > 0 {
		last = time.UnixMilli(ms)
	}
	return runs[0].Status, last, err
}
