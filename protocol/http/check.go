package http

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/plan/expr"
	"github.com/perflab/perflab/tmpl"
)

// JSONChecks check fields of a response (or a message) by JSON path.
type JSONChecks []jsonCheck

type jsonCheck struct {
	path *plan.JSONPath
	want *tmpl.Template
}

// CompileJSONChecks compiles a step's json checks.
func CompileJSONChecks(cs []*plan.JSONCheck) (JSONChecks, error) {
	var out JSONChecks
	for _, jc := range cs {
		p, err := plan.ParseJSONPath(jc.Path)
		if err != nil {
			return nil, err
		}
		out = append(out, jsonCheck{p, jc.Equals.T})
	}
	return out, nil
}

// Apply checks body: CheckFailed, with a detail, at the first field that
// is not as wanted.
func (c JSONChecks) Apply(body []byte, vars Vars) (metrics.ErrKind, string) {
	v := view{body: body}
	defer v.release()
	return c.apply(&v, vars)
}

// apply passes a check whose path selects a value with the text wanted
// (any of them, for a path that selects several; a path that selects
// nothing reads as an empty text, as it always did).
func (c JSONChecks) apply(v *view, vars Vars) (metrics.ErrKind, string) {
	var buf [4]gjson.Result
	for _, jc := range c {
		want, err := jc.want.Expand(vars)
		if err != nil {
			return metrics.CheckFailed, err.Error()
		}
		body, why := v.jsonTree(jc.path)
		if why != "" {
			return metrics.CheckFailed, "json " + jc.path.String() + ": " + why
		}
		got := jc.path.Select(body, buf[:0])
		if len(got) == 0 && want == "" {
			continue
		}
		pass := false
		for _, g := range got {
			pass = pass || g.String() == want
		}
		if !pass {
			seen := ""
			if len(got) > 0 {
				seen = got[0].String()
			}
			return metrics.CheckFailed, "json " + jc.path.String() + " is " + seen + ", want " + want
		}
	}
	return metrics.OK, ""
}

// Judge runs a message's extractions, then its json checks, which may
// read what they extracted, on one parse of its body: a gRPC call's
// response as JSON, a WebSocket message.
func Judge(x Extracts, c JSONChecks, header func(string) ([]byte, bool), body []byte, vars Vars) (metrics.ErrKind, string) {
	v := view{body: body}
	defer v.release()
	if k, d := x.apply(&v, header, vars); k != metrics.OK {
		return k, d
	}
	return c.apply(&v, vars)
}

// Assertions are a step's check that: each a subject of the response and
// operators its value must pass.
type Assertions []*assertion

type assertion struct {
	// label names the assertion in a failure's detail: that[2] json $.n gt 3.
	label   string
	message string
	subject subject
	ops     []operator
	not     bool
	// duration: the bounds are durations (the subject is the response time).
	duration bool
}

// subject is what an assertion reads of a response. An expression over
// the response and the VU's variables would be one more kind, with its
// case in values and reads.
type subject struct {
	kind   subjectKind
	path   *plan.JSONPath // subjectJSON
	header string         // subjectHeader
	expr   *expr.Program  // subjectExpr
	// paths are the JSON paths its json() is given as text, parsed once.
	paths map[string]*plan.JSONPath
}

type subjectKind uint8

const (
	subjectJSON subjectKind = iota
	subjectHeader
	subjectBody
	subjectStatus
	subjectDuration
	subjectSize
	subjectExpr
)

// value is a subject's value: its text, and its number when it is one (a
// JSON number, a status, a size, a response time in milliseconds).
type value struct {
	text  string
	num   float64
	isNum bool
}

type operator struct {
	name string
	vals []*tmpl.Template
	flag bool // exists, absent
	// re is the regex of matches, not_matches and contains_match when
	// it has no placeholder.
	re *regexp.Regexp
}

