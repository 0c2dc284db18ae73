package lab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

// startMonitors opens the plan's monitors and cfg's, and those of the load
// generator's host and of perflab's own process (a saturated generator
// makes results suspect), and samples them every interval until stop. A monitor
// that cannot be opened is reported once and left out; the run goes on.
// With sut false (the workers of a distributed run but the first), only
// the generator's own monitors run: the system under test is watched once.
func startMonitors(ctx context.Context, p *plan.Plan, extra []monitor.Spec, stderr io.Writer, sut bool) *monitor.Sampler {
	specs := []monitor.Spec{{Name: results.GeneratorMonitor, Kind: monitor.KindHost}, {Name: results.SelfMonitor, Kind: monitor.KindProcess, PID: os.Getpid()}}
	if sut {
		for _, m := range p.Monitors {
			specs = append(specs, m.Spec)
		}
		specs = append(specs, extra...)
	}
	var ms []monitor.Monitor
	for _, s := range specs {
		m, err := monitor.Open(ctx, s)
		if err != nil {
			fmt.Fprintf(stderr, "perflab: monitor %s: %v; the run goes on without it\n", s.Name, err)
			continue
		}
		ms = append(ms, m)
		if s.Ready != "" {
			if err := waitReady(ctx, s.Ready, time.Minute); err != nil {
				fmt.Fprintf(stderr, "perflab: monitor %s: %v\n", s.Name, err)
			}
		}
	}
	return monitor.StartSampler(ctx, samplingInterval(p), ms, func(w monitor.Warning) {
		fmt.Fprintf(stderr, "perflab: %s; sampling goes on\n", w)
	})
}

// samplingInterval is how often the monitors sample: every interval, the
// plan's own from 100 ms, but one sized to a short run (of 100 to 500 ms)
// no more than once a second: a sample reads the system under test (a
// scrape, a query), and one that takes longer than the period fails.
// Between samples, the figures of an interval are interpolated.
func samplingInterval(p *plan.Plan) time.Duration {
	d := max(p.Interval.D, metrics.MinInterval)
	if p.IntervalSized {
		d = max(d, time.Second)
	}
	return d
}

// resources analyses what the monitors sampled, per stage and over the
// whole run, and judges whether the generator kept up in each stage.
func resources(res *monitor.Result, sum *results.Summary) {
	var warnings []string
	for _, w := range res.Warnings {
		warnings = append(warnings, w.String())
	}
	judgeResources(sum, res.Analyze(windows(sum)), warnings, runtime.GOMAXPROCS(0))
}

// windows are the stages of a run, and the whole run when it has several
// stages, with what each completed: the windows of the monitors' analysis.
func windows(sum *results.Summary) []monitor.Window {
	var out []monitor.Window
	var total int64
	for _, ph := range sum.Stages {
		n := transactions(ph)
		total += n
		out = append(out, monitor.Window{Name: ph.Name, Start: ph.Start, End: ph.End, Transactions: n})
	}
	if len(sum.Stages) > 1 {
		out = append(out, monitor.Window{Name: "run", Start: sum.Start, End: sum.End, Transactions: total})
	}
	return out
}

// judgeResources puts the monitors' analysis and warnings in the summary
// and judges whether the generator kept up (maxProcs is the cores it could
// use).
func judgeResources(sum *results.Summary, a monitor.Analysis, warnings []string, maxProcs int) {
	// perflab's own memory is the generator's, not the system under
	// test's: a rise (its heap settling, the monitors' samples kept, 24
	// bytes a point) is not called a leak.
	for _, w := range a.Windows {
		for _, m := range w.Monitors {
			if m.Monitor == results.SelfMonitor {
				for i := range m.Memory {
					m.Memory[i].LeakSuspected = false
				}
			}
		}
	}
	sum.Resources = &a
	sum.Warnings = append(sum.Warnings, warnings...)
	judge.Generator(sum, maxProcs)
}

// transactions counts what a stage completed, for CPU per transaction: its
// transactions if the plan has any, else its scenarios' iterations.
func transactions(ph results.PhaseSummary) int64 {
	var tx, iters int64
	for _, op := range ph.Operations {
		switch op.Kind {
		case metrics.KindTransaction:
			tx += op.Count
		case metrics.KindScenario:
			iters += op.Count
		}
	}
	if tx > 0 {
		return tx
	}
	return iters
}

// waitReady polls url until it answers (any status) or the timeout.
func waitReady(ctx context.Context, url string, timeout time.Duration) error {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer within %v: %w", url, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
