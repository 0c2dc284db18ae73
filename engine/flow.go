package engine

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/plan/expr"
	phttp "github.com/perflab/perflab/protocol/http"
	pws "github.com/perflab/perflab/protocol/ws"
	"github.com/perflab/perflab/tmpl"
)

// nodeKind is what a node of a flow is.
type nodeKind uint8

const (
	nodeLeaf   nodeKind = iota // a step that does something: a request, a call, a message
	nodePause                  // a think time alone
	nodeTx                     // a transaction: its children, timed together
	nodeBlock                  // its children, in order (a block of steps, a fragment)
	nodeIf                     // its children if cond holds, else alt
	nodeLoop                   // its children, pass after pass (loop, or a setup step's repeat)
	nodeChoose                 // one of branches, by weight
	nodeOnce                   // its children, in a VU's first pass only
	nodeSet                    // variables set from expressions
)

// node is a compiled flow element.
type node struct {
	kind     nodeKind
	req      *phttp.Request
	op       int // step or transaction op id
	think    *plan.Think
	children []*node  // transaction steps
	msg      *msgStep // a publish or await step
	grpc     *grpcStep
	ws       *wsStep
	// firstOp is a server-streaming call's time to its first message.
	firstOp int
	fn      StepFunc // a step bound to a Go function (embedded mode)
	// correlate is the id under which the step's requests go to
	// requests.csv (Options.Requests); nil for most steps.
	correlate *tmpl.Template
	name      string
	// at is the step's place in the plan (file:line:column) when it has
	// no name: a block of steps, and a loop or a condition of one.
	at string
	// hops are the operations of the responses an HTTP step followed.
	hops hopOps
	// logic
	cond     *expr.Program // nodeIf
	alt      []*node       // nodeIf: else
	loop     *plan.Loop    // nodeLoop
	rep      *repeat       // nodeLoop of a setup or teardown step's repeat (loop is nil)
	branches [][]*node     // nodeChoose, with their weights summed in cum
	cum      []float64
	onceID   int            // nodeOnce: its number in the scenario
	set      []*plan.Assign // nodeSet
	warned   atomic.Bool    // an expression of the node failed, said once
}

// who names the node's step in a message: "step NAME", or its place in
// the plan when it has no name.
func (n *node) who() string {
	if n.name == "" {
		return "the step at " + n.at
	}
	return "step " + n.name
}

// scenario is a compiled scenario for one stage.
type scenario struct {
	sc *plan.Scenario
	// engine is EngineLoop or EngineGoroutines (chooseEngine), and why
	// the latter when the loop was not chosen.
	engine, why string
	nodes       []*node
	// onces counts the scenario's once nodes; keeps says its flow's
	// expressions read responses' bodies or headers (every request keeps
	// them).
	onces         int
	keeps         bool
	iterOp        int
	onError       string
	plan.Workload // resolved for the stage; VUs and MaxVUs are seg's shares
	// seg is the worker's share of a distributed run (plan.Segment);
	// planVUs the plan's VUs, from which ramp-ups are timed.
	seg     plan.Segment
	planVUs int
}

// vu is the plan's number of the scenario's k-th VU (from 1) in this
// worker: ${vu}, per-vu rows and ramp-up delays are the plan's.
func (s *scenario) vu(k int) int { return s.seg.GlobalVU(k) }

// iter is the plan's number of this worker's n-th iteration (from 0).
func (s *scenario) iter(n int64) int64 { return s.seg.Global(n) }

// rampUpDelay is when the plan starts VU i (from 1) of a ramp-up.
func (s *scenario) rampUpDelay(i int) time.Duration {
	if s.RampUp <= 0 || s.planVUs <= 1 {
		return 0
	}
	return time.Duration(int64(s.RampUp) * int64(i-1) / int64(s.planVUs))
}

// layout assigns op ids to every step, transaction and scenario of a stage.
type layout struct {
	ops   []metrics.Op
	index map[metrics.Op]int
}

func (l *layout) id(op metrics.Op) int {
	if i, ok := l.index[op]; ok {
		return i
	}
	if l.index == nil {
		l.index = map[metrics.Op]int{}
	}
	l.index[op] = len(l.ops)
	l.ops = append(l.ops, op)
	return len(l.ops) - 1
}

// repeat is a setup or teardown step's repeat: its passes, and the data
// source whose rows they take (for_each).
type repeat struct {
	count int
	src   *source
}

