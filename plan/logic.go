package plan

import (
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan/expr"
)

// Expr is an expression of the flow's logic (package plan/expr): a
// condition, a loop's count or list. Load compiles it.
type Expr struct {
	Pos Pos
	Src string
	// Prog is the compiled expression, set by Load.
	Prog *expr.Program
	// quoted: the YAML scalar is in quotes, so the expression's text
	// begins a column after Pos.
	quoted bool
}

// Loop repeats a step (or a block, or a transaction): Count times, While
// a condition holds (checked before each pass), or once for each item Over
// a list. Index names a variable holding the pass's number (from 0); As
// the item's. Max bounds the passes of any loop.
type Loop struct {
	Pos   Pos    `yaml:"-"`
	Count *Expr  `yaml:"count"`
	While *Expr  `yaml:"while"`
	Over  *Expr  `yaml:"over"`
	As    string `yaml:"as"`
	Index string `yaml:"index"`
	Max   int    `yaml:"max"`
	// MaxPos is max's place, when the plan gives it (max: 0 says the loop
	// has no bound, as no max does, but deliberately).
	MaxPos Pos `yaml:"-"`
	// Rows names data sources that give each pass a row of its own (a
	// VU otherwise takes one row of each source an iteration), as a CSV
	// Data Set inside a JMeter Loop Controller does.
	Rows []string `yaml:"rows"`
}

// Branch is one of a choice's branches: taken with a probability of its
// weight over the sum of the weights (default 1 each). A branch with no
// steps is a choice to do nothing.
type Branch struct {
	Pos    Pos      `yaml:"-"`
	Name   string   `yaml:"name"`
	Weight *float64 `yaml:"weight"`
	Steps  []*Step  `yaml:"steps"`
}

// W is the branch's weight.
func (b *Branch) W() float64 {
	if b.Weight == nil {
		return 1
	}
	return *b.Weight
}

// Children are the lists of steps a step holds: a transaction's or a
// block's steps, its else, its choice's branches.
func (s *Step) Children() [][]*Step {
	out := make([][]*Step, 0, 2+len(s.Choose))
	if len(s.Steps) > 0 {
		out = append(out, s.Steps)
	}
	if len(s.Else) > 0 {
		out = append(out, s.Else)
	}
	for _, b := range s.Choose {
		out = append(out, b.Steps)
	}
	return out
}

// eachStep calls f for each step of steps and of the steps they hold.
func eachStep(steps []*Step, f func(*Step)) {
	for _, s := range steps {
		f(s)
		for _, cs := range s.Children() {
			eachStep(cs, f)
		}
	}
}

// Assign is one variable of a set step: its name and the expression of its
// value.
type Assign struct {
	Pos  Pos
	Name string
	Expr *Expr
}

// builtinMeaning says what each built-in variable holds: FlowBuiltins,
// and index and item in a setup or teardown step's repeat.
var builtinMeaning = map[string]string{
	"vu": "the VU's number", "iteration": "the iteration's number", "scenario": "the scenario's name",
	"stage": "the stage's name", "run_id": "the run's id", "uuid": "a new UUID each time it is read",
	"timestamp_ms": "the time in milliseconds", "index": "a repeat's pass, from 0", "item": "a repeat's item",
}

// readOnly says why a step may not give a value to name (set, extract, a
// loop's as or index), or "" when it may: a built-in value wins over a
// VU's own, so one given to a built-in name would never be read. index
// and item are built in inside a repeat (inRepeat) only.
func readOnly(name string, inRepeat bool) string {
	if !slices.Contains(FlowBuiltins, name) && !(inRepeat && (name == "index" || name == "item")) {
		return ""
	}
	return fmt.Sprintf("${%s} is built in (%s) and read-only: a value set to it would never be read; choose another name", name, builtinMeaning[name])
}

// Fragment is a named list of steps, run where a flow says use: NAME.
type Fragment struct {
	Pos   Pos
	Name  string
	Steps []*Step
}

