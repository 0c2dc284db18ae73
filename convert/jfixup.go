package convert

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/plan/expr"
)

// fixer resolves the marks of the converted plan (see value), knowing
// where each step stands: the names a step may read are those perflab's
// validator gives it there (the plan's variables, data sources, what
// earlier steps extracted, loop variables), so the plan loads, and reads
// what JMeter's would.
type fixer struct {
	c *converter
	p *planOut
	// extracted are the names extractions set anywhere, all those of
	// match: all.
	extracted, all map[string]bool
	// vars are the plan's variables to declare, in order.
	vars     map[string]string
	varOrder []string
	// udvState: how each User Defined Variable resolves (by JMeter name).
	udvDone map[string]*udvRes
	// setBy names the script that sets a variable, by JMeter name.
	setBy   map[string]string
	visited map[*stepOut]bool
	// cur is the step being resolved, for notes.
	cur *element
	// genSets are the variables the step being resolved reads that a set:
	// step before it gives (see gen); genCount numbers them by kind.
	genSets  ordered
	genCount map[string]int
	// loopSets are the names the steps of the While loop whose condition
	// is being resolved set.
	loopSets map[string]bool
	// blocks are the conditional blocks (the steps of an if, its else, a
	// branch, a loop that may run no pass) the step being resolved is in,
	// outermost first, each by a number of its own; blockCount numbers
	// them.
	blocks     []int
	blockCount int
}

// within runs f in a conditional block of its own: what its steps set is
// set for sure only for what it holds itself.
func (f *fixer) within(fn func()) {
	f.blockCount++
	f.blocks = append(f.blocks, f.blockCount)
	defer func() { f.blocks = f.blocks[:len(f.blocks)-1] }()
	fn()
}

// blockPath names the blocks the step being resolved is in.
func (f *fixer) blockPath() string {
	var b strings.Builder
	for _, n := range f.blocks {
		fmt.Fprintf(&b, "/%d", n)
	}
	return b.String() + "/"
}

// sureOf reports whether a name set where sc stands is set for sure: the
// blocks it was set in hold the step being resolved.
func (f *fixer) sureOf(name string, sc *fscope) bool {
	if sc == nil {
		return false
	}
	p, ok := sc.sure[name]
	return ok && strings.HasPrefix(f.blockPath(), p)
}

// shadowed begins a scenario's flow with a set: step of each CSV column
// that an extraction of the flow sets too, read from the data source (a
// file read an iteration at a time, not a loop's rows): a CSV Data Set
// sets its variables as each iteration starts, and an extractor replaces
// one until the next does. The flow then reads the variable everywhere,
// the column's value until an extraction of the iteration replaces it,
// where JMeter reads the CSV's row in the branches that do not extract.
func (f *fixer) shadowed(sc *scenarioOut) {
	var set ordered
	for _, name := range slices.Sorted(maps.Keys(f.c.csvCols)) {
		if !f.extracted[name] || !f.c.perIteration(name) || !readsVar(sc.Flow, name) {
			continue
		}
		set = append(set, kv{name, exprMarkMode(modeVar, name)})
	}
	if set != nil {
		sc.Flow = append([]*stepOut{{Set: set}}, sc.Flow...)
	}
}

// readsVar reports whether a step of flow reads the JMeter variable name
// (its mark, in any mode, in what the step sends or decides on).
func readsVar(flow []*stepOut, name string) bool {
	reads := false
	eachStep(flow, func(s *stepOut) {
		text := fmt.Sprint(s.URL, s.Body, s.If, s.Headers, s.Form, s.Set, s.Check, s.Extract)
		if s.Loop != nil {
			text += fmt.Sprint(s.Loop.While, s.Loop.Count, s.Loop.Over)
		}
		for _, mode := range []byte{modeVar, modeRaw, modeDec} {
			reads = reads || strings.Contains(text, mark(mode, name))
		}
	})
	return reads
}

// udvRes is a User Defined Variable resolved: a literal value (a
// variable of the plan), another variable's placeholder (an alias), or a
// template (put in where it is used).
type udvRes struct {
	literal   bool
	value     string // the literal value, or the template
	resolving bool
}

// fscope is what a step may read where it stands.
type fscope struct {
	local map[string]bool   // perflab names: extracted, loop variables
	alias map[string]string // JMeter names of loop items: their perflab names
	// sure are the local names set for sure where they are read from the
	// conditional blocks they were set in (see fixer.within): the
	// blocks' path where each was set.
	sure map[string]string
}

func newScope() *fscope {
	return &fscope{local: map[string]bool{}, alias: map[string]string{}, sure: map[string]string{}}
}

func (s *fscope) clone() *fscope {
	out := newScope()
	for k, v := range s.local {
		out.local[k] = v
	}
	for k, v := range s.alias {
		out.alias[k] = v
	}
	for k, v := range s.sure {
		out.sure[k] = v
	}
	return out
}

