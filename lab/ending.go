package lab

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// ending is the end of a run, once the engine has stopped: its summary
// (summarize), its analyses, each failing alone (analyze), and its records
// in its directory and the history (record). What could not be recorded
// is lost, and fails the run; an analysis that failed does not.
type ending struct {
	p              *plan.Plan
	cfg            Config
	st             *store.Store // nil: no history
	rd             *results.Writer
	runID, dir     string
	coord          *coordinator // a worker of a distributed run
	stdout, stderr io.Writer
	storeFailed    *atomic.Bool
	lost           []string
	// finished: the run directory has its summary, and can be read back.
	finished bool
	back     *results.Run
}

// keep writes a file of the run directory; what cannot be written is lost.
func (e *ending) keep(name string, write func(io.Writer) error) {
	if err := e.rd.WriteFile(name, write); err != nil {
		fmt.Fprintf(e.stderr, "perflab: %v\n", err)
		e.lost = append(e.lost, fmt.Sprintf("%s (%v)", name, err))
	}
}

// summarize makes the run's summary, with what the monitors saw, and
// writes the monitors' samples and the failed requests' file.
func (e *ending) summarize(run *metrics.Run, sampled *monitor.Result, failures *phttp.FailureLog) *results.Summary {
	sum := results.Summarize(run, results.HostFacts())
	sum.Labels = e.cfg.Labels
	resources(sampled, sum)
	e.keep("resources.csv", func(w io.Writer) error { return results.WriteResources(w, sampled.All()) })
	if err := failures.Err(); err != nil {
		fmt.Fprintf(e.stderr, "perflab: %s: %v\n", FailuresFile, err)
		e.lost = append(e.lost, fmt.Sprintf("%s (%v)", FailuresFile, err))
	}
	return sum
}

// readBack is the run read back from its directory, once: what needs its
// intervals (its drift, regressions) reads it.
func (e *ending) readBack() (*results.Run, error) {
	if e.back != nil {
		return e.back, nil
	}
	b, err := results.ReadDir(e.dir)
	e.back = b
	return b, err
}

// analyze judges the finished run: its logs, its thresholds, its drift,
// its regressions, each an analysis of its own (analysis), and prints its
// tables. The run directory gets its summary first.
func (e *ending) analyze(sum *results.Summary, run *metrics.Run, requests *os.File) {
	p, stderr := e.p, e.stderr
	if len(p.Logs) > 0 && requests != nil {
		analysis(sum, stderr, results.AnalysisLogs, func() error {
			sum.Logs = correlateLogs(p, requests.Name(), stderr)
			return nil
		})
	}
	whole := e.coord == nil // a worker's part is judged as part of the whole
	if whole {
		analysis(sum, stderr, results.AnalysisThresholds, func() error {
			sum.Thresholds = judge.Thresholds(p.Thresholds, sum)
			return nil
		})
	}
	e.finished = true
	if err := e.rd.Finish(sum, run); err != nil {
		fmt.Fprintf(stderr, "perflab: writing results: %v\n", err)
		e.lost = append(e.lost, fmt.Sprintf("summary.json (%v)", err))
		e.finished = false
	}
	if e.finished && whole {
		judgeDrift(sum, stderr, e.readBack)
	}
	if whole {
		analysis(sum, stderr, results.AnalysisRegressions, func() error {
			sum.Thresholds = append(sum.Thresholds, regressions(p.Thresholds, p.Name, e.st, e.runID, e.readBack)...)
			return nil
		})
	}
	analysis(sum, stderr, results.AnalysisReport, func() error {
		if err := report.WriteTable(e.stdout, sum); err != nil {
			fmt.Fprintf(stderr, "perflab: %v\n", err)
		}
		e.keep("summary.txt", func(w io.Writer) error { return report.WriteTable(w, sum) })
		report.WriteThresholds(e.stdout, p.Thresholds, sum.Thresholds)
		if len(sum.Thresholds) > 0 {
			e.keep("junit.xml", func(w io.Writer) error { return report.WriteJUnit(w, p.Thresholds, sum.Thresholds) })
		}
		return nil
	})
}

// record writes the summary, with its analyses, to the run directory and
// the run, its samples and totals to the history.
func (e *ending) record(sum *results.Summary, run *metrics.Run, sampled *monitor.Result) {
	summary, sumErr := encodeSummary(sum, e.stderr)
	if sumErr != nil {
		e.lost = append(e.lost, fmt.Sprintf("summary.json (%v)", sumErr))
	} else if e.finished {
		e.keep("summary.json", func(w io.Writer) error { _, err := w.Write(summary); return err })
	}
	if e.st == nil || e.storeFailed.Load() {
		return
	}
	err := addSamples(e.st, e.runID, sampled)
	if err == nil && sumErr != nil {
		err = sumErr
	}
	if err == nil {
		var totals bytes.Buffer
		if err = results.WriteTotals(&totals, results.TotalsOf(run)); err == nil {
			err = e.st.Finish(e.runID, run.Status, run.Error, run.End, summary, totals.Bytes(), run.Stages)
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perflab: store: %v\n", err)
		e.storeFailed.Store(true)
	}
}
