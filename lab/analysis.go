package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// analysis runs one analysis of a finished run (its drift, its regressions,
// its logs' correlation, its printed tables) on its own: an error or a
// panic is said on stderr and named in the summary (AnalysisErrors), and
// the run goes on to be recorded, whole, without it. A run is never lost
// to its own analysis.
func analysis(sum *results.Summary, stderr io.Writer, name string, f func() error) {
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
				fmt.Fprintf(stderr, "perflab: the %s analysis panicked: %v\n%s", name, r, debug.Stack())
			}
		}()
		return f()
	}()
	if err != nil {
		fmt.Fprintf(stderr, "perflab: the run's %s could not be made: %v; the run is recorded without it\n", name, err)
	}
	sum.SetAnalysisError(name, err)
}

// longevity is judge.Longevity; a test makes it fail.
var longevity = judge.Longevity

// judgeDrift gives the summary the drift over time of the run read reads,
// as an analysis of its own (analysis).
func judgeDrift(sum *results.Summary, stderr io.Writer, read func() (*results.Run, error)) {
	analysis(sum, stderr, results.AnalysisDrift, func() error {
		rd, err := read()
		if err != nil {
			return fmt.Errorf("reading the run back: %w", err)
		}
		d := longevity(rd, judge.LongevityOptions{})
		if err := encodable(d); err != nil {
			return err
		}
		sum.Drift = d
		judge.OneVerdict(sum)
		return nil
	})
}

// encodable checks that a verdict JSON can hold: one that cannot (a NaN,
// an infinite number) is an analysis that failed, not a run lost.
func encodable(v any) error {
	if _, err := json.Marshal(v); err != nil {
		return fmt.Errorf("its figures do not encode: %w", err)
	}
	return nil
}

// encodeSummary is the summary as summary.json and the history keep it.
// Should a verdict in it not encode, that verdict is left out as an
// analysis that failed (named in the summary), and the rest is kept.
func encodeSummary(sum *results.Summary, stderr io.Writer) ([]byte, error) {
	var b strings.Builder
	err := sum.WriteJSON(&b)
	if err == nil {
		return []byte(b.String()), nil
	}
	for _, part := range []struct {
		name string
		drop func() bool
	}{
		{results.AnalysisDrift, func() bool { ok := sum.Drift != nil; sum.Drift = nil; return ok }},
		{results.AnalysisLogs, func() bool { ok := sum.Logs != nil; sum.Logs = nil; return ok }},
		{results.AnalysisResources, func() bool { ok := sum.Resources != nil; sum.Resources = nil; return ok }},
		{results.AnalysisScaling, func() bool { ok := sum.Scaling != nil; sum.Scaling = nil; return ok }},
	} {
		if !part.drop() {
			continue
		}
		fmt.Fprintf(stderr, "perflab: the run's %s does not encode (%v); the run is recorded without it\n", part.name, err)
		sum.SetAnalysisError(part.name, fmt.Errorf("its figures do not encode: %w", err))
		b.Reset()
		if err = sum.WriteJSON(&b); err == nil {
			return []byte(b.String()), nil
		}
	}
	return nil, err
}