// fixup resolves the plan's marks, places what depends on the whole plan
// (fragments, the target, authentication common to every step) and gives
// steps that share a name distinct names.
func (c *converter) fixup(p *planOut) {
	c.unusedFragments()
	c.unapplied()
	f := &fixer{c: c, p: p, extracted: map[string]bool{}, all: map[string]bool{}, vars: map[string]string{},
		udvDone: map[string]*udvRes{}, visited: map[*stepOut]bool{}, genCount: map[string]int{}}
	f.scripts()
	collect := func(s *stepOut) {
		for _, x := range s.Extract {
			// (A column read once an iteration is the variable's value
			// as each begins: shadowed.)
			if col, ok := c.csvCols[x.K]; ok && !f.extracted[x.K] && s.conv != nil && !c.perIteration(x.K) {
				c.note(s.conv.src, "it extracts "+x.K+", a CSV Data Set's variable too: the plan reads the column as ${"+col+"} and the extracted value as ${"+x.K+"}, each where JMeter reads it")
			}
			f.extracted[x.K] = true
			if m, ok := x.V.(ordered); ok {
				for _, kv := range m {
					if kv.K == "match" && kv.V == "all" {
						f.all[x.K] = true
					}
				}
			}
		}
	}
	eachStep(p.Setup, collect)
	for _, s := range p.Scenarios {
		eachStep(s.Flow, collect)
	}
	eachStep(p.Teardown, collect)
	for name := range c.setVars {
		f.extracted[c.extName(name)] = true
	}
	// A data source named as an extraction is renamed: extractions keep
	// JMeter's names.
	for name, d := range c.data {
		if !f.extracted[name] {
			continue
		}
		to := name + "_data"
		for c.data[to] != nil || f.extracted[to] {
			to += "_"
		}
		delete(c.data, name)
		c.data[to] = d
		for k, v := range c.csvCols {
			if src, col, _ := strings.Cut(v, "."); src == name {
				c.csvCols[k] = to + "." + col
			}
		}
		for k, v := range c.dataVars {
			if v == name {
				c.dataVars[k] = to
			}
		}
		c.note(nil, "the data source "+name+" is named "+to+": an extraction is named "+name)
	}
	p.Data = c.data

	// The plan's headers and target may read only variables: one that
	// reads something else goes on each step.
	var pushed map[string]string
	for k, v := range p.Headers {
		if !f.global(v) {
			if pushed == nil {
				pushed = map[string]string{}
			}
			pushed[k] = v
			delete(p.Headers, k)
			c.note(nil, "the plan's header "+k+" reads a value of the flow (data, an extraction): it is each step's")
		}
	}
	if pushed != nil {
		eachRequest(p, func(s *stepOut) {
			for k, v := range pushed {
				if _, ok := s.Headers[k]; ok {
					continue
				}
				if s.Headers == nil {
					s.Headers = map[string]string{}
				}
				s.Headers[k] = v
			}
		})
	}
	if p.Target != "" && !f.global(p.Target) {
		t := p.Target
		p.Target = ""
		eachRequest(p, func(s *stepOut) {
			if strings.HasPrefix(s.URL, "/") {
				s.URL = t + s.URL
			}
		})
	}

	setup := newScope()
	p.Setup = f.steps(p.Setup, setup)
	for _, sc := range p.Scenarios {
		f.shadowed(sc)
		sc.Flow = f.steps(sc.Flow, setup.clone())
		f.loadFields(sc)
	}
	p.Teardown = f.steps(p.Teardown, newScope())
	p.Target = f.text(p.Target, nil)
	for k, v := range p.Headers {
		p.Headers[k] = f.text(v, nil)
	}
	for _, k := range c.propOrder {
		if !f.extracted[k] {
			f.declare(k, c.props[k])
		}
	}
	f.fragments()
	f.distinctNames()
	f.target()
	f.hoistAuth()
	if len(f.vars) > 0 {
		p.Vars = f.vars
	}
	f.checkHosts()
}

// checkHosts says which variables of the plan, as converted, make a
// target or a step's URL name no host (a value such as [hostname] that
// the user was to replace): give them with --set.
func (f *fixer) checkHosts() {
	ref := regexp.MustCompile(`\$\{([^}:]+)(?::-[^}]*)?\}`)
	said := map[string]bool{}
	check := func(u string) {
		o := originOf(u)
		if o == "" {
			return
		}
		expanded := ref.ReplaceAllStringFunc(o, func(m string) string {
			name := ref.FindStringSubmatch(m)[1]
			if v, ok := f.vars[name]; ok && v != "" {
				return v
			}
			if strings.HasSuffix(m[:len(m)-1], "proto") || strings.Contains(o, m+"://") {
				return "http"
			}
			return "1"
		})
		if _, err := url.Parse(expanded); err == nil {
			return
		}
		for _, m := range ref.FindAllStringSubmatch(o, -1) {
			if v, ok := f.vars[m[1]]; ok && v != "" && !said[m[1]] {
				said[m[1]] = true
				f.c.note(nil, "the variable "+m[1]+" is "+strconv.Quote(v)+", which makes no URL of "+o+": give it with --set "+m[1]+"=VALUE")
			}
		}
	}
	check(f.p.Target)
	eachRequest(f.p, func(s *stepOut) { check(s.URL) })
}

// eachRequest calls fn for every request step of the plan, in fragments
// too.
func eachRequest(p *planOut, fn func(*stepOut)) {
	lists := [][]*stepOut{p.Setup, p.Teardown}
	for _, sc := range p.Scenarios {
		lists = append(lists, sc.Flow)
	}
	for _, fr := range p.Fragments {
		lists = append(lists, fr.V.([]*stepOut))
	}
	var all []*stepOut
	for _, l := range lists {
		all = append(all, &stepOut{Steps: l})
	}
	eachStep(all, func(s *stepOut) {
		if s.URL != "" {
			fn(s)
		}
	})
}

var (
	markPat = regexp.MustCompile("\x00(.)([^\x01]*)\x01")
	exprPat = regexp.MustCompile("\x02(.)([^\x03]*)\x03")
)

