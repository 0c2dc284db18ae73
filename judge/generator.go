package judge

import (
	"fmt"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/monitor"
	"github.com/perflab/perflab/results"
)

// The load generator kept to the plan in a stage unless one of these was
// passed: its latencies then include time it spent behind schedule.
const (
	// MaxStartDelayP99 is the 99th percentile of an open model's start
	// delay (due time to send), in ms, above which its iterations started
	// late enough to show in the latencies of fast services.
	MaxStartDelayP99 = 1.0
	// MaxGeneratorBusy is the share of the generator's CPU, its own
	// process's (of the cores Go may use) or the host's, from which it is
	// called saturated.
	MaxGeneratorBusy = monitor.SaturationBusy
	// MaxProcessingShare is the time the VUs may spend processing
	// responses (extractions and checks, after the last byte), as a share
	// of the time those responses took, before it is a problem: no
	// latency includes it, the VUs send nothing meanwhile, and on an
	// event loop the other VUs' responses wait for it. MinProcessing is
	// the least time in all that is one.
	MaxProcessingShare = 0.2
	MinProcessing      = 0.1 // seconds
)

// Generator judges every stage of s: open models' start delay and
// dropped iterations, the limits of the generator's host that the load
// could pass (found by the engine before the stage), and the CPU that the generator's monitors saw
// (s.Resources; maxProcs is the cores Go could use, 0 where perflab's own
// process is not to be judged: a merged run's parts were judged each on
// its own machine). Each problem is also a warning of the summary.
func Generator(s *results.Summary, maxProcs int) {
	for i := range s.Stages {
		ph := &s.Stages[i]
		c := &results.GeneratorCheck{}
		add := func(p results.GeneratorProblem) { c.Problems = append(c.Problems, p) }
		where := fmt.Sprintf("stage %d (%s)", ph.Index, ph.Name)
		for _, op := range ph.Operations {
			if op.Kind != metrics.KindScenario {
				continue
			}
			if d := op.StartDelay; d != nil && d.P99 > MaxStartDelayP99 {
				why := "the generator itself started them late (its CPU, or the machine's scheduling)"
				if op.Queued > 0 {
					why = fmt.Sprintf("%d iterations waited for a free VU (when_busy: queue); raise max_vus", op.Queued)
				}
				add(results.GeneratorProblem{Kind: "start_delay", Scenario: op.Scenario, Value: d.P99, Limit: MaxStartDelayP99,
					Sentence: fmt.Sprintf("%s: scenario %s started its iterations late, start delay p99 %s ms (limit %g ms): %s; its latencies include the delay", where, op.Scenario, results.Ms(d.P99), MaxStartDelayP99, why)})
			}
			if op.Dropped > 0 {
				add(results.GeneratorProblem{Kind: "dropped", Scenario: op.Scenario, Value: float64(op.Dropped),
					Sentence: fmt.Sprintf("%s: scenario %s dropped %d of %d iterations due: every VU was busy; raise max_vus, or queue them (when_busy: queue)", where, op.Scenario, op.Dropped, op.Dropped+op.Count)})
			}
		}
		for _, l := range ph.Limits {
			add(results.GeneratorProblem{Kind: l.Kind, Value: float64(l.Need), Limit: float64(l.Limit), Sentence: l.Sentence})
		}
		if p := ph.Processing; p != nil && p.Seconds >= MinProcessing && p.Seconds >= MaxProcessingShare*p.LatencyS {
			share := p.Seconds / max(p.LatencyS, 1e-9)
			add(results.GeneratorProblem{Kind: "processing", Value: share, Limit: MaxProcessingShare,
				Sentence: fmt.Sprintf("%s: extractions and checks took %v on %s after they arrived, %.0f%% of the %v the responses themselves took (limit %.0f%%): no latency includes it; the VUs sent nothing meanwhile, and on an event loop other VUs' responses waited for it",
					where, seconds(p.Seconds).Round(time.Millisecond), plural(int(p.Responses), "response"), 100*share, seconds(p.LatencyS).Round(time.Millisecond), 100*MaxProcessingShare)})
		}
		if busy, what := generatorBusy(s.Resources, ph.Name, maxProcs); busy >= MaxGeneratorBusy {
			add(results.GeneratorProblem{Kind: "cpu", Value: busy, Limit: MaxGeneratorBusy,
				Sentence: fmt.Sprintf("%s: the load generator's CPU was saturated, %s %.0f%% busy (limit %.0f%%): its latencies include time waiting for the generator itself, treat them as suspect", where, what, 100*busy, 100*MaxGeneratorBusy)})
		}
		c.KeptUp = len(c.Problems) == 0
		ph.Generator = c
		for _, p := range c.Problems {
			s.Warnings = append(s.Warnings, p.Sentence)
		}
	}
}

// generatorBusy is the busiest of perflab's own process (cores used over
// maxProcs) and the generator's host in a stage's window, and which it was.
func generatorBusy(a *monitor.Analysis, window string, maxProcs int) (float64, string) {
	if a == nil {
		return 0, ""
	}
	busy, what := 0.0, ""
	for _, w := range a.Windows {
		if w.Window != window {
			continue
		}
		for _, m := range w.Monitors {
			switch {
			case m.Monitor == results.SelfMonitor && m.CPU != nil && maxProcs > 0:
				if b := m.CPU.Cores / float64(maxProcs); b > busy {
					busy, what = b, fmt.Sprintf("its process (%.2f of %d cores)", m.CPU.Cores, maxProcs)
				}
			case m.Monitor == results.GeneratorMonitor && m.Host != nil:
				if m.Host.BusyAvg > busy {
					busy, what = m.Host.BusyAvg, "its host"
				}
			}
		}
	}
	return busy, what
}
