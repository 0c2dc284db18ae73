package engine

import (
	"time"

	"github.com/perflab/perflab/metrics"
	phttp "github.com/perflab/perflab/protocol/http"
)

// A VU's iteration is walked by its cursor, one interpreter that both
// engines drive: next says what to do (run a step, wait, or end the
// iteration), the engine does it its own way (a goroutine blocks; an event
// loop's VU waits for its callback), then tells the cursor how it went
// (stepDone) and asks again. Transactions, the scenario's on_error policy,
// think times and the flow's logic are decided here and nowhere else, so
// the two engines cannot differ on them.

// actionKind is what a VU does next.
type actionKind uint8

const (
	actStep  actionKind = iota // run the leaf n, then stepDone
	actSleep                   // wait d (the plan's wait: it moves an open model's due time)
	actEnd                     // the iteration is over
)

// action is the cursor's answer to next.
type action struct {
	kind actionKind
	n    *node
	d    time.Duration
	// stop: the VU stops after this iteration. complete: every step that
	// was to run ran; an iteration cut short by the load's end is not
	// recorded.
	stop, complete bool
}

// frame is a list of nodes being walked: the flow, or the children of a
// node (a transaction's steps).
type frame struct {
	n     *node // the node whose children these are; nil for the flow
	nodes []*node
	i     int // the next node
	// a loop's: the passes begun, the last pass's (and the limit on
	// them), its list's items, and the steps and waits begun when the
	// pass began (a pass that begins none is empty)
	pass, passes int
	items        []string
	acts         uint32 // cursor.acts
	empty        int
}

// txState is the transaction in progress: what its steps took, think time
// excluded, and its first error.
type txState struct {
	n       *node
	first   metrics.ErrKind
	elapsed time.Duration
	svc     time.Duration
	began   time.Time
	depth   int // its frame's index in the stack
}

// cursor is where a VU is in its iteration.
type cursor struct {
	stack []frame
	tx    *txState // the transaction in progress, if any
	txBuf txState
	first metrics.ErrKind // the iteration's first error
	// acts counts the steps and waits begun: a loop's pass that begins
	// none is empty. Only equality is asked of it, so it may wrap: 32
	// bits, beside first (8 bytes a VU, the worker within a size class).
	acts uint32
	// detail says the first error when no step's result did: an
	// expression refused for the text it would make (logic.go).
	detail string
	// pending is a wait before the next node (a step's think time), or
	// ending the iteration's end (the on_error policy ended it).
	pending time.Duration
	ending  *action
	endBuf  action
	// last is the last step's outcome in the iteration, for expressions.
	last outcome
}

// outcome is what expressions read of a step's result (env).
type outcome struct {
	status, bytes int
	latency       time.Duration
	err           metrics.ErrKind
	sent          bool // the request was sent (a result with a start)
}

// begin starts iteration iter at the flow's first node: the VU's
// iteration variables and its per-iteration HTTP state (cookies when
// http.cookies is per_iteration) are new.
func (w *worker) begin(iter int64) {
	w.setBusy(true)
	w.vars.setIteration(iter)
	w.scr.NewIteration()
	c := &w.cur
	if len(w.once) < w.s.onces {
		w.once = make([]bool, w.s.onces)
	}
	c.stack = append(c.stack[:0], frame{nodes: w.s.nodes})
	c.tx, c.ending = nil, nil
	c.first, c.detail, c.pending = metrics.OK, "", 0
	c.last = outcome{}
}

// next says what the VU does next. done reports whether the load has
// ended (ctx): an iteration with a step or a wait left ends, cut short,
// and a transaction in progress is not recorded.
func (w *worker) next(done bool) action {
	c := &w.cur
	if c.ending != nil {
		a := *c.ending
		c.ending = nil
		return a
	}
	for {
		// A wait, or a node, left when the load has ended: the iteration
		// is cut short. Its last step done, it is whole.
		if d := c.pending; d > 0 {
			c.pending = 0
			if done {
				return end(true, false)
			}
			return action{kind: actSleep, d: d}
		}
		f := &c.stack[len(c.stack)-1]
		if f.i >= len(f.nodes) {
			switch {
			case f.n == nil:
				return end(false, true)
			case f.n.kind == nodeLoop && !done && w.nextPass(f):
				f.i = 0
			default:
				w.pop()
			}
			continue
		}
		if done {
			return end(true, false)
		}
		n := f.nodes[f.i]
		f.i++
		switch n.kind {
		case nodePause:
			if d := w.thinkTime(n.think); d > 0 {
				c.acts++
				return action{kind: actSleep, d: d}
			}
		case nodeLeaf:
			c.acts++
			if w.s.keeps {
				w.scr.ForgetLast()
			}
			return action{kind: actStep, n: n}
		case nodeTx:
			w.push(n, n.children)
			c.txBuf = txState{n: n, began: time.Now(), depth: len(c.stack) - 1}
			c.tx = &c.txBuf
		case nodeBlock:
			w.push(n, n.children)
		case nodeOnce:
			if !w.once[n.onceID] {
				w.once[n.onceID] = true
				w.push(n, n.children)
			}
		case nodeIf:
			if w.cond(n, n.cond) {
				w.push(n, n.children)
			} else if len(n.alt) > 0 {
				w.push(n, n.alt)
			}
		case nodeSet:
			w.setVars(n)
		case nodeChoose:
			if b := w.choose(n); len(b) > 0 {
				w.push(n, b)
			}
		case nodeLoop:
			w.push(n, n.children)
			if !w.startLoop(&c.stack[len(c.stack)-1]) {
				c.stack = c.stack[:len(c.stack)-1]
			}
		}
	}
}

