package results

import (
	"strings"

	"github.com/perflab/perflab/store"
)

// The verdicts a run's summary carries (summary.json), so that a run read
// back has them without being judged again. Package judge makes them.

// ThresholdResult is one threshold checked against one operation of one stage.
type ThresholdResult struct {
	Threshold string  `json:"threshold"`
	Stage     string  `json:"stage"`
	Operation string  `json:"operation"`
	Actual    float64 `json:"actual"`
	Pass      bool    `json:"pass"`
	Note      string  `json:"note,omitempty"`
}

// Verdict is what the summary says beyond its status: its thresholds,
// its drift, its open models' dropped iterations, its total; what the
// history keeps of it (store.VerdictOf reads the same from summary.json).
func (s *Summary) Verdict() *store.Verdict {
	v := &store.Verdict{Thresholds: len(s.Thresholds), ThresholdsFailed: Failed(s.Thresholds), Degraded: s.Drift != nil && s.Drift.Degraded,
		Requests: s.Total.Requests, Errors: s.Total.Errors, RPS: s.Total.RPS}
	v.Dropped, v.Due = droppedOf(s.Stages)
	if s.Drift != nil {
		v.Incidents = len(s.Drift.Incidents)
	}
	var failed []string
	for _, e := range s.AnalysisErrors {
		failed = append(failed, e.Analysis)
	}
	v.AnalysisFailed = strings.Join(failed, ", ")
	return v
}

// StatusLine is the run's status and what keeps it from a clean pass:
// "completed; thresholds failed: 2 of 5; dropped 3812 of 10000
// iterations due (38.12%)".
func (s *Summary) StatusLine() string { return store.Status(s.Status, s.Verdict()) }

// Failed counts the failed results.
func Failed(rs []ThresholdResult) int {
	n := 0
	for _, r := range rs {
		if !r.Pass {
			n++
		}
	}
	return n
}

// GeneratorMonitor and SelfMonitor name the monitors of the load
// generator's host and of perflab's own process, which every run has.
const (
	GeneratorMonitor = "generator"
	SelfMonitor      = "perflab"
)

// IsGeneratorMonitor reports whether a monitor watched the load generator
// (its host, or perflab's own process), of a run or of a part of a merged
// run ("perflab#w2", "generator#2"), not the system under test.
func IsGeneratorMonitor(name string) bool {
	for _, g := range []string{GeneratorMonitor, SelfMonitor} {
		if rest, ok := strings.CutPrefix(name, g); ok && (rest == "" || rest[0] == '#') {
			return true
		}
	}
	return false
}

// GeneratorCheck says whether the load generator kept up in a stage.
type GeneratorCheck struct {
	KeptUp   bool               `json:"kept_up"`
	Problems []GeneratorProblem `json:"problems,omitempty"`
}

// GeneratorProblem is one way the generator fell behind.
type GeneratorProblem struct {
	// Kind is start_delay (an open model's start delay p99 above its
	// limit, in ms), dropped (iterations an open model could not start:
	// every VU was busy), cpu (the generator's process or host busy
	// above its limit, as a fraction), open_files or local_ports (the
	// sockets the load could hold at once, above what the host allows:
	// metrics.HostLimit).
	Kind     string  `json:"kind"`
	Scenario string  `json:"scenario,omitempty"`
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
	Sentence string  `json:"sentence"`
}