// CompileAssertions compiles a step's check that.
func CompileAssertions(as []*plan.Assertion) (Assertions, error) {
	var out Assertions
	for i, a := range as {
		c := &assertion{message: a.Message, not: a.Not, duration: a.Duration}
		switch {
		case a.JSON != "":
			p, err := plan.ParseJSONPath(a.JSON)
			if err != nil {
				return nil, err
			}
			c.subject = subject{kind: subjectJSON, path: p}
		case a.Header != "":
			c.subject = subject{kind: subjectHeader, header: a.Header}
		case a.Body:
			c.subject.kind = subjectBody
		case a.Status:
			c.subject.kind = subjectStatus
		case a.Duration:
			c.subject.kind = subjectDuration
		case a.Size:
			c.subject.kind = subjectSize
		case a.Expr != nil:
			c.subject = subject{kind: subjectExpr, expr: a.Expr.Prog, paths: map[string]*plan.JSONPath{}}
			for _, path := range a.Expr.Prog.JSONPaths {
				p, err := plan.ParseJSONPath(path)
				if err != nil {
					return nil, err
				}
				c.subject.paths[path] = p
			}
			if len(a.Operators()) == 0 { // a condition: it must hold
				c.ops = append(c.ops, operator{name: "equals", vals: []*tmpl.Template{tmpl.MustParse("true")}})
			}
		}
		var label strings.Builder
		label.WriteString("that[" + strconv.Itoa(i) + "] ")
		if a.Not {
			label.WriteString("not ")
		}
		label.WriteString(a.Subject())
		for _, op := range a.Operators() {
			o := operator{name: op.Name, flag: op.Flag}
			label.WriteString(" " + op.Name)
			switch op.Name {
			case "exists", "absent":
				label.WriteString(" " + strconv.FormatBool(op.Flag))
			case "between", "one_of":
				label.WriteString(" [")
				for j, t := range op.Values {
					if j > 0 {
						label.WriteString(", ")
					}
					label.WriteString(t.String())
				}
				label.WriteString("]")
			default:
				label.WriteString(" " + op.Values[0].String())
			}
			for _, t := range op.Values {
				o.vals = append(o.vals, t.T)
			}
			if (op.Name == "matches" || op.Name == "not_matches" || op.Name == "contains_match") && o.vals[0].IsLiteral() {
				s, _ := o.vals[0].Expand(nil)
				re, err := plan.CompileRegex(op.Name, s)
				if err != nil {
					return nil, err
				}
				o.re = re
			}
			c.ops = append(c.ops, o)
		}
		c.label = label.String()
		out = append(out, c)
	}
	return out, nil
}

// reads says what of a response the assertions read (as Extracts.reads).
func (as Assertions) reads() (what int, body bool) {
	for _, a := range as {
		w, b := a.subject.reads()
		what, body = what|w, body || b
	}
	return what, body
}

// apply runs the assertions in order: CheckFailed, with a detail, at the
// first that fails.
func (as Assertions) apply(v *view, header headerFunc, vars Vars) (metrics.ErrKind, string) {
	var buf [4]value
	for _, a := range as {
		if detail, ok := a.check(v, header, vars, buf[:0]); !ok {
			if a.message != "" {
				detail = a.message + " (" + detail + ")"
			}
			return metrics.CheckFailed, detail
		}
	}
	return metrics.OK, ""
}

// check passes the assertion when its subject's value passes every
// operator (any of the values, for a JSON path that selects several),
// or, with not, when it does not. A subject that is missing passes
// absent (and exists: false) and fails every other operator. A failure
// that is an error (a bound that is not a number, a regex that does not
// compile) fails with or without not.
func (a *assertion) check(v *view, header headerFunc, vars Vars, buf []value) (string, bool) {
	vals, failed := a.subject.values(v, header, vars, buf)
	if failed != "" { // an expression that could not be run fails, with or without not
		return a.label + ": " + failed, false
	}
	pass, problem := true, ""
	for _, op := range a.ops {
		switch op.name {
		case "exists":
			pass = pass && (len(vals) > 0) == op.flag
		case "absent":
			pass = pass && (len(vals) == 0) == op.flag
		}
	}
	if pass && len(vals) == 0 && a.hasValueOps() {
		pass = false
	}
	if pass && len(vals) > 0 && a.hasValueOps() {
		pass = false
		for _, val := range vals {
			ok, p := a.passes(val, vars)
			if p != "" && problem == "" {
				problem = p
			}
			if ok {
				pass = true
				break
			}
		}
	}
	if problem != "" && !pass {
		return a.label + ": " + problem, false
	}
	if pass != a.not {
		return "", true
	}
	return a.label + ": " + seen(vals), false
}