// compile compiles e as an expression of kind where scope sc stands,
// reporting its errors at their column.
func (v *validator) compile(e *Expr, kind expr.Kind, sc *scope, who string) {
	if e == nil {
		return
	}
	prog, err := expr.Compile(e.Src, kind, func(name string) bool {
		if v.swept[name] && v.inPhase {
			v.usesSwept = true
		}
		return v.defined(name, sc)
	})
	if err != nil {
		pos := e.Pos
		var ee *expr.Error
		if errors.As(err, &ee) && ee.Col > 0 && !strings.Contains(e.Src, "\n") {
			pos.Col += ee.Col - 1
			if e.quoted {
				pos.Col++
			}
		}
		v.at(pos, "%s: %s", who, err)
		return
	}
	for _, path := range prog.JSONPaths {
		if _, err := ParseJSONPath(path); err != nil {
			v.at(e.Pos, "%s: json(%q): %v", who, path, err)
		}
	}
	e.Prog = prog
}

// afterStep runs f once the step being checked is, with the names it
// defines in scope.
func (v *validator) afterStep(f func()) { v.pending = append(v.pending, f) }

// logic checks a step's logic: its condition, loop, choice, fragment or
// block of steps, and the steps in them, as step checks any step. It
// returns false when the step is no good to check further.
func (v *validator) logic(st *Step, sc *scope, where string, inTx bool) bool {
	if st.If == nil && st.Else == nil && st.Loop == nil && !st.Once && st.Choose == nil && !st.IsBlock() && st.Set == nil {
		return true
	}
	if st.Set != nil && st.Name == "" {
		st.Name = "set"
		v.unnamed[st] = true
	}
	who := where
	if l := st.Label(); l != "" {
		who = "step " + l
	}
	// A repeat runs one step of setup or teardown (a transaction says so
	// itself, in step).
	if r := st.Repeat; r != nil && !st.IsTransaction() {
		switch {
		case (st.IsBlock() || st.Choose != nil || st.Set != nil) && !v.inPhase:
			v.at(r.Pos, "%s: repeat is for setup and teardown; a scenario repeats with iterations", who)
		case st.IsBlock() || st.Choose != nil || st.Set != nil:
			v.at(r.Pos, "%s: repeat runs one step several times; a loop repeats a block, a choice or a set (loop: {count: N, index: i})", who)
		case st.Loop != nil && v.inPhase:
			v.at(r.Pos, "%s: give loop or repeat, not both", who)
		}
	}
	v.compile(st.If, expr.Bool, sc, who+": if")
	if st.Else != nil && st.If == nil {
		v.at(st.Pos, "%s: else goes with if", who)
	}
	for _, e := range st.Else {
		v.step(e, sc, where, inTx)
	}
	if l := st.Loop; l != nil {
		n := 0
		for _, set := range []bool{l.Count != nil, l.While != nil, l.Over != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.at(l.Pos, "%s: loop needs one of count (passes), while (a condition checked before each pass) or over (a list)", who)
		}
		if l.As != "" && l.Over == nil {
			v.at(l.Pos, "%s: loop: as names the item of a loop over a list", who)
		}
		if l.Max < 0 {
			v.at(l.MaxPos, "%s: loop: max %d: want a number of passes, 0 or more (0: no bound)", who, l.Max)
		}
		if l.While != nil && l.MaxPos.Line == 0 {
			v.warn(l.Pos, "%s: loop: while has no max: should its condition never turn false, %s; give max: N to bound the passes (max: 0 says there is no bound)", who, v.endless())
		}
		for _, name := range l.Rows {
			var ds *Data
			var names []string
			for _, d := range v.p.Data {
				names = append(names, d.Name)
				if d.Name == name {
					ds = d
				}
			}
			switch {
			case ds == nil:
				v.at(l.Pos, "%s: loop: rows: %q is not a data source%s", who, name, suggest(name, names))
			case !ds.IsList():
				v.at(l.Pos, "%s: loop: rows: %q is one value (a file), not rows", who, name)
			}
		}
		v.compile(l.Count, expr.Any, sc, who+": loop: count")
		v.compile(l.Over, expr.Any, sc, who+": loop: over")
		for _, f := range [...]struct{ field, name string }{{"as", l.As}, {"index", l.Index}} {
			if f.name == "" {
				continue
			}
			if msg := checkIdent(f.name); msg != "" {
				v.at(l.Pos, "%s: loop: %q: %s", who, f.name, msg)
			} else if why := readOnly(f.name, false); why != "" {
				v.at(l.Pos, "%s: loop: %s %s: %s", who, f.field, f.name, why)
			}
			sc.local[f.name] = true
		}
		// The condition is checked before each pass, the first included,
		// when nothing of the body has run: it may read what the body
		// extracts (a poll until its answer says done), unset before the
		// first pass. It is checked once the step is.
		v.afterStep(func() { v.compile(l.While, expr.Bool, sc, who+": loop: while") })
	}
	if st.Set != nil {
		if st.IsRequest() || st.IsTransaction() || st.IsMessage() || st.Call != "" || st.GRPC != nil || st.WS != nil || len(st.Steps) > 0 || st.Use != "" || st.Choose != nil {
			v.at(st.Pos, "%s: set is a step of its own: it sends nothing", who)
		}
		for _, a := range st.Set {
			v.compile(a.Expr, expr.Any, sc, who+": set "+a.Name)
			if msg := checkIdent(a.Name); msg != "" {
				v.at(a.Pos, "%s: set %q: %s", who, a.Name, msg)
			} else if v.global[a.Name] {
				v.at(a.Pos, "%s: set %s: the name is already a variable or data source", who, a.Name)
			} else if why := readOnly(a.Name, false); why != "" {
				v.at(a.Pos, "%s: set %s: %s", who, a.Name, why)
			}
			sc.local[a.Name] = true
		}
	}
	if st.Choose != nil {
		if st.IsRequest() || st.IsTransaction() || st.IsMessage() || st.Call != "" || st.GRPC != nil || st.WS != nil || len(st.Steps) > 0 || st.Use != "" {
			v.at(st.Pos, "%s: choose is a step of its own: its branches hold the steps", who)
		}
		sum := 0.0
		for _, b := range st.Choose {
			if w := b.W(); !(w >= 0) || math.IsInf(w, 0) {
				v.at(b.Pos, "%s: choose: weight %g: want a number, 0 or more", who, w)
			} else {
				sum += w
			}
			if msg := CheckName("branch", b.Name); b.Name != "" && msg != nil {
				v.at(b.Pos, "%s: choose: %v", who, msg)
			}
			for _, c := range b.Steps {
				v.step(c, sc, where, inTx)
			}
		}
		if len(st.Choose) == 0 || sum <= 0 {
			v.at(st.Pos, "%s: choose needs a branch with a weight above 0", who)
		}
	}
	if st.Use != "" {
		f := v.fragments[st.Use]
		switch {
		case len(st.Steps) > 0 && (f == nil || &st.Steps[0] != &f.Steps[0]):
			v.at(st.Pos, "%s: use runs a fragment's steps: give use or steps, not both", who)
			return false
		case f == nil:
			var names []string
			for n := range v.fragments {
				names = append(names, n)
			}
			sort.Strings(names)
			v.at(st.Pos, "%s: use %q: no fragment of that name%s", who, st.Use, suggest(st.Use, names))
			return false
		case v.using[st.Use]:
			v.at(st.Pos, "%s: use %q: the fragment uses itself (through %s)", who, st.Use, strings.Join(v.useStack, " -> "))
			return false
		}
		st.Steps = f.Steps
		v.using[st.Use] = true
		v.useStack = append(v.useStack, st.Use)
		defer func() {
			delete(v.using, st.Use)
			v.useStack = v.useStack[:len(v.useStack)-1]
		}()
	}
	if st.IsBlock() {
		if st.IsRequest() || st.IsMessage() || st.Call != "" || st.GRPC != nil || st.WS != nil {
			v.at(st.Pos, "%s: steps (a block) is a step of its own; it sends nothing itself", who)
		}
		for _, c := range st.Steps {
			v.step(c, sc, where, inTx)
		}
	}
	return true
}