// global reports whether a template reads only what the plan's target
// and headers may: variables (User Defined Variables, properties).
func (f *fixer) global(t string) bool {
	ok := true
	for _, m := range markPat.FindAllStringSubmatch(t, -1) {
		name := m[2]
		switch m[1][0] {
		case modeProp:
			if f.extracted[varName(name)] {
				ok = false
			}
		default:
			if _, isUDV := f.c.udvs[name]; !isUDV || f.extracted[f.extractedName(name)] {
				ok = false
			} else if r := f.udv(name); !r.literal && !f.global(r.value) {
				ok = false
			}
		}
	}
	return ok
}

// scripts finds which scripts set which variables (vars.put("x", ...)),
// to say so of a variable nothing else sets.
func (f *fixer) scripts() {
	f.setBy = map[string]string{}
	put := regexp.MustCompile(`vars\.put(?:Object)?\(\s*["']([^"']+)["']`)
	f.c.doc.plan.each(func(e *element) {
		if !enabledPath(e) {
			return
		}
		if e.converted {
			return
		}
		for _, name := range []string{e.str("CounterConfig.name"), e.str("variableName")} {
			if _, ok := f.setBy[name]; name != "" && !ok {
				f.setBy[name] = e.Path
			}
		}
		for _, m := range put.FindAllStringSubmatch(e.str("script"), -1) {
			if _, ok := f.setBy[m[1]]; !ok {
				f.setBy[m[1]] = e.Path
			}
		}
	})
}

// steps resolves a list of steps in order, as the validator checks them.
func (f *fixer) steps(list []*stepOut, sc *fscope) []*stepOut {
	var out []*stepOut
	for _, s := range list {
		out = append(out, f.step(s, sc)...)
	}
	return out
}

// step resolves a step; a While loop whose condition reads what its body
// extracts becomes its body's first pass, then the loop.
func (f *fixer) step(s *stepOut, sc *fscope) []*stepOut {
	if f.visited[s] {
		f.define(s, sc)
		return []*stepOut{s}
	}
	f.visited[s] = true
	prev := f.cur
	if s.conv != nil && s.conv.src != nil {
		f.cur = s.conv.src
	}
	defer func() { f.cur = prev }()
	if s.If != "" {
		s.If = f.exprOrFalse(s.If, sc, "if")
		// The step, and its else apart, run or not.
		f.within(func() { s.Else = f.steps(s.Else, sc) })
		f.blockCount++
		f.blocks = append(f.blocks, f.blockCount)
		defer func() { f.blocks = f.blocks[:len(f.blocks)-1] }()
	}
	var out []*stepOut
	if l := s.Loop; l != nil {
		if l.Over != "" {
			l.Over = f.over(l.Over, sc)
		}
		if cnt, ok := l.Count.(string); ok {
			l.Count = f.exprOrFalse(cnt, sc, "count")
		}
		if m := markPat.FindStringSubmatch(l.As); m != nil {
			l.As = varName(m[2])
			if !isIdent(l.As) {
				l.As = "item"
			}
			sc.alias[m[2]] = l.As
			sc.local[l.As] = true
		}
		if l.Index != "" {
			sc.local[l.Index] = true
		}
		if l.While != "" {
			// The condition may read what the loop's steps set, as it
			// is checked again after each pass.
			f.loopSets = map[string]bool{}
			eachStep(s.Steps, func(k *stepOut) {
				for _, x := range k.Extract {
					f.loopSets[x.K] = true
				}
				for _, x := range k.Set {
					f.loopSets[x.K] = true
				}
				if k.conv != nil {
					for _, x := range append(k.conv.preSets, k.conv.postSets...) {
						f.loopSets[x.K] = true
					}
				}
			})
			cond, missing := f.expr(l.While, sc)
			f.loopSets = nil
			for _, m := range exprPat.FindAllStringSubmatch(l.While, -1) {
				if by, ok := f.setBy[m[2]]; ok {
					f.c.note(f.cur, "its condition reads "+m[2]+", which "+by+" sets in JMeter, not converted: the loop ends only when the plan's steps set it")
				}
			}
			switch {
			case s.conv != nil && s.conv.doWhile && (s.conv.alwaysFirst || len(missing) > 0):
				// The first pass before the condition, which then reads
				// what the body extracted.
				name := "loop"
				if s.conv.src != nil && s.conv.src.Name != "" {
					name = s.conv.src.Name
				}
				first := &stepOut{Steps: s.Steps, conv: &stepConv{src: s.conv.src, frag: name}}
				f.visited[first] = true
				first.Steps = f.steps(first.Steps, sc)
				s.Steps = first.Steps
				s.conv.frag = name
				if cond, missing = f.expr(l.While, sc); len(missing) > 0 {
					f.c.note(f.cur, "its condition reads "+strings.Join(missing, ", ")+", which nothing before it sets: the loop runs its first pass only")
					return []*stepOut{first}
				}
				l.While = cond
				if s.conv.alwaysFirst {
					f.c.note(f.cur, "a blank condition: the loop's first pass runs, then more while the last step succeeded (response.ok)")
				}
				return []*stepOut{first, s}
			case len(missing) > 0:
				f.c.note(f.cur, "its condition reads "+strings.Join(missing, ", ")+", which nothing before it sets: read as empty")
			}
			l.While = cond
		}
		if n, ok := l.Count.(int); !ok || n < 1 {
			// A loop that may run no pass.
			f.blockCount++
			f.blocks = append(f.blocks, f.blockCount)
			defer func() { f.blocks = f.blocks[:len(f.blocks)-1] }()
		}
	}
	for _, b := range s.Choose {
		f.within(func() { b.Steps = f.steps(b.Steps, sc) })
	}
	s.Steps = f.steps(s.Steps, sc)
	if s.Set != nil {
		s.Set = f.sets(s.Set, sc)
	}
	if s.URL != "" {
		// What the sampler's pre-processors set, then the functions it
		// reads (gen), before it; what its post-processors set after.
		pre, post := &stepOut{}, &stepOut{}
		if s.conv != nil {
			pre.Set = f.sets(s.conv.preSets, sc)
		}
		for _, kv := range f.request(s, sc) {
			pre.Set.set(kv.K, kv.V)
		}
		f.define(pre, sc)
		if s.conv != nil {
			post.Set = f.sets(s.conv.postSets, sc)
		}
		if pre.Set != nil || post.Set != nil {
			return append(out, f.around(s, pre, post)...)
		}
	}
	out = append(out, s)
	return out
}

