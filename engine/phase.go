package engine

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
)

// phase runs setup or teardown: its steps, compiled as a flow is, walked
// by the cursor as one VU's one iteration, here in the caller's goroutine
// whichever engine the scenarios run on. Its logic is a flow's (if, loop,
// choose, once, set, use, blocks, transactions); a repeat runs one step
// several times. A failed step stops it, with an error naming the step;
// an interrupt (ctx) stops it at once. What setup sets is r.setupVars, for
// the stages and teardown.
func (r *runner) phase(ctx context.Context, name string, steps []*plan.Step, st plan.Stage) (*metrics.Phase, error) {
	ph := &metrics.Phase{Name: name, Start: time.Now()}
	defer func() { ph.End = time.Now(); pack(ph) }()
	v := newVars(0, name, st.Name(), r.opts.RunID, r.baseVars(st), newSources(r.p, plan.Segment{}), r.opts.Seed, 1<<63)
	lay := &layout{}
	c := &flowCompiler{p: r.p, m: r.msg, fns: r.opts.Steps, l: lay, scen: name, phase: v}
	nodes, err := c.steps(steps, "")
	if err != nil {
		err = fmt.Errorf("%s %w", name, err)
		ph.Error = err.Error()
		return ph, err
	}
	s := &scenario{nodes: nodes, onces: c.onces, keeps: c.keep(), onError: "stop_vu"}
	ph.Ops = lay.ops
	ph.Totals = make([]*metrics.Stats, len(lay.ops))
	for i := range ph.Totals {
		ph.Totals[i] = metrics.NewStats()
	}
	w := &worker{r: r, client: r.client, s: s, vars: v, ph: &phaseRec{ph: ph, lay: lay}}
	keep := func() {
		if name == "setup" {
			maps.Copy(r.setupVars, v.own)
		}
	}
	var failed error
	w.begin(0)
	for {
		// The cursor is asked as if the load went on: a loop's next pass
		// and a condition are decided, and the phase is interrupted only
		// where a step or a wait is left.
		a := w.next(false)
		if a.kind != actEnd && ctx.Err() != nil {
			ph.Error = "interrupted"
			return ph, ctx.Err()
		}
		switch a.kind {
		case actStep:
			res, ended := w.leaf(ctx, a.n)
			if !ended && res.Err != metrics.OK {
				failed = w.failure(name, a.n, res)
			}
			w.stepDone(a.n, res, ended)
			if failed == nil && !ended {
				keep()
			}
		case actSleep:
			if !w.sleep(ctx, a.d) {
				w.endWith(end(true, false))
			}
		case actEnd:
			switch {
			case failed != nil:
				ph.Error = failed.Error()
				return ph, failed
			case !a.complete: // a wait or a bound step cut short
				ph.Error = "interrupted"
				return ph, ctx.Err()
			}
			keep()
			return ph, nil
		}
	}
}

// phaseRec is where setup's or teardown's VU records: in the phase's
// totals, the hops of its steps laid out as they first happen.
type phaseRec struct {
	ph  *metrics.Phase
	lay *layout
}

// step records a step's result, its hops with it, and returns its latency
// (its service time: a phase has no due times).
func (p *phaseRec) step(n *node, res phttp.Result) time.Duration {
	phaseHops(p.ph, p.lay, p.lay.ops[n.op], res)
	p.ph.Totals[n.op].AddResult(res.Latency, res.Latency, res.Err, res.Bytes, res.Detail)
	return res.Latency
}

// failure is the error of phase's step n that failed with res, the pass
// of its repeat named (the cursor is still in the repeat).
func (w *worker) failure(phase string, n *node, res phttp.Result) error {
	if f := w.cur.stack[len(w.cur.stack)-1]; f.n != nil && f.n.rep != nil && f.passes != 1 {
		return fmt.Errorf("%s step %q (repeat %d of %d): %s: %s", phase, n.name, f.pass+1, f.passes, res.Err, res.Detail)
	}
	return fmt.Errorf("%s step %q: %s: %s", phase, n.name, res.Err, res.Detail)
}