// endless says what a loop that never ends holds up where the step being
// checked is.
func (v *validator) endless() string {
	switch sc := v.scen; {
	case sc == nil:
		return v.phaseName + " never ends, nor the run (setup and teardown have no duration)"
	case sc.Duration != nil || sc.IsOpen() || len(sc.RampVUs) > 0:
		return "the VU stays in the loop until the scenario's duration ends, and that iteration is not counted"
	}
	return "the VU stays in the loop and the run never ends (its scenario is bounded by iterations)"
}

// MaxIncludes bounds the files a plan includes, its own includes with
// them.
const MaxIncludes = metrics.MaxPlanIncludes

// loadFragments gathers the plan's fragments and those of the files it
// includes (and they include), by name: a name given twice is an error
// naming both places. The files read are the plan's Included, which
// share MaxPlanBytes with the plan.
func (v *validator) loadFragments() {
	v.fragments, v.using = map[string]*Fragment{}, map[string]bool{}
	add := func(fs []*Fragment) {
		for _, f := range fs {
			if prev, ok := v.fragments[f.Name]; ok {
				v.at(f.Pos, "fragment %q is defined twice (here and at %s)", f.Name, v.place(prev.Pos))
				continue
			}
			if err := CheckName("fragment", f.Name); err != nil {
				v.at(f.Pos, "%v", err)
			}
			if len(f.Steps) == 0 {
				v.at(f.Pos, "fragment %s: it has no steps", f.Name)
			}
			v.fragments[f.Name] = f
		}
	}
	add(v.p.Fragments)
	seen := map[string]bool{}
	if abs, err := filepath.Abs(v.p.File); err == nil {
		seen[abs] = true
	}
	v.p.Included = nil
	size, over := len(v.p.Source), false
	// rel is dir from the plan's directory, "" when it was reached by an
	// absolute path.
	var include func(dir, rel string, files []string, from Pos)
	include = func(dir, rel string, files []string, from Pos) {
		for _, name := range files {
			if over {
				return
			}
			file := name
			if !filepath.IsAbs(file) {
				file = filepath.Join(dir, file)
			}
			abs, _ := filepath.Abs(file)
			if seen[abs] {
				continue // included already (or the plan itself)
			}
			seen[abs] = true
			if len(seen) > MaxIncludes+1 {
				v.at(from, "include: more than %d files", MaxIncludes)
				return
			}
			src, err := inputfile.ReadFile(file, MaxPlanBytes)
			if err != nil {
				v.errs = append(v.errs, &Error{File: file, Msg: "include: " + err.Error()})
				continue
			}
			if size += len(src); size > MaxPlanBytes {
				v.at(from, "include %s: the plan and the files it includes are %s together, more than the %s a plan may be: they are kept whole with every run (summary.json, the history)",
					name, (&inputfile.TooBigError{Size: int64(size)}).What(), inputfile.FormatSize(MaxPlanBytes))
				over = true
				return
			}
			at, relDir := filepath.ToSlash(filepath.Clean(file)), ""
			if rel != "" && !filepath.IsAbs(name) {
				at = path.Join(rel, filepath.ToSlash(name))
				relDir = path.Dir(at)
			}
			v.p.Included = append(v.p.Included, metrics.PlanFile{Path: at, Source: string(src)})
			inc, errs := parseInclude(file, src)
			v.errs = append(v.errs, errs...)
			if inc == nil {
				if len(errs) == 0 {
					v.at(from, "include %s: nothing to include", name)
				}
				continue
			}
			add(inc.Fragments)
			include(filepath.Dir(file), relDir, inc.Include, Pos{Line: 1, Col: 1, File: file})
		}
	}
	include(v.dir, ".", v.p.Include, Pos{Line: 1, Col: 1})
}

// place is a position as a message says it: file:line:col, the file named
// when it is not the plan's.
func (v *validator) place(p Pos) string { return v.p.Place(p) }

// included is what a plan may take from a file it includes.
type included struct {
	Fragments []*Fragment `yaml:"fragments"`
	Include   []string    `yaml:"include"`
}

// parseInclude decodes a file of fragments.
func parseInclude(file string, src []byte) (*included, ErrorList) {
	doc, errs := parseYAML(src, file, "the file is empty: an included file holds fragments:")
	if errs != nil {
		return nil, errs
	}
	d := &decoder{file: file, included: true}
	inc := &included{}
	d.decode(doc.Content[0], reflect.ValueOf(inc).Elem())
	return inc, d.errs
}