// sets resolves the expressions of a set: step's variables where sc
// stands, each in the scope of those before it (nil for none).
func (f *fixer) sets(sets ordered, sc *fscope) ordered {
	var out ordered
	for _, kv := range sets {
		x, missing := f.expr(kv.V.(string), sc)
		if len(missing) > 0 {
			f.c.note(f.cur, "it sets "+kv.K+" from "+strings.Join(missing, ", ")+", which nothing before it sets: read as empty")
		}
		out.set(kv.K, x)
		f.define(&stepOut{Set: ordered{kv}}, sc)
	}
	return out
}

// around puts the set: steps pre and post (when they set anything) before
// and after the request s: beside it, or, when s has logic of its own (a
// condition, a loop, once), in a block that takes the logic, so that the
// values are set each time the request is sent, and only then.
func (f *fixer) around(s, pre, post *stepOut) []*stepOut {
	var list []*stepOut
	for _, st := range []*stepOut{pre, s, post} {
		if st == s || st.Set != nil {
			f.visited[st] = true
			list = append(list, st)
		}
	}
	if s.If == "" && s.Loop == nil && !s.Once && s.Else == nil {
		return list
	}
	b := &stepOut{If: s.If, Else: s.Else, Once: s.Once, Loop: s.Loop, Steps: list, conv: &stepConv{src: s.conv.src}}
	s.If, s.Else, s.Once, s.Loop = "", nil, false, nil
	return []*stepOut{b}
}

// define adds what a step already resolved extracts (or sets) to the
// scope.
func (f *fixer) define(s *stepOut, sc *fscope) {
	here := f.blockPath()
	set := func(name string) {
		sc.local[name] = true
		if p, ok := sc.sure[name]; !ok || strings.HasPrefix(p, here) {
			sc.sure[name] = here
		}
	}
	for _, x := range s.Set {
		set(x.K)
	}
	for _, x := range s.Extract {
		set(x.K)
		if f.all[x.K] {
			set(x.K + "_count")
			set(x.K + "_#")
		}
	}
	if s.Loop != nil {
		if s.Loop.As != "" {
			sc.local[s.Loop.As] = true
		}
		if s.Loop.Index != "" {
			sc.local[s.Loop.Index] = true
		}
	}
	for _, k := range s.Steps {
		f.define(k, sc)
	}
	for _, k := range s.Else {
		f.define(k, sc)
	}
	for _, b := range s.Choose {
		for _, k := range b.Steps {
			f.define(k, sc)
		}
	}
}

// request resolves a request step's templates: its URL, headers and body
// where it stands, its checks and authentication after its extractions.
// It returns the variables a set: step before it must give (see gen).
func (f *fixer) request(s *stepOut, sc *fscope) ordered {
	f.genSets = nil
	s.URL = f.text(s.URL, sc)
	for k, v := range s.Headers {
		s.Headers[k] = f.text(v, sc)
	}
	s.Body = f.text(s.Body, sc)
	for i := range s.Form {
		s.Form[i].V = f.text(s.Form[i].V.(string), sc)
	}
	for i := range s.Extract {
		x := s.Extract[i].V.(ordered)
		for j := range x {
			switch v := x[j].V.(type) {
			case string:
				x[j].V = f.text(v, sc)
			case []string:
				for k := range v {
					v[k] = f.text(v[k], sc)
				}
			}
		}
	}
	f.define(s, sc)
	if that, ok := s.Check["that"].([]any); ok {
		for _, a := range that {
			m := a.(ordered)
			for j := range m {
				switch v := m[j].V.(type) {
				case string:
					if m[j].K == "expr" {
						x, missing := f.expr(v, sc)
						if len(missing) > 0 {
							f.c.note(f.cur, "it asserts on "+strings.Join(missing, ", ")+", which nothing before it sets: read as empty")
						}
						m[j].V = x
						continue
					}
					m[j].V = f.text(v, sc)
				case []string:
					for k := range v {
						v[k] = f.text(v[k], sc)
					}
				}
			}
		}
	}
	if a, ok := s.Auth.(*authOut); ok {
		a.User, a.Password = f.text(a.User, sc), f.text(a.Password, sc)
	}
	sets := f.genSets
	f.genSets = nil
	return sets
}

// text resolves a template's marks where sc stands (nil: the plan's
// scope, variables only).
func (f *fixer) text(t string, sc *fscope) string {
	if !strings.Contains(t, markOpen) {
		return t
	}
	return markPat.ReplaceAllStringFunc(t, func(m string) string {
		mode, name := m[1], m[2:len(m)-1]
		if mode == modeGen {
			var as byte // the variables' mode around it (valueAs)
			if name != "" && (name[0] == modeRaw || name[0] == modeDec) {
				as, name = name[0], name[1:]
			}
			i, _ := strconv.Atoi(name)
			return f.genRef(i, as, sc)
		}
		return f.ref(mode, name, sc)
	})
}

