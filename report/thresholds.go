package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// FormatActual shows a threshold's actual value in its metric's unit (t
// is the threshold, nil when not known: ms).
func FormatActual(r results.ThresholdResult, t *plan.Threshold) string {
	switch {
	case t == nil:
	case t.Metric == "errors" || t.Share:
		return fmt.Sprintf("%.3f%%", 100*r.Actual)
	case t.Metric == "rps":
		return fmt.Sprintf("%.1f/s", r.Actual)
	case t.Metric == "dropped":
		return fmt.Sprintf("%.0f dropped", r.Actual)
	case t.Metric == "count" && r.Actual == 1:
		return "ran once"
	case t.Metric == "count":
		return fmt.Sprintf("ran %.0f times", r.Actual)
	}
	return results.Ms(r.Actual) + " ms"
}

// byText maps each threshold's text to it, as its results name it.
func byText(ts []*plan.Threshold) map[string]*plan.Threshold {
	out := map[string]*plan.Threshold{}
	for _, t := range ts {
		out[t.Source] = t
	}
	return out
}

// ShownActual is a stored result's actual value as reports show it: its
// note when it has one (a regression's comparison, a missing baseline),
// else the value in its metric's unit.
func ShownActual(r results.ThresholdResult) string {
	if r.Note != "" {
		return r.Note
	}
	t, _ := plan.ParseThreshold(r.Threshold)
	return FormatActual(r, t)
}

// WriteThresholds prints each result, failed ones first.
func WriteThresholds(w io.Writer, ts []*plan.Threshold, rs []results.ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	byText := byText(ts)
	fmt.Fprintf(w, "\nthresholds: %d passed, %d failed\n", len(rs)-results.Failed(rs), results.Failed(rs))
	for _, pass := range []bool{false, true} {
		for _, r := range rs {
			if r.Pass != pass {
				continue
			}
			mark := "FAIL"
			if pass {
				mark = "ok  "
			}
			note := FormatActual(r, byText[r.Threshold])
			if r.Note != "" {
				note = r.Note
			}
			fmt.Fprintf(w, "  %s %-24s %-20s %-14s %s\n", mark, r.Threshold, r.Operation, r.Stage, note)
		}
	}
}

// WriteJUnit writes the results as JUnit XML, one test case per threshold
// and operation, for CI systems to show.
func WriteJUnit(w io.Writer, ts []*plan.Threshold, rs []results.ThresholdResult) error {
	return writeJUnit(w, ts, rs)
}

// WriteSummaryJUnit writes a finished run's thresholds as JUnit XML, the
// thresholds read back from their results.
func WriteSummaryJUnit(w io.Writer, s *results.Summary) error {
	return writeJUnit(w, thresholdsOf(s.Thresholds), s.Thresholds)
}

// WriteSummaryThresholds prints a finished run's threshold results as
// WriteThresholds does, the thresholds read back from them.
func WriteSummaryThresholds(w io.Writer, s *results.Summary) {
	WriteThresholds(w, thresholdsOf(s.Thresholds), s.Thresholds)
}

// thresholdsOf are the thresholds of results, read back from their text.
func thresholdsOf(rs []results.ThresholdResult) []*plan.Threshold {
	var ts []*plan.Threshold
	seen := map[string]bool{}
	for _, r := range rs {
		if t, err := plan.ParseThreshold(r.Threshold); err == nil && !seen[r.Threshold] {
			seen[r.Threshold] = true
			ts = append(ts, t)
		}
	}
	return ts
}

func writeJUnit(w io.Writer, ts []*plan.Threshold, rs []results.ThresholdResult) error {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Class   string   `xml:"classname,attr"`
		Name    string   `xml:"name,attr"`
		Failure *failure `xml:"failure,omitempty"`
		// Skipped is a threshold of an operation that never ran, which
		// passed with nothing to judge (judge.NeverRan).
		Skipped *failure `xml:"skipped,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr,omitempty"`
		Cases    []testcase `xml:"testcase"`
	}
	byText := byText(ts)
	s := suite{Name: "perflab thresholds", Tests: len(rs), Failures: results.Failed(rs)}
	for _, r := range rs {
		name := r.Operation + ": " + r.Threshold
		if strings.HasPrefix(r.Threshold, r.Operation+":") {
			name = r.Threshold
		}
		c := testcase{Class: r.Stage, Name: name}
		switch {
		case !r.Pass:
			msg := "actual " + FormatActual(r, byText[r.Threshold])
			if r.Note != "" {
				msg = r.Note
			}
			c.Failure = &failure{Message: msg}
		case r.Note == judge.NeverRan:
			c.Skipped = &failure{Message: r.Note}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