// flowCompiler compiles a scenario's flow (or a phase's steps) into
// nodes.
type flowCompiler struct {
	p        *plan.Plan
	m        *messaging
	fns      map[string]StepFunc
	l        *layout
	scen     string
	defThink *plan.Think
	onces    int
	// phase is setup's or teardown's VU when compiling one (nil for a
	// scenario's flow): a repeat's count and rows are its stage's, its
	// steps run in the phase's goroutine whatever the engine, and record
	// their hops as they happen (phaseRec).
	phase *vars
	// what the flow's expressions read of the last response
	keepBody    bool
	keepHeaders []string
	reqs        []*phttp.Request
}

func (c *flowCompiler) steps(steps []*plan.Step, tx string) ([]*node, error) {
	var out []*node
	for _, st := range steps {
		n, err := c.step(st, tx)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// reads notes what an expression reads of the last response.
func (c *flowCompiler) reads(e *plan.Expr) *expr.Program {
	if e == nil {
		return nil
	}
	c.keepBody = c.keepBody || e.Prog.Body
	c.keepHeaders = append(c.keepHeaders, e.Prog.Headers...)
	return e.Prog
}

// step compiles one step, its logic wrapped around it from the inside
// out: a loop repeats the step, a condition decides whether the loop (or
// the step) runs at all, once whether the condition is even asked.
func (c *flowCompiler) step(st *plan.Step, tx string) (*node, error) {
	n, err := c.body(st, tx)
	if err != nil {
		return nil, err
	}
	if st.Repeat != nil && c.phase != nil {
		rep, err := c.repeat(st)
		if err != nil {
			return nil, err
		}
		n = &node{kind: nodeLoop, name: n.name, at: n.at, rep: rep, children: []*node{n}}
	}
	if st.Loop != nil {
		for _, e := range []*plan.Expr{st.Loop.Count, st.Loop.While, st.Loop.Over} {
			c.reads(e)
		}
		n = &node{kind: nodeLoop, name: n.name, at: n.at, loop: st.Loop, children: []*node{n}}
	}
	if st.If != nil {
		alt, err := c.steps(st.Else, tx)
		if err != nil {
			return nil, err
		}
		n = &node{kind: nodeIf, name: n.name, at: n.at, cond: c.reads(st.If), children: []*node{n}, alt: alt}
	}
	if st.Once {
		n = &node{kind: nodeOnce, name: n.name, at: n.at, onceID: c.onces, children: []*node{n}}
		c.onces++
	}
	return n, nil
}

// repeat resolves a setup or teardown step's repeat for the phase's
// stage: count passes, or one for each row of a data source.
func (c *flowCompiler) repeat(st *plan.Step) (*repeat, error) {
	rp := st.Repeat
	if rp.ForEach == "" {
		n, err := rp.Count.Int(c.phase.base, 0)
		if err != nil {
			return nil, fmt.Errorf("step %s: repeat count: %w", st.Name, err)
		}
		return &repeat{count: int(n)}, nil
	}
	src := c.phase.data.list[c.phase.data.byName[rp.ForEach]]
	return &repeat{count: len(src.d.Rows), src: src}, nil
}

// body compiles what a step does itself: a request (or call, message,
// gRPC call, WebSocket message), a pause, a transaction, a block, a choice.
func (c *flowCompiler) body(st *plan.Step, tx string) (*node, error) {
	p, m, fns, l, scen := c.p, c.m, c.fns, c.l, c.scen
	n := &node{think: st.Think, name: st.Label()}
	if n.name == "" {
		n.at = p.Place(st.Pos)
	}
	if st.Correlate != nil {
		n.correlate = st.Correlate.T
	}
	if n.think == nil && st.IsOperation() {
		n.think = c.defThink
	}
	switch {
	case st.IsPause():
		n.kind = nodePause
	case st.Set != nil:
		n.kind = nodeSet
		n.set = st.Set
		for _, a := range st.Set {
			c.reads(a.Expr)
		}
	case st.Choose != nil:
		n.kind = nodeChoose
		// The weights are summed as shares of the largest: their ratios,
		// where weights of 1e308 would add up to +Inf, and every pass take
		// the last branch.
		top := 0.0
		for _, b := range st.Choose {
			top = max(top, b.W())
		}
		sum := 0.0
		for _, b := range st.Choose {
			kids, err := c.steps(b.Steps, tx)
			if err != nil {
				return nil, err
			}
			sum += b.W() / top
			n.branches = append(n.branches, kids)
			n.cum = append(n.cum, sum)
		}
	case st.IsBlock():
		n.kind = nodeBlock
		kids, err := c.steps(st.Steps, tx)
		if err != nil {
			return nil, err
		}
		n.children = kids
	case st.IsTransaction():
		n.kind = nodeTx
		n.op = l.id(metrics.Op{Name: st.Transaction, Kind: metrics.KindTransaction, Scenario: scen})
		kids, err := c.steps(st.Steps, st.Transaction)
		if err != nil {
			return nil, err
		}
		n.children = kids
		// After a transaction: its own think time, else the scenario's.
		// Its last step's think is not applied inside it.
		n.think = st.Think
		if n.think == nil {
			n.think = c.defThink
		}
	case fns[st.Name] != nil || st.Call != "":
		if p.HTTP.RequiresEventLoop() && c.phase == nil {
			return nil, fmt.Errorf("step %s is bound to a Go function: http.event_loop runs HTTP requests only (remove event_loop: true)", st.Name)
		}
		n.op = l.id(metrics.Op{Name: st.Name, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		if n.fn = bound(fns, st); n.fn == nil {
			return nil, fmt.Errorf("step %s calls %s, which the program running the plan does not bind (call steps run from Go: package perflab)", st.Name, st.Call)
		}
	case st.GRPC != nil:
		n.op = l.id(metrics.Op{Name: st.Name, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		gs, err := compileGRPC(p, m, st)
		if err != nil {
			return nil, err
		}
		n.grpc = gs
		if gs.call.Streams() && c.phase == nil {
			n.firstOp = l.id(metrics.Op{Name: st.Name + FirstMessage, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		}
	case st.WS != nil:
		n.op = l.id(metrics.Op{Name: st.Name, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		s, err := pws.Compile(st)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.Name, err)
		}
		if m == nil || m.ws == nil {
			return nil, fmt.Errorf("step %s: the run's WebSocket dialer is not made", st.Name)
		}
		n.ws = &wsStep{step: s, dialer: m.ws,
			connectOp:   l.id(metrics.Op{Name: st.Name + WSConnect, Kind: metrics.KindStep, Scenario: scen, Transaction: tx}),
			unmatchedOp: l.id(metrics.Op{Name: st.Name + WSUnmatched, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})}
	case st.IsMessage():
		n.op = l.id(metrics.Op{Name: st.Name, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		ms, err := compileMessage(m, st)
		if err != nil {
			return nil, err
		}
		n.msg = ms
	default:
		n.op = l.id(metrics.Op{Name: st.Name, Kind: metrics.KindStep, Scenario: scen, Transaction: tx})
		req, err := phttp.CompileStep(p, st)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.Name, err)
		}
		n.req = req
		if c.phase == nil {
			n.hops = newHopOps(l, req, l.ops[n.op])
		}
		c.reqs = append(c.reqs, req)
	}
	return n, nil
}

// keep makes every request of the flow keep what its expressions read of
// the last response (its body, headers), and reports whether they read
// any.
func (c *flowCompiler) keep() bool {
	if !c.keepBody && len(c.keepHeaders) == 0 {
		return false
	}
	for _, r := range c.reqs {
		r.Keep(c.keepBody, c.keepHeaders)
	}
	return true
}

// each calls f for every node of nodes and of the nodes they hold.
func each(nodes []*node, f func(*node)) {
	for _, n := range nodes {
		f(n)
		each(n.children, f)
		each(n.alt, f)
		for _, b := range n.branches {
			each(b, f)
		}
	}
}

// compileStage resolves every scenario's load for a stage's variables.
func compileStage(p *plan.Plan, m *messaging, fns map[string]StepFunc, vars map[string]string, seg plan.Segment) ([]*scenario, *layout, error) {
	l := &layout{}
	var out []*scenario
	for _, sc := range p.Scenarios {
		c := &flowCompiler{p: p, m: m, fns: fns, l: l, scen: sc.Name, defThink: sc.Think}
		nodes, err := c.steps(sc.Flow, "")
		if err != nil {
			return nil, nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		s := &scenario{sc: sc, nodes: nodes, onError: sc.OnError, onces: c.onces, keeps: c.keep()}
		s.iterOp = l.id(metrics.Op{Name: sc.Name, Kind: metrics.KindScenario, Scenario: sc.Name})
		if s.Workload, err = sc.LoadFor(vars); err != nil {
			return nil, nil, err
		}
		s.seg, s.planVUs = seg, s.VUs
		s.VUs, s.MaxVUs = int(seg.Share(int64(s.VUs))), int(seg.Share(int64(s.MaxVUs)))
		out = append(out, s)
	}
	return out, l, nil
}

// bound is the function a step runs in-process: the one bound to its name,
// else to the function it calls.
func bound(fns map[string]StepFunc, st *plan.Step) StepFunc {
	if f := fns[st.Name]; f != nil {
		return f
	}
	return fns[st.Call]
}