// ref is a JMeter variable's placeholder where sc stands.
func (f *fixer) ref(mode byte, name string, sc *fscope) string {
	in := func(n string) bool { return sc != nil && sc.local[n] }
	place := func(n string) string { return "${" + modePrefix(mode) + n + "}" }
	if mode == modeProp {
		v := varName(name)
		switch {
		case !f.extracted[v]:
			return "${" + v + "}"
		case in(v):
			return place(v)
		}
		return f.orElse(v, f.c.props[v])
	}
	if sc != nil {
		if a, ok := sc.alias[name]; ok {
			return place(a)
		}
	}
	if idx, ok := f.c.loopIdx[name]; ok && in(idx) {
		return place(idx)
	}
	// What the flow set before, by flow order (earlier uses of fragments
	// too): an extraction, a set: step's variable, a JMeter extractor's
	// NAME_matchNr and NAME_N; where it may not be set yet (set later, or
	// in a block that may not have run), with JMeter's text for an unset
	// variable until it is.
	ext := f.extractedName(name)
	sure := func(n, out string) string {
		if f.sureOf(n, sc) {
			return place(out)
		}
		return f.unset(mode, out, name)
	}
	if f.extracted[ext] && in(ext) {
		return sure(ext, ext)
	}
	if base, ok := strings.CutSuffix(name, "_matchNr"); ok && f.all[f.extractedName(base)] {
		b := f.extractedName(base)
		return sure(b, b+"_count")
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		base := f.extractedName(name[:i])
		if _, err := strconv.Atoi(name[i+1:]); err == nil && f.all[base] {
			return sure(base, base+name[i:])
		}
	}
	if sc != nil {
		if col, ok := f.c.csvCols[name]; ok {
			return place(col)
		}
		if src, ok := f.c.dataVars[name]; ok {
			return place(src)
		}
	}
	if _, ok := f.c.udvs[name]; ok {
		r := f.udv(name)
		if f.extracted[ext] {
			if r.literal {
				return f.orElse(ext, r.value)
			}
			return f.orElse(ext, "")
		}
		if r.literal {
			return place(f.udvVar(name))
		}
		return r.value
	}
	if f.extracted[ext] {
		// Set later in the flow (or where a fragment is used another
		// time): until then JMeter sends the text ${name}, and so does
		// perflab.
		return f.unset(mode, ext, name)
	}
	switch name {
	case "__threadNum":
		return "${vu}"
	}
	return place(f.undefined(name))
}

// orElse is name's placeholder with a fallback for where it is not set:
// the value, when a fallback can hold it (no } in it), else empty.
func (f *fixer) orElse(name, value string) string {
	if strings.ContainsAny(value, "}") || strings.Contains(value, "${") {
		value = ""
	}
	return "${" + name + ":-" + value + "}"
}

// unset is name's placeholder where it may not be set yet: JMeter's text
// for an unset variable, ${jm} (jm its JMeter name), until it is.
func (f *fixer) unset(mode byte, name, jm string) string {
	return "${" + modePrefix(mode) + name + ":-" + literal("${"+jm+"}") + "}"
}

// extractedName is the perflab name an extraction of JMeter's variable
// name has.
func (f *fixer) extractedName(name string) string {
	if n, ok := f.c.extNames[name]; ok {
		return n
	}
	return varName(name)
}

// undefined declares a variable nothing in the converted plan sets (a
// script of JMeter's, an element not converted, or nothing at all), and
// says so.
func (f *fixer) undefined(name string) string {
	v := varName(name)
	if _, ok := f.vars[v]; !ok {
		by := "nothing perflab converts sets it"
		if s, ok := f.setBy[name]; ok {
			by = s + ", not converted, sets it"
		}
		f.c.note(f.cur, "${"+name+"}: "+by+"; it is a variable of the plan, empty unless given with --set "+v+"=VALUE")
	}
	f.declare(v, "")
	return v
}

func (f *fixer) declare(name, value string) {
	if _, ok := f.vars[name]; !ok {
		f.varOrder = append(f.varOrder, name)
	}
	f.vars[name] = value
}

// udv resolves a User Defined Variable: its value with the variables it
// reads (earlier ones, properties) resolved; a value that is all text is
// literal.
func (f *fixer) udv(name string) *udvRes {
	if r, ok := f.udvDone[name]; ok {
		if r.resolving {
			return &udvRes{value: literal("${" + name + "}")}
		}
		return r
	}
	r := &udvRes{resolving: true}
	f.udvDone[name] = r
	u := f.c.udvs[name]
	f.c.inUDV = true
	t := f.c.value(u.raw, u.e)
	f.c.inUDV = false
	t = markPat.ReplaceAllStringFunc(t, func(m string) string {
		mode, ref := m[1], m[2:len(m)-1]
		if mode == modeProp {
			return "${" + varName(ref) + "}"
		}
		if _, ok := f.c.udvs[ref]; ok && ref != name {
			sub := f.udv(ref)
			if sub.literal {
				return literal(sub.value)
			}
			return sub.value
		}
		return literal("${" + ref + "}") // JMeter reads it before anything sets it
	})
	r.resolving = false
	if !strings.Contains(strings.ReplaceAll(t, "$${", ""), "${") {
		r.literal, r.value = true, strings.ReplaceAll(t, "$${", "${")
	} else {
		r.value = t
	}
	return r
}

// udvVar declares a literal User Defined Variable and names it.
func (f *fixer) udvVar(name string) string {
	v := varName(name)
	f.declare(v, f.udv(name).value)
	return v
}

