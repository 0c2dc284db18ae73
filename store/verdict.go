package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perflab/perflab/metrics"
)

// Verdict is what a finished run's summary says beyond how the run ended
// (its status): its thresholds, its drift, its open models' dropped
// iterations, and its total. The history keeps it in columns of the run's
// own, read from the summary as it is stored (Finish, Complete, Import;
// for runs stored before, as the history is migrated), so that a list of
// a thousand runs reads no summary.
type Verdict struct {
	// Thresholds counts the threshold results (one per threshold, stage
	// and operation), ThresholdsFailed those that failed.
	Thresholds       int `json:"thresholds"`
	ThresholdsFailed int `json:"thresholds_failed"`
	// Degraded is the drift verdict: the system degraded over the run
	// (false too where the run was too short to judge).
	Degraded bool `json:"degraded"`
	// Dropped counts the iterations open models could not start (every
	// VU busy) of Due, those that were due: started or dropped.
	Dropped int64 `json:"dropped"`
	Due     int64 `json:"due"`
	// Requests, Errors and RPS are the run's total, as summary.json's.
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	RPS      float64 `json:"rps"`
	// AnalysisFailed names the analyses of the finished run that failed
	// (summary.json's analysis_errors), comma-separated: the run is whole
	// without them. Read from the summary, not kept in the runs' columns.
	AnalysisFailed string `json:"analysis_failed,omitempty"`
	// Incidents counts the drift's incidents (changes that did not
	// last). Read from the summary, not kept in the runs' columns.
	Incidents int `json:"incidents,omitempty"`
}

// Note is a note of a verdict: what keeps a run from a clean pass.
type Note struct {
	Text string
	// Fail says that it fails the run (failed thresholds, the drift), as
	// against a warning (dropped iterations).
	Fail bool
}

// Notes say what keeps a run from a clean pass, whatever its status:
// "thresholds failed: 2 of 5", "drift: degraded", "dropped 3812 of 10000
// iterations due (38.12%)"; none for a clean run, or v nil (not known).
// Dropped iterations are a warning, not a failure, unless a threshold
// names them (it then fails too).
func (v *Verdict) Notes() []Note {
	if v == nil {
		return nil
	}
	var out []Note
	if v.ThresholdsFailed > 0 {
		out = append(out, Note{fmt.Sprintf("thresholds failed: %d of %d", v.ThresholdsFailed, v.Thresholds), true})
	}
	if v.Degraded {
		out = append(out, Note{"drift: degraded", true})
	}
	if v.Incidents > 0 {
		word := "incidents"
		if v.Incidents == 1 {
			word = "incident"
		}
		out = append(out, Note{fmt.Sprintf("drift: %d %s", v.Incidents, word), false})
	}
	if v.Dropped > 0 {
		out = append(out, Note{fmt.Sprintf("dropped %d of %d iterations due (%.2f%%)", v.Dropped, v.Due, 100*float64(v.Dropped)/float64(v.Due)), false})
	}
	if v.AnalysisFailed != "" {
		out = append(out, Note{"analysis failed: " + v.AnalysisFailed, false})
	}
	return out
}

// String is the notes: "thresholds failed: 2 of 5; drift: degraded"; ""
// for a clean run, or v nil.
func (v *Verdict) String() string {
	var texts []string
	for _, n := range v.Notes() {
		texts = append(texts, n.Text)
	}
	return strings.Join(texts, "; ")
}

// Status is a run's status followed by its verdict's notes:
// "completed; thresholds failed: 2 of 5; drift: degraded".
func Status(status string, v *Verdict) string {
	if notes := v.String(); notes != "" {
		return status + "; " + notes
	}
	return status
}

