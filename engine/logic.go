package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/plan/expr"
)

// The flow's logic as the cursor runs it: conditions, loops and choices
// read a VU's expression environment (env), made on the VU's first
// expression and bound to its variables and its last response.

// MaxEmptyPasses bounds the passes in a row of a loop that begin no step
// and no wait (its steps all skipped by conditions): such a loop would
// spin without end where nothing in it ever changes. The loop ends, and
// says so once.
const MaxEmptyPasses = 1000

// env is the VU's expression environment, up to date.
func (w *worker) env() *expr.Env {
	e := w.exprEnv
	if e == nil {
		e = &expr.Env{
			Var: func(name string) string {
				v, _ := w.vars.Lookup(name)
				return v
			},
			Defined: func(name string) bool {
				_, ok := w.vars.Lookup(name)
				return ok
			},
			Header: func(name string) string {
				v, _ := w.scr.LastHeader(name)
				return v
			},
			JSON:   w.lastJSON,
			Random: func() float64 { return w.vars.rng.Float64() },
			IntN:   w.vars.rng.IntN,
		}
		e.VarNamed = e.Var
		w.exprEnv = e
	}
	e.VU, e.Iteration = w.vars.vu, int(w.vars.iteration)
	res := w.cur.last
	e.Response = expr.Response{Status: res.status, Duration: float64(res.latency) / 1e6, Size: res.bytes,
		OK: res.err == metrics.OK && res.sent, Body: string(w.scr.LastBody())}
	if res.err != metrics.OK {
		e.Response.Error = res.err.String()
	}
	return e
}

// lastJSON evaluates a JSONPath on the last response's body, as checks
// and extractions read it (plan.JSONPath): its one value, a list when it
// selects several, nil when none (or the body is no JSON).
func (w *worker) lastJSON(path string) any {
	p := w.jsonPaths[path]
	if p == nil {
		var err error
		if p, err = plan.ParseJSONPath(path); err != nil {
			panic(fmt.Sprintf("json(%q): %v", path, err)) // checked at load when given as text
		}
		if w.jsonPaths == nil {
			w.jsonPaths = map[string]*plan.JSONPath{}
		}
		w.jsonPaths[path] = p
	}
	var body plan.JSONBody
	body.Reset(w.scr.LastBody())
	return p.Value(&body)
}

// cond evaluates a condition of n; one that fails is false, and said once.
func (w *worker) cond(n *node, p *expr.Program) bool {
	ok, err := p.Bool(w.env())
	if err != nil {
		w.exprFailed(n, p, err, "taken as false")
		return false
	}
	return ok
}

// exprFailed says, once for the node, that its expression p failed and
// what the flow did instead. One refused for the text it would make
// (expr.LimitError) also fails the iteration, as other, with its words,
// unless a step failed it before.
func (w *worker) exprFailed(n *node, p *expr.Program, err error, instead string) {
	var le *expr.LimitError
	if c := &w.cur; errors.As(err, &le) && c.first == metrics.OK {
		c.first, c.detail = metrics.Other, fmt.Sprintf("step %s: %s: %v", n.name, p, err)
	}
	if n.warned.CompareAndSwap(false, true) && w.r != nil && w.r.opts.OnEvent != nil {
		w.r.opts.OnEvent(fmt.Sprintf("%s: %s: %v (%s; said once)", n.who(), p, err, instead))
	}
}

// setVars gives a set step's variables their values, in order (a value
// may read the ones before it); one that fails is left unset, and said
// once.
func (w *worker) setVars(n *node) {
	for _, a := range n.set {
		v, err := a.Expr.Prog.Eval(w.env())
		if err != nil {
			w.exprFailed(n, a.Expr.Prog, err, "the variable is left as it was")
			continue
		}
		w.vars.Set(a.Name, valueText(v))
	}
}