func (a *assertion) hasValueOps() bool {
	for _, op := range a.ops {
		if op.name != "exists" && op.name != "absent" {
			return true
		}
	}
	return false
}

// passes reports whether val passes each of the assertion's operators
// but exists and absent; problem says why an operator could not judge it.
func (a *assertion) passes(val value, vars Vars) (ok bool, problem string) {
	for _, op := range a.ops {
		var want [2]string
		for i, t := range op.vals {
			if i == len(want) {
				break
			}
			s, err := t.Expand(vars)
			if err != nil {
				return false, err.Error()
			}
			want[i] = s
		}
		switch op.name {
		case "exists", "absent":
			continue
		case "equals":
			ok = a.equal(val, want[0])
		case "not_equals":
			ok = !a.equal(val, want[0])
		case "contains":
			ok = strings.Contains(val.text, want[0])
		case "not_contains":
			ok = !strings.Contains(val.text, want[0])
		case "matches", "not_matches", "contains_match":
			re := op.re
			if re == nil {
				var err error
				if re, err = plan.CompileRegex(op.name, want[0]); err != nil {
					return false, op.name + ": bad regex " + strconv.Quote(want[0]) + ": " + err.Error()
				}
			}
			ok = re.MatchString(val.text) == (op.name != "not_matches")
		case "one_of":
			for _, t := range op.vals {
				s, err := t.Expand(vars)
				if err != nil {
					return false, err.Error()
				}
				if ok = a.equal(val, s); ok {
					break
				}
			}
		default: // lt, le, gt, ge, between
			x, p := a.number(val)
			if p != "" {
				return false, p
			}
			var b [2]float64
			for i := range op.vals[:min(2, len(op.vals))] {
				f, err := plan.ParseBound(want[i], a.duration)
				if err != nil {
					return false, op.name + ": " + err.Error()
				}
				b[i] = f
			}
			switch op.name {
			case "lt":
				ok = x < b[0]
			case "le":
				ok = x <= b[0]
			case "gt":
				ok = x > b[0]
			case "ge":
				ok = x >= b[0]
			case "between":
				ok = b[0] <= x && x <= b[1]
			}
		}
		if !ok {
			return false, ""
		}
	}
	return true, ""
}

// equal compares a value with an operand: as numbers when the value is a
// number and the operand reads as one, else as texts.
func (a *assertion) equal(val value, want string) bool {
	if val.isNum {
		if f, err := plan.ParseBound(want, a.duration); err == nil {
			return val.num == f
		}
	}
	return val.text == want
}

// number is the value as a number: a JSON number as it is, a text read
// as one.
func (a *assertion) number(val value) (float64, string) {
	if val.isNum {
		return val.num, ""
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(val.text), 64)
	if err != nil {
		return 0, "got " + quote(val.text) + ", not a number"
	}
	return f, ""
}

