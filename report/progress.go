package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
)

// Progress shows a live line per scenario of the running stage. On a
// terminal the lines are redrawn in place every tick, but at most about
// once a second (a short run ticks every 100 ms); otherwise a plain line
// per scenario is printed every Every. Each line's rate is over the time
// since the one before.
type Progress struct {
	W        io.Writer
	Terminal bool
	Every    time.Duration

	mu        sync.Mutex
	drawn     int // lines drawn in place last time
	lastCount map[string]int64
	lastAt    time.Duration // when the last lines were shown
	phase     *metrics.Phase
}

// redrawEvery is how often a terminal's lines are redrawn at most.
const redrawEvery = time.Second

// ScenarioProgress is the live state of one scenario.
type ScenarioProgress struct {
	Scenario   string
	Requests   int64
	Errors     int64
	Iterations int64
	Rate       float64 // requests per second over the last tick
	P95        float64 // ms, current interval (the last one if the current is empty)
	Remaining  time.Duration
	Elapsed    time.Duration
	HasRemain  bool
}

// Scenarios computes per-scenario progress from a tick.
func Scenarios(ph *metrics.Phase, t *metrics.Tick) []ScenarioProgress {
	var out []ScenarioProgress
	idx := map[string]int{}
	hists := map[string]*metrics.Stats{}
	for _, l := range ph.Load {
		idx[l.Scenario] = len(out)
		out = append(out, ScenarioProgress{Scenario: l.Scenario, Elapsed: t.Elapsed})
	}
	for i, op := range t.Ops {
		j, ok := idx[op.Scenario]
		if !ok {
			continue
		}
		sp := &out[j]
		n := t.Cur[i].Count + t.Total[i].Count
		switch op.Kind {
		case metrics.KindScenario:
			sp.Iterations += n
		case metrics.KindStep:
			sp.Requests += n
			sp.Errors += t.Cur[i].ErrorCount() + t.Total[i].ErrorCount()
			src := t.Cur[i]
			if src.OK.N == 0 && t.LastIvl != nil {
				src = t.LastIvl[i]
			}
			if src.OK.N > 0 {
				h := hists[op.Scenario]
				if h == nil {
					h = metrics.NewStats()
					hists[op.Scenario] = h
				}
				h.Merge(src)
			}
		}
	}
	for i := range out {
		sp := &out[i]
		if h := hists[sp.Scenario]; h != nil {
			sp.P95 = float64(h.Hist.ValueAtPercentile(95)) / 1e3
		}
		l := ph.Load[i]
		switch {
		case l.Duration > 0:
			sp.Remaining, sp.HasRemain = max(l.Duration-t.Elapsed, 0), true
		case l.Planned() > 0 && sp.Iterations > 0:
			left := l.Planned() - sp.Iterations
			sp.Remaining = time.Duration(float64(t.Elapsed) * float64(left) / float64(sp.Iterations))
			sp.HasRemain = true
		}
	}
	return out
}

// Tick renders a tick; safe to call from the collector goroutine.
func (p *Progress) Tick(ph *metrics.Phase, t *metrics.Tick) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.phase != ph {
		p.phase, p.drawn, p.lastAt = ph, 0, 0
		p.lastCount = map[string]int64{}
	}
	every := p.Every
	switch {
	case p.Terminal:
		every = redrawEvery
	case every <= 0:
		every = 10 * time.Second
	}
	// A tick a little early (its timer's jitter) still shows.
	if t.Elapsed-p.lastAt < every*9/10 && !t.Final {
		return
	}
	sps := Scenarios(ph, t)
	dt := (t.Elapsed - p.lastAt).Seconds()
	for i := range sps {
		if t.Final && t.Elapsed > 0 { // the stage's average, not a last sliver
			sps[i].Rate = float64(sps[i].Requests) / t.Elapsed.Seconds()
		} else if dt > 0 {
			sps[i].Rate = float64(sps[i].Requests-p.lastCount[sps[i].Scenario]) / dt
		}
		p.lastCount[sps[i].Scenario] = sps[i].Requests
	}
	p.lastAt = t.Elapsed
	if p.Terminal {
		if p.drawn > 0 {
			fmt.Fprintf(p.W, "\x1b[%dA", p.drawn)
		}
		for _, sp := range sps {
			fmt.Fprintf(p.W, "\x1b[2K%s\n", line(ph, sp))
		}
		p.drawn = len(sps)
		return
	}
	for _, sp := range sps {
		fmt.Fprintln(p.W, line(ph, sp))
	}
}

// Done forgets the lines drawn, so the next output starts below them.
func (p *Progress) Done() {
	p.mu.Lock()
	p.drawn = 0
	p.mu.Unlock()
}

func line(ph *metrics.Phase, sp ScenarioProgress) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %-12s %s", ph.Name, sp.Scenario, clock(sp.Elapsed))
	if sp.HasRemain {
		fmt.Fprintf(&b, " (-%s)", clock(sp.Remaining))
	}
	pct := 0.0
	if sp.Requests > 0 {
		pct = 100 * float64(sp.Errors) / float64(sp.Requests)
	}
	fmt.Fprintf(&b, "  requests %d  %.1f/s  errors %d (%.2f%%)  p95 %s ms", sp.Requests, sp.Rate, sp.Errors, pct, results.Ms(sp.P95))
	return b.String()
}

func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
}