// valueText is an expression's value as a variable holds it: text as it
// is, a whole number without a fraction, anything else as JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case int:
		return strconv.Itoa(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// choose picks one of n's branches by weight, with the VU's random numbers.
func (w *worker) choose(n *node) []*node {
	x := w.vars.rng.Float64() * n.cum[len(n.cum)-1]
	for i, c := range n.cum {
		if x < c {
			return n.branches[i]
		}
	}
	return n.branches[len(n.branches)-1]
}

// startLoop begins a loop's first pass in frame f, if it has one.
func (w *worker) startLoop(f *frame) bool {
	f.pass, f.passes, f.items = 0, -1, nil
	if r := f.n.rep; r != nil {
		f.passes = r.count
		return w.beginPass(f)
	}
	l := f.n.loop
	switch {
	case l.Count != nil:
		v, err := l.Count.Prog.Eval(w.env())
		if err == nil {
			f.passes, err = loopCount(v)
		}
		if err != nil {
			w.exprFailed(f.n, l.Count.Prog, err, "no pass")
			return false
		}
	case l.Over != nil:
		v, err := l.Over.Prog.Eval(w.env())
		if err == nil {
			f.items, err = items(v)
		}
		if err != nil {
			w.exprFailed(f.n, l.Over.Prog, err, "no pass")
			return false
		}
		f.passes = len(f.items)
	}
	if l.Max > 0 && (f.passes < 0 || f.passes > l.Max) {
		f.passes = l.Max
	}
	return w.beginPass(f)
}

// nextPass begins a loop's next pass, if it has one.
func (w *worker) nextPass(f *frame) bool {
	if w.cur.acts == f.acts {
		if f.empty++; f.empty >= MaxEmptyPasses {
			if f.n.warned.CompareAndSwap(false, true) && w.r != nil && w.r.opts.OnEvent != nil {
				w.r.opts.OnEvent(fmt.Sprintf("%s: the loop ended after %d passes in a row that ran no step (engine.MaxEmptyPasses)", f.n.who(), MaxEmptyPasses))
			}
			return false
		}
	} else {
		f.empty = 0
	}
	f.pass++
	return w.beginPass(f)
}

// beginPass sets up pass f.pass, if the loop has it.
func (w *worker) beginPass(f *frame) bool {
	if f.passes >= 0 && f.pass >= f.passes {
		return false
	}
	f.acts = w.cur.acts
	if r := f.n.rep; r != nil {
		w.vars.repeatPass(f.pass, r.src)
		return true
	}
	l := f.n.loop
	if l.While != nil && !w.cond(f.n, l.While.Prog) {
		return false
	}
	if l.Index != "" {
		w.vars.Set(l.Index, strconv.Itoa(f.pass))
	}
	for _, name := range l.Rows {
		w.vars.nextRow(name)
	}
	if l.As != "" {
		w.vars.Set(l.As, f.items[f.pass])
	}
	return true
}

// loopCount is a loop's count from an expression's value.
func loopCount(v any) (int, error) {
	var f float64
	switch x := v.(type) {
	case int:
		return max(x, 0), nil
	case float64:
		f = x
	case string:
		n, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return 0, fmt.Errorf("count %q is not a number", x)
		}
		f = n
	default:
		return 0, fmt.Errorf("count %v is not a number", v)
	}
	if f != float64(int(f)) {
		return 0, fmt.Errorf("count %v is not a whole number", v)
	}
	return max(int(f), 0), nil
}

// items are a loop's items from an expression's value: a list, or text
// holding a JSON array (an extraction's match: all); each item as text
// (a string as it is, anything else as JSON).
func items(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		if s == "" {
			return nil, nil
		}
		var list []any
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("over: %.60q is not a list (a JSON array)", s)
		}
		v = list
	}
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("over: %v is not a list", v)
	}
	out := make([]string, len(list))
	for i, x := range list {
		if s, ok := x.(string); ok {
			out[i] = s
			continue
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}