// expr resolves an expression's marks where sc stands: the expression,
// and the variables it reads that nothing before it sets.
func (f *fixer) expr(src string, sc *fscope) (string, []string) {
	var missing []string
	out := exprPat.ReplaceAllStringFunc(src, func(m string) string {
		mode, name := m[1], m[2:len(m)-1]
		op, ok := f.operand(mode, name, sc)
		if !ok {
			missing = append(missing, name)
			return `""`
		}
		return op
	})
	return out, missing
}

// exprOrFalse resolves an expression, or lists it and gives false (a
// count: 0) when it reads what nothing before it sets or does not
// compile.
func (f *fixer) exprOrFalse(src string, sc *fscope, what string) string {
	out, missing := f.expr(src, sc)
	if len(missing) > 0 {
		f.c.note(f.cur, "its condition reads "+strings.Join(missing, ", ")+", which nothing before it sets: read as empty")
	}
	kind := expr.Bool
	if what != "if" {
		kind = expr.Any
	}
	if _, err := expr.Compile(out, kind, nil); err != nil {
		f.c.note(f.cur, fmt.Sprintf("its %s %q does not compile (%v): false", what, out, err))
		if what != "if" {
			return "0"
		}
		return "false"
	}
	return out
}

// operand is a JMeter variable as an expression reads it where sc stands.
func (f *fixer) operand(mode byte, name string, sc *fscope) (string, bool) {
	id := func(n string) string {
		if isIdent(n) && !expr.Reserved(n) {
			return n
		}
		return "var(" + strconv.Quote(n) + ")"
	}
	in := func(n string) bool { return sc != nil && sc.local[n] }
	if mode == modeProp {
		v := varName(name)
		switch {
		case !f.extracted[v]:
			return id(v), true
		case in(v):
			return id(v), true
		}
		return strconv.Quote(f.c.props[v]), true
	}
	if a, ok := sc.alias[name]; ok {
		return id(a), true
	}
	if idx, ok := f.c.loopIdx[name]; ok && in(idx) {
		return id(idx), true
	}
	ext := f.extractedName(name)
	if f.extracted[ext] && in(ext) {
		return id(ext), true
	}
	if base, ok := strings.CutSuffix(name, "_matchNr"); ok && f.all[f.extractedName(base)] && in(f.extractedName(base)) {
		return id(f.extractedName(base) + "_count"), true
	}
	if col, ok := f.c.csvCols[name]; ok {
		src, c, _ := strings.Cut(col, ".")
		if isIdent(src) && isIdent(c) {
			return col, true
		}
		return "var(" + strconv.Quote(col) + ")", true
	}
	if src, ok := f.c.dataVars[name]; ok {
		return id(src), true
	}
	if _, ok := f.c.udvs[name]; ok {
		r := f.udv(name)
		switch {
		case f.extracted[ext] && r.literal && f.loopSets[ext]:
			// Set in the loop a condition goes on with: its value is the
			// User Defined Variable's until then, in JMeter as here.
			return "(defined(" + strconv.Quote(ext) + ") ? " + id(ext) + " : " + strconv.Quote(r.value) + ")", true
		case f.extracted[ext] && r.literal:
			return strconv.Quote(r.value), true
		case f.extracted[ext]:
			return "", false
		case r.literal:
			return id(f.udvVar(name)), true
		}
		if m := regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_-]*)\}$`).FindStringSubmatch(r.value); m != nil {
			return id(m[1]), true
		}
		return "", false
	}
	if f.extracted[ext] {
		return "", false
	}
	return id(f.undefined(name)), true
}

// over resolves the list a ForEach Controller goes over: an extraction's
// list (match: all), or the variables NAME_1, NAME_2 ... the plan
// defines.
func (f *fixer) over(src string, sc *fscope) string {
	m := exprPat.FindStringSubmatch(src)
	if m == nil {
		return src
	}
	name := m[2]
	ext := f.extractedName(name)
	if f.all[ext] && sc.local[ext] {
		return ext
	}
	var items []string
	for i := 1; ; i++ {
		if _, ok := f.c.udvs[name+"_"+strconv.Itoa(i)]; !ok {
			break
		}
		r := f.udv(name + "_" + strconv.Itoa(i))
		if !r.literal {
			break
		}
		items = append(items, strconv.Quote(r.value))
	}
	if len(items) > 0 {
		return "[" + strings.Join(items, ", ") + "]"
	}
	if f.extracted[ext] {
		f.c.note(f.cur, "it goes over "+name+"_1, "+name+"_2 ..., which an extraction sets with one match, not all (-1): the loop goes over none")
	} else {
		f.c.note(f.cur, "it goes over "+name+"_1, "+name+"_2 ..., which nothing perflab converts sets: the loop goes over none")
	}
	return "[]"
}

// loadFields resolves a scenario's load fields: a number, or a
// variable's placeholder.
func (f *fixer) loadFields(sc *scenarioOut) {
	field := func(v any) any {
		lf, ok := v.(loadField)
		if !ok {
			return v
		}
		t := f.text(lf.t, nil)
		if n, err := strconv.Atoi(t); err == nil {
			if lf.unit != "" {
				return strconv.Itoa(n) + lf.unit
			}
			return n
		}
		if single.MatchString(t) {
			return t + lf.unit
		}
		lit, ok := f.c.literalTemplate(t)
		if n, err := strconv.Atoi(lit); ok && err == nil {
			f.c.note(nil, "the scenario "+strconv.Quote(sc.Name)+"'s "+strconv.Quote(lf.t)+" is "+lit+" (its value at conversion)")
			if lf.unit != "" {
				return strconv.Itoa(n) + lf.unit
			}
			return n
		}
		f.c.note(nil, "the scenario "+strconv.Quote(sc.Name)+"'s "+strconv.Quote(lf.t)+" is not a number: 1")
		if lf.unit != "" {
			return "1" + lf.unit
		}
		return 1
	}
	sc.VUs = field(sc.VUs)
	sc.Iterations = field(sc.Iterations)
	sc.Duration = field(sc.Duration)
	sc.RampUp = field(sc.RampUp)
	sc.MaxVUs = field(sc.MaxVUs)
	if sc.MaxVUs != nil {
		sc.MaxVUs = sc.VUs
	}
}

var propRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_-]*\}`)