// VerdictOf reads the verdict of a summary.json.
func VerdictOf(summary []byte) (*Verdict, error) {
	var doc struct {
		Thresholds []struct {
			Pass bool `json:"pass"`
		} `json:"thresholds"`
		Drift *struct {
			Degraded  bool              `json:"degraded"`
			Incidents []json.RawMessage `json:"incidents"`
		} `json:"drift"`
		Stages []struct {
			Load       []metrics.Load `json:"load"`
			Operations []struct {
				Kind     metrics.Kind `json:"kind"`
				Scenario string       `json:"scenario"`
				Count    int64        `json:"count"`
				Dropped  int64        `json:"dropped"`
			} `json:"operations"`
		} `json:"stages"`
		Total struct {
			Requests int64   `json:"requests"`
			Errors   int64   `json:"errors"`
			RPS      float64 `json:"rps"`
		} `json:"total"`
		AnalysisErrors []struct {
			Analysis string `json:"analysis"`
		} `json:"analysis_errors"`
	}
	if err := json.Unmarshal(summary, &doc); err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	v := &Verdict{Thresholds: len(doc.Thresholds), Requests: doc.Total.Requests, Errors: doc.Total.Errors, RPS: doc.Total.RPS}
	for _, r := range doc.Thresholds {
		if !r.Pass {
			v.ThresholdsFailed++
		}
	}
	v.Degraded = doc.Drift != nil && doc.Drift.Degraded
	if doc.Drift != nil {
		v.Incidents = len(doc.Drift.Incidents)
	}
	for _, e := range doc.AnalysisErrors {
		v.AnalysisFailed = joinName(v.AnalysisFailed, e.Analysis)
	}
	for _, ph := range doc.Stages {
		for _, op := range ph.Operations {
			if op.Kind == metrics.KindScenario {
				due, _ := metrics.Due(ph.Load, op.Scenario, op.Count, op.Dropped)
				v.Dropped += op.Dropped
				v.Due += due
			}
		}
	}
	return v, nil
}

// verdictColumns are the runs' columns of a Verdict, in the order
// verdictArgs gives them and scanVerdict reads them. thresholds is -1 in
// a run without a known verdict: not finished, or whose summary did not
// read.
const verdictColumns = `thresholds, thresholds_failed, degraded, dropped, due, requests, errors, rps`

// verdictSet sets the verdict columns of an UPDATE to verdictArgs.
var verdictSet = strings.ReplaceAll(verdictColumns, ",", " = ?,") + " = ?"

// verdictArgs are the values of verdictColumns for a summary: unknown
// (thresholds -1) when it does not read.
func verdictArgs(summary []byte) []any {
	v, err := VerdictOf(summary)
	if err != nil {
		return []any{-1, 0, 0, 0, 0, 0, 0, 0.0}
	}
	degraded := 0
	if v.Degraded {
		degraded = 1
	}
	return []any{v.Thresholds, v.ThresholdsFailed, degraded, v.Dropped, v.Due, v.Requests, v.Errors, v.RPS}
}

// verdictScan holds a row's verdict columns as scanned.
type verdictScan struct {
	thresholds, failed, degraded int
	dropped, due, reqs, errs     int64
	rps                          float64
}

func (vs *verdictScan) dest() []any {
	return []any{&vs.thresholds, &vs.failed, &vs.degraded, &vs.dropped, &vs.due, &vs.reqs, &vs.errs, &vs.rps}
}

// verdict is the scanned verdict, nil when not known.
func (vs *verdictScan) verdict() *Verdict {
	if vs.thresholds < 0 {
		return nil
	}
	return &Verdict{Thresholds: vs.thresholds, ThresholdsFailed: vs.failed, Degraded: vs.degraded == 1,
		Dropped: vs.dropped, Due: vs.due, Requests: vs.reqs, Errors: vs.errs, RPS: vs.rps}
}

// fillVerdicts gives the runs stored before their verdict had columns
// theirs, read from their summaries one at a time (a migration, in its
// transaction).
func fillVerdicts(ctx context.Context, conn *sql.Conn, q func(string) string) error {
	rows, err := conn.QueryContext(ctx, `SELECT id FROM runs WHERE summary <> ''`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		var summary string
		if err := conn.QueryRowContext(ctx, q(`SELECT summary FROM runs WHERE id = ?`), id).Scan(&summary); err != nil {
			return err
		}
		if _, err := conn.ExecContext(ctx, q(`UPDATE runs SET `+verdictSet+` WHERE id = ?`), append(verdictArgs([]byte(summary)), id)...); err != nil {
			return err
		}
	}
	return nil
}

// joinName adds a name to a comma-separated list.
func joinName(list, name string) string {
	if list == "" {
		return name
	}
	return list + ", " + name
}
