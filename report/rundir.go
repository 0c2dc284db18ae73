package report

import (
	"io"
	"path/filepath"

	"github.com/perflab/perflab/results"
)

// WriteRunFiles writes the rendered files of a run directory from its
// summary: summary.txt (the tables the run printed) and, when the run
// checked thresholds, junit.xml. The run's own files (summary.json, the
// interval log) are the results package's.
func WriteRunFiles(dir string, s *results.Summary) error {
	if err := results.WriteFile(filepath.Join(dir, "summary.txt"), func(w io.Writer) error { return WriteTable(w, s) }); err != nil {
		return err
	}
	if len(s.Thresholds) == 0 {
		return nil
	}
	return results.WriteFile(filepath.Join(dir, "junit.xml"), func(w io.Writer) error { return WriteSummaryJUnit(w, s) })
}