// push begins walking nodes, the children of n.
func (w *worker) push(n *node, nodes []*node) {
	w.cur.stack = append(w.cur.stack, frame{n: n, nodes: nodes})
}

func end(stop, complete bool) action { return action{kind: actEnd, stop: stop, complete: complete} }

// pop ends the frame on top of the stack, which is not the flow's: a
// transaction is recorded; the think time of the node that pushed it (a
// transaction's, or one a block gives itself) follows it.
func (w *worker) pop() {
	c := &w.cur
	f := c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	switch {
	case f.n.kind == nodeTx:
		w.endTx()
	case f.n.rep != nil:
		w.vars.endRepeat()
	}
	w.thinkAfter(f.n)
}

// endTx records the transaction in progress.
func (w *worker) endTx() {
	t := w.cur.tx
	w.cur.tx = nil
	if w.ph != nil {
		w.ph.ph.Totals[t.n.op].Add(t.elapsed, t.svc, t.first, 0)
	} else {
		w.rec.Record(w.shard, t.n.op, t.elapsed, t.svc, t.first, 0)
	}
	w.correlate(t.n, t.began, time.Now(), t.first)
}

// thinkAfter makes n's think time the wait before the next node.
func (w *worker) thinkAfter(n *node) {
	if n.think != nil {
		w.cur.pending = w.thinkTime(n.think)
	}
}

// stepDone takes the outcome of the step next gave: it is recorded (res's
// Latency is its service time), and the flow goes on as the scenario's
// on_error policy says. ended means the step was cut short by the load's
// end (an await, a bound function): no result, nothing recorded.
func (w *worker) stepDone(n *node, res phttp.Result, ended bool) {
	c := &w.cur
	if ended {
		w.endWith(end(true, false))
		return
	}
	var lat time.Duration
	if w.ph != nil {
		lat = w.ph.step(n, res)
	} else {
		lat = w.record(n, res)
		if res.Processing > 0 {
			p := &w.proc
			p.time, p.latency, p.responses = p.time+res.Processing, p.latency+res.Latency, p.responses+1
		}
	}
	if n.correlate != nil && !res.Start.IsZero() {
		w.correlate(n, res.Start, res.Start.Add(res.Latency), res.Err)
	}
	if res.Dump != nil {
		w.dumpFailure(n, res)
	}
	c.last = outcome{status: res.Status, bytes: res.Bytes, latency: res.Latency, err: res.Err, sent: !res.Start.IsZero()}
	if res.Err != metrics.OK && c.first == metrics.OK {
		c.first = res.Err
	}
	if t := c.tx; t != nil {
		t.elapsed += lat
		t.svc += res.Latency
		if res.Err != metrics.OK && t.first == metrics.OK {
			t.first = res.Err
		}
	}
	if res.Err != metrics.OK && (w.s.onError == "next_iteration" || w.s.onError == "stop_vu") {
		if c.tx != nil { // the transaction ends with its failed step
			w.endTx()
		}
		w.endWith(end(w.s.onError == "stop_vu", false))
		return
	}
	// The last step of a transaction has no think time inside it: the
	// transaction's follows.
	if t := c.tx; t != nil && len(c.stack)-1 == t.depth {
		if f := c.stack[t.depth]; f.i == len(f.nodes) {
			return
		}
	}
	w.thinkAfter(n)
}

// dumpFailure writes a failed step's request and response to the
// failure log (Options.Failures).
func (w *worker) dumpFailure(n *node, res phttp.Result) {
	v := w.vars
	w.r.opts.Failures.Write(phttp.Failure{
		Time: res.Start, Stage: v.stage, Scenario: v.scenario, Step: n.name, VU: v.vu, Iteration: v.iteration,
		Kind: res.Err.String(), Message: metrics.MessageOf(res.Err, res.Detail), Detail: res.Detail, Status: res.Status,
	}, res.Dump)
}

// record records a step's result in the stage, its hops with it, and
// returns its latency.
func (w *worker) record(n *node, res phttp.Result) time.Duration {
	w.hops(n, res)
	lat := w.latency(res)
	w.rec.RecordResult(w.shard, n.op, lat, res.Latency, res.Err, res.Bytes, res.Detail)
	if res.HasServer && res.Err == metrics.OK {
		w.rec.RecordServer(w.shard, n.op, res.Server, res.Latency)
	}
	return lat
}

func (w *worker) endWith(a action) {
	w.cur.endBuf = a
	w.cur.ending = &w.cur.endBuf
}