// seen says what values an assertion saw: missing, or the first few,
// each of bounded length.
func seen(vals []value) string {
	if len(vals) == 0 {
		return "missing"
	}
	var b strings.Builder
	b.WriteString("got ")
	for i, v := range vals {
		if i == 3 {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if v.isNum {
			b.WriteString(v.text)
		} else {
			b.WriteString(quote(v.text))
		}
	}
	if len(vals) > 1 {
		b.WriteString(" (" + strconv.Itoa(len(vals)) + " values)")
	}
	return b.String()
}

// maxSeen bounds the text of a value in a failure's detail.
const maxSeen = 64

// quote is s quoted, cut to maxSeen bytes.
func quote(s string) string {
	if len(s) <= maxSeen {
		return strconv.Quote(s)
	}
	cut := maxSeen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "... (" + strconv.Itoa(len(s)) + " bytes)"
}

// reads says what of a response the subject reads (as Extracts.reads).
func (s *subject) reads() (what int, body bool) {
	return 0, s.kind == subjectJSON || s.kind == subjectBody || s.kind == subjectExpr && s.expr.Body
}

// values appends the subject's values in v to dst: none when it is
// missing.
func (s *subject) values(v *view, header headerFunc, vars Vars, dst []value) ([]value, string) {
	switch s.kind {
	case subjectJSON:
		body, why := v.jsonTree(s.path)
		if why != "" {
			return dst, why
		}
		var buf [4]gjson.Result
		for _, r := range s.path.Select(body, buf[:0]) {
			switch r.Type {
			case gjson.Number:
				dst = append(dst, value{text: r.String(), num: r.Num, isNum: true})
			case gjson.Null:
				dst = append(dst, value{text: "null"})
			case gjson.JSON:
				dst = append(dst, value{text: r.Raw})
			default:
				dst = append(dst, value{text: r.String()})
			}
		}
	case subjectHeader:
		if h, ok := header(s.header); ok {
			dst = append(dst, value{text: unsafeString(h)})
		}
	case subjectBody:
		dst = append(dst, value{text: unsafeString(v.body)})
	case subjectStatus:
		dst = append(dst, value{text: strconv.Itoa(v.status), num: float64(v.status), isNum: true})
	case subjectDuration:
		dst = append(dst, value{text: v.latency.String(), num: float64(v.latency) / float64(time.Millisecond), isNum: true})
	case subjectSize:
		dst = append(dst, value{text: strconv.Itoa(v.size), num: float64(v.size), isNum: true})
	case subjectExpr:
		out, err := s.expr.Eval(s.env(v, header, vars))
		if err != nil {
			return dst, s.expr.String() + ": " + err.Error()
		}
		dst = append(dst, exprValue(out))
	}
	return dst, ""
}

// env is what an expression of a check reads: this response (its
// status, time, size, body, headers, json()) and the VU's variables. It
// is made for each check: only the steps whose checks are expressions
// pay for one.
func (s *subject) env(v *view, header headerFunc, vars Vars) *expr.Env {
	lookup := func(name string) string {
		x, _ := vars.Lookup(name)
		return x
	}
	return &expr.Env{
		Response: expr.Response{Status: v.status, Duration: float64(v.latency) / float64(time.Millisecond), Size: v.size,
			OK: true, Body: string(v.body)},
		Var: lookup, VarNamed: lookup,
		Defined: func(name string) bool { _, ok := vars.Lookup(name); return ok },
		Header: func(name string) string {
			h, _ := header(name)
			return string(h)
		},
		JSON: func(path string) any {
			p := s.paths[path]
			if p == nil {
				var err error
				if p, err = plan.ParseJSONPath(path); err != nil {
					panic(fmt.Sprintf("json(%q): %v", path, err))
				}
			}
			body, why := v.jsonTree(p)
			if why != "" {
				panic(fmt.Sprintf("json(%q): %s", path, why))
			}
			return p.Value(body)
		},
		Random: rand.Float64,
		IntN:   rand.IntN,
	}
}

// exprValue is an expression's value as a check compares it.
func exprValue(x any) value {
	switch n := x.(type) {
	case int:
		return value{text: strconv.Itoa(n), num: float64(n), isNum: true}
	case float64:
		return value{text: strconv.FormatFloat(n, 'g', -1, 64), num: n, isNum: true}
	case string:
		return value{text: n}
	case bool:
		return value{text: strconv.FormatBool(n)}
	case nil:
		return value{text: "null"}
	}
	b, _ := json.Marshal(x)
	return value{text: string(b)}
}

// unsafeString is b as a string without a copy, for a comparison that
// keeps nothing of it.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
