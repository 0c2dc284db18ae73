package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// FailuresFile is the run directory's failed requests and their
// responses, written with perflab run --dump-failures, a JSON object a
// line.
const FailuresFile = "failures.jsonl"

// FailureSample is the first failure of a message of a step, as
// failures.jsonl keeps it: its response (head and body's first bytes,
// secrets redacted) as received, none for a failure without one (a
// connection refused or reset).
type FailureSample struct {
	Time              time.Time `json:"time"`
	Stage             string    `json:"stage"`
	Scenario          string    `json:"scenario"`
	Step              string    `json:"step"`
	Kind              string    `json:"kind"`
	Message           string    `json:"message"`
	Status            int       `json:"status,omitempty"`
	Response          string    `json:"response,omitempty"`
	ResponseTruncated bool      `json:"response_truncated,omitempty"`
}

// SampleKey names the failures of a message of a step of a stage (by
// its name, as failures.jsonl does).
type SampleKey struct{ Stage, Scenario, Step, Kind, Message string }

// readSamples reads the first failure of each message of failures.jsonl:
// nil and false when the run has no such file (it ran without
// --dump-failures). A line that does not read (the last of a run killed
// while writing it) is left out.
func readSamples(dir string) (map[SampleKey]FailureSample, bool, error) {
	f, err := os.Open(filepath.Join(dir, FailuresFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	out := map[SampleKey]FailureSample{}
	sc := bufio.NewScanner(f)
	// A line is a request and a response of at most 8 KiB each, escaped.
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var s FailureSample
		if json.Unmarshal(sc.Bytes(), &s) != nil {
			continue
		}
		k := SampleKey{s.Stage, s.Scenario, s.Step, s.Kind, s.Message}
		if have, ok := out[k]; !ok || s.Time.Before(have.Time) {
			out[k] = s
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return nil, false, err
	}
	return out, true, nil
}
