package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// FormatActual shows a threshold's actual value in its metric's unit.
func FormatActual(r results.ThresholdResult, metric string) string {
	switch metric {
	case "errors":
		return fmt.Sprintf("%.3f%%", 100*r.Actual)
	case "rps":
		return fmt.Sprintf("%.1f/s", r.Actual)
	}
	return results.Ms(r.Actual) + " ms"
}

// ShownActual is a stored result's actual value as reports show it: its
// note when it has one (a regression's comparison, a missing baseline),
// else the value in its metric's unit.
func ShownActual(r results.ThresholdResult) string {
	if r.Note != "" {
		return r.Note
	}
	metric := ""
	if t, err := plan.ParseThreshold(r.Threshold); err == nil {
		metric = t.Metric
	}
	return FormatActual(r, metric)
}

// WriteThresholds prints each result, failed ones first.
func WriteThresholds(w io.Writer, ts []*plan.Threshold, rs []results.ThresholdResult) {
	if len(rs) == 0 {
		return
	}
	metric := map[string]string{}
	for _, t := range ts {
		metric[t.Source] = t.Metric
	}
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
			note := FormatActual(r, metric[r.Threshold])
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
	var ts []*plan.Threshold
	seen := map[string]bool{}
	for _, r := range s.Thresholds {
		if t, err := plan.ParseThreshold(r.Threshold); err == nil && !seen[r.Threshold] {
			seen[r.Threshold] = true
			ts = append(ts, t)
		}
	}
	return writeJUnit(w, ts, s.Thresholds)
}

func writeJUnit(w io.Writer, ts []*plan.Threshold, rs []results.ThresholdResult) error {
	type failure struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Class   string   `xml:"classname,attr"`
		Name    string   `xml:"name,attr"`
		Failure *failure `xml:"failure,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name   `xml:"testsuite"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	metric := map[string]string{}
	for _, t := range ts {
		metric[t.Source] = t.Metric
	}
	s := suite{Name: "perflab thresholds", Tests: len(rs), Failures: results.Failed(rs)}
	for _, r := range rs {
		name := r.Operation + ": " + r.Threshold
		if strings.HasPrefix(r.Threshold, r.Operation+":") {
			name = r.Threshold
		}
		c := testcase{Class: r.Stage, Name: name}
		if !r.Pass {
			msg := "actual " + FormatActual(r, metric[r.Threshold])
			if r.Note != "" {
				msg = r.Note
			}
			c.Failure = &failure{Message: msg}
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