var single = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_-]*\}$`)

// fragments makes each Module or Include Controller's block a use of a
// fragment: blocks of the same steps are one fragment; blocks of the same
// name with other steps (the target where other headers apply) are
// fragments NAME (2) ...
func (f *fixer) fragments() {
	type frag struct {
		name string
		key  string
	}
	byKey := map[string]string{}
	taken := map[string]bool{}
	var walk func([]*stepOut)
	walk = func(list []*stepOut) {
		for _, s := range list {
			walk(s.Else)
			for _, b := range s.Choose {
				walk(b.Steps)
			}
			if s.conv == nil || s.conv.frag == "" {
				walk(s.Steps)
				continue
			}
			if s.Use != "" {
				continue
			}
			walk(s.Steps)
			key := yamlOf(s.Steps)
			name, ok := byKey[key]
			if !ok {
				name = oneLine(s.conv.frag)
				for base, i := name, 2; taken[name]; i++ {
					name = fmt.Sprintf("%s (%d)", base, i)
				}
				taken[name] = true
				byKey[key] = name
				f.p.Fragments = append(f.p.Fragments, kv{name, s.Steps})
			}
			s.Use, s.Steps = name, nil
		}
	}
	walk(f.p.Setup)
	for _, sc := range f.p.Scenarios {
		walk(sc.Flow)
	}
	walk(f.p.Teardown)
}

func yamlOf(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// distinctNames gives a step (or transaction) that shares its name with
// another of its scenario a name of its own, NAME (2), as perflab keeps
// each step's figures apart; two that send the same request are one
// operation, as JMeter adds up a label's samples: they become one
// fragment used twice.
func (f *fixer) distinctNames() {
	frags := map[string][]*stepOut{}
	for _, fr := range f.p.Fragments {
		frags[fr.K] = fr.V.([]*stepOut)
	}
	for _, sc := range f.p.Scenarios {
		seen := map[[2]string]*stepOut{}
		used := map[string]bool{}
		var walk func(list []*stepOut, tx string, inFrag bool)
		walk = func(list []*stepOut, tx string, inFrag bool) {
			for i, s := range list {
				if s.Use != "" {
					if !used[s.Use] {
						used[s.Use] = true
						walk(frags[s.Use], tx, true)
					}
					walk(s.Else, tx, inFrag)
					continue
				}
				label, kind := s.Name, "step"
				if s.Transaction != "" {
					label, kind = s.Transaction, "tx"
				}
				if (s.URL != "" || s.Transaction != "") && label != "" {
					key := [2]string{kind + "\x00" + tx, label}
					if prev, ok := seen[key]; ok && prev != s {
						if kind == "step" && !inFrag && plainRequest(s) && plainRequest(prev) && yamlOf(s) == yamlOf(prev) && f.sameAt(prev) {
							// One request twice: one fragment used twice.
							name, step := f.fragmentOf(prev)
							seen[key] = step
							list[i] = &stepOut{Use: name}
							used[name] = true
							continue
						}
						for n := 2; ; n++ {
							nl := fmt.Sprintf("%s (%d)", label, n)
							if _, taken := seen[[2]string{kind + "\x00" + tx, nl}]; !taken {
								label = nl
								break
							}
						}
						var src *element
						if s.conv != nil {
							src = s.conv.src
						}
						f.c.note(src, "a second "+map[string]string{"step": "sampler", "tx": "transaction"}[kind]+" named "+strconv.Quote(prevLabel(prev))+" in its thread group: JMeter adds their figures up under one label, perflab keeps them apart as "+strconv.Quote(label))
						if kind == "step" {
							s.Name = label
						} else {
							s.Transaction = label
						}
						key[1] = label
					}
					seen[key] = s
				}
				inner := tx
				if s.Transaction != "" {
					inner = s.Transaction
				}
				walk(s.Steps, inner, inFrag)
				walk(s.Else, tx, inFrag)
				for _, b := range s.Choose {
					walk(b.Steps, tx, inFrag)
				}
			}
		}
		walk(sc.Flow, "", false)
	}
}

func prevLabel(s *stepOut) string {
	if s.Transaction != "" {
		return s.Transaction
	}
	return s.Name
}

// plainRequest reports whether s is a request without logic of its own.
func plainRequest(s *stepOut) bool {
	return s.URL != "" && s.If == "" && s.Loop == nil && !s.Once && s.Use == ""
}

// sameAt reports whether a step can become a fragment's: it is not one
// already.
func (f *fixer) sameAt(s *stepOut) bool { return s.conv == nil || s.conv.frag == "" }

// fragmentOf makes a step a fragment of its own (once), used where it
// stood, and names the fragment and its step.
func (f *fixer) fragmentOf(s *stepOut) (string, *stepOut) {
	for _, fr := range f.p.Fragments {
		if steps := fr.V.([]*stepOut); len(steps) == 1 && steps[0] == s {
			return fr.K, s
		}
	}
	name := s.Name
	for taken := true; taken; {
		taken = false
		for _, fr := range f.p.Fragments {
			if fr.K == name {
				name += " (request)"
				taken = true
			}
		}
	}
	copy := *s
	f.p.Fragments = append(f.p.Fragments, kv{name, []*stepOut{&copy}})
	*s = stepOut{Use: name}
	return name, &copy
}

// target gives a plan without a target the origin every step's URL
// starts with, when they share one that reads only variables.
func (f *fixer) target() {
	if f.p.Target != "" {
		return
	}
	origins := map[string]bool{}
	relative := false
	eachRequest(f.p, func(s *stepOut) {
		if o := originOf(s.URL); o != "" {
			origins[o] = true
		} else {
			relative = true
		}
	})
	if len(origins) != 1 || relative {
		return
	}
	var o string
	for k := range origins {
		o = k
	}
	if strings.Contains(o, "${") {
		for _, m := range regexp.MustCompile(`\$\{([^}]*)\}`).FindAllStringSubmatch(o, -1) {
			if _, ok := f.vars[m[1]]; !ok {
				return
			}
		}
	}
	f.p.Target = o
	eachRequest(f.p, func(s *stepOut) {
		s.URL = strings.TrimPrefix(s.URL, o)
		if s.URL == "" {
			s.URL = "/"
		}
	})
}

// originOf is a URL's scheme://host:port, "" for a relative one.
func originOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 || strings.HasPrefix(u, "/") {
		return ""
	}
	rest := u[i+3:]
	j := strings.IndexAny(rest, "/?#")
	if j < 0 {
		return u
	}
	return u[:i+3+j]
}

// hoistAuth makes credentials every request step has the plan's.
func (f *fixer) hoistAuth() {
	var first string
	same, n := true, 0
	eachRequest(f.p, func(s *stepOut) {
		k := ""
		if s.Auth != nil {
			k = yamlOf(s.Auth)
		}
		if n == 0 {
			first = k
		} else if k != first {
			same = false
		}
		n++
	})
	if !same || first == "" || n == 0 {
		return
	}
	var a *authOut
	eachRequest(f.p, func(s *stepOut) {
		a, _ = s.Auth.(*authOut)
		s.Auth = nil
	})
	if f.p.HTTP == nil {
		f.p.HTTP = &httpOut{}
	}
	f.p.HTTP.Auth = a
}

// literalValue is a JMeter value as text, its variables (User Defined
// Variables, properties at their defaults) filled in: false when it reads
// anything else.
func (c *converter) literalValue(raw string, e *element) (string, bool) {
	return c.literalTemplate(c.value(raw, e))
}

// literalTemplate is a template with marks as text, as literalValue.
func (c *converter) literalTemplate(t string) (string, bool) {
	ok := true
	f := &fixer{c: c, udvDone: map[string]*udvRes{}}
	out := markPat.ReplaceAllStringFunc(t, func(m string) string {
		mode, name := m[1], m[2:len(m)-1]
		if mode == modeProp {
			return c.props[varName(name)]
		}
		if _, isUDV := c.udvs[name]; isUDV {
			r := f.udv(name)
			if r.literal {
				return r.value
			}
			// Its properties at their defaults.
			v := propRef.ReplaceAllStringFunc(r.value, func(m string) string {
				if d, ok := c.props[m[2:len(m)-1]]; ok {
					return d
				}
				return m
			})
			if !strings.Contains(strings.ReplaceAll(v, "$${", ""), "${") {
				return strings.ReplaceAll(v, "$${", "${")
			}
		}
		ok = false
		return "${" + name + "}"
	})
	if strings.Contains(strings.ReplaceAll(out, "$${", ""), "${") {
		ok = false
	}
	return strings.ReplaceAll(out, "$${", "${"), ok
}

// placeTimers puts the timers' delays before the samplers they precede:
// when every request of the scenario waits for the same timers (those
// directly under the thread group, or the test plan), they are the
// scenario's think time, after each step (the same waits, in the same
// order, shifted to follow each step); otherwise each request with a
// delay gets a pause step before it.
func (c *converter) placeTimers(s *scenarioOut, groupKey string, group *delay) {
	uniform := groupKey != ""
	eachStep(s.Flow, func(st *stepOut) {
		if st.URL != "" && (st.conv == nil || st.conv.preKey != groupKey) {
			uniform = false
		}
	})
	if uniform {
		s.Think = group.think()
		eachStep(s.Flow, func(st *stepOut) {
			if st.conv != nil && st.URL != "" {
				st.conv.pre = nil
			}
		})
		return
	}
	s.Flow = pausesBefore(s.Flow)
}

// pausesBefore puts a pause step before each request with a delay.
func pausesBefore(list []*stepOut) []*stepOut {
	var out []*stepOut
	for _, st := range list {
		st.Steps = pausesBefore(st.Steps)
		st.Else = pausesBefore(st.Else)
		for _, b := range st.Choose {
			b.Steps = pausesBefore(b.Steps)
		}
		if st.URL != "" && st.conv != nil && st.conv.pre != nil && (st.conv.pre.max > 0) {
			p := &stepOut{Think: st.conv.pre.think(), conv: &stepConv{pause: true}}
			st.conv.pre = nil
			if plainStep(st) {
				out = append(out, p, st)
				continue
			}
			// Logic on the step (if, once): the pause goes with it.
			b := &stepOut{If: st.If, Once: st.Once, Loop: st.Loop, Steps: []*stepOut{p, st}, conv: &stepConv{src: st.conv.src}}
			st.If, st.Once, st.Loop = "", false, nil
			out = append(out, b)
			continue
		}
		out = append(out, st)
	}
	return out
}

var _ = sort.Strings
var _ = plan.SingleLine
