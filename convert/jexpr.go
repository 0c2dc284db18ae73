package convert

import (
	"fmt"
	"strconv"
	"strings"
)

// condition turns an If or While Controller's condition into a perflab
// expression (with marks for JMeter's variables), or says why it cannot.
//
// JMeter evaluates ${...} in the condition first. With useExpression (and
// for a While Controller) the result is compared with "true" (an If) or
// "false" (a While: any other value goes on); otherwise it is JavaScript.
// The usual forms are ${__jexl3(...)}, ${__groovy(...)} and
// ${__javaScript(...)} around an expression, a variable holding true or
// false, and JavaScript such as "${var}" == "x": their expressions are
// translated (a small subset of JEXL, Groovy and JavaScript alike:
// literals, variables, vars.get, ==, !=, <, &&, ||, !, arithmetic,
// .equals, .contains, .startsWith, .matches, .toInteger(), parseInt, null
// checks).
func (c *converter) condition(raw string, useExpression, while bool, e *element) (string, string) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", "an empty condition"
	}
	ps := scan(s)
	if len(ps) == 1 {
		p := ps[0]
		switch {
		case p.fn != "":
			switch p.fn {
			case "jexl", "jexl2", "jexl3", "groovy", "javaScript", "BeanShell":
				if len(p.args) == 0 {
					return "", "an empty expression"
				}
				out, why := c.translate(p.args[0], p.fn, e)
				return out, why
			}
			return "", "the function __" + p.fn + " is not converted"
		case p.ref == "JMeterThread.last_sample_ok":
			return "response.ok", ""
		case p.ref != "":
			// The variable's text: true (an If), or anything but false (a
			// While).
			v := exprMarkMode(modeVar, p.ref)
			if while {
				return "lower(trim(" + v + `)) != "false"`, ""
			}
			if useExpression {
				return "lower(trim(" + v + `)) == "true"`, ""
			}
			return v + ` == "true"`, ""
		case strings.EqualFold(strings.TrimSpace(p.text), "true"):
			return "true", ""
		case strings.EqualFold(strings.TrimSpace(p.text), "false"):
			return "false", ""
		}
	}
	if useExpression || while {
		if while && !strings.Contains(s, "${") {
			return "true", "" // text that never reads "false": the loop goes on
		}
		return "", "JMeter compares the whole text with " + map[bool]string{true: `"false"`, false: `"true"`}[while]
	}
	return c.translate(s, "javaScript", e)
}

// translate turns a JEXL, Groovy or JavaScript expression into a perflab
// expression.
func (c *converter) translate(src, lang string, e *element) (string, string) {
	t := &translator{c: c, e: e, lang: lang}
	if err := t.lex(src); err != "" {
		return "", err
	}
	n, err := t.expr(0)
	if err != "" {
		return "", err
	}
	for t.peek().kind == tPunct && t.peek().text == ";" {
		t.pos++
	}
	if t.pos < len(t.toks) {
		return "", "cannot read " + strconv.Quote(t.rest())
	}
	if n.kind == nIndexOf {
		return "", "indexOf() outside a comparison"
	}
	return n.text, ""
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr   // a string: its pieces
	tIdent // a name
	tPunct // an operator or punctuation
	tRef   // ${name}: a JMeter variable, as code
	tCall  // ${__fn(...)}
)

type token struct {
	kind   tokKind
	text   string
	pieces []piece // tStr: text and ${...} of the string; tCall: the call
}

type translator struct {
	c    *converter
	e    *element
	lang string
	toks []token
	pos  int
}

func (t *translator) rest() string {
	var parts []string
	for _, k := range t.toks[t.pos:] {
		parts = append(parts, k.text)
	}
	return strings.Join(parts, " ")
}

var puncts = []string{"===", "!==", "==", "!=", "<=", ">=", "&&", "||", "=~", "!~", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", ",", ".", ";", "?", ":", "[", "]"}

func (t *translator) lex(s string) string {
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case strings.HasPrefix(s[i:], "${"):
			ps := scan(s[i:])
			if len(ps) == 0 || ps[0].src == "" {
				return "cannot read " + strconv.Quote(s[i:])
			}
			p := ps[0]
			if p.fn != "" {
				t.toks = append(t.toks, token{kind: tCall, text: p.src, pieces: []piece{p}})
			} else {
				t.toks = append(t.toks, token{kind: tRef, text: p.src, pieces: []piece{p}})
			}
			i += len(p.src)
		case ch == '"' || ch == '\'':
			j := i + 1
			var raw strings.Builder
			for ; j < len(s) && s[j] != ch; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					switch s[j+1] {
					case 'n':
						raw.WriteByte('\n')
					case 't':
						raw.WriteByte('\t')
					default:
						raw.WriteByte(s[j+1])
					}
					j++
					continue
				}
				raw.WriteByte(s[j])
			}
			if j >= len(s) {
				return "a string without its closing quote"
			}
			t.toks = append(t.toks, token{kind: tStr, text: s[i : j+1], pieces: scan(raw.String())})
			i = j + 1
		case ch >= '0' && ch <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
				j++
			}
			for j < len(s) && strings.IndexByte("lLdDfF", s[j]) >= 0 { // Java's 10L
				j++
			}
			t.toks = append(t.toks, token{kind: tNum, text: strings.TrimRight(s[i:j], "lLdDfF")})
			i = j
		case ch == '_' || ch == '$' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '$' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			t.toks = append(t.toks, token{kind: tIdent, text: s[i:j]})
			i = j
		default:
			found := false
			for _, p := range puncts {
				if strings.HasPrefix(s[i:], p) {
					t.toks = append(t.toks, token{kind: tPunct, text: p})
					i += len(p)
					found = true
					break
				}
			}
			if !found {
				return "cannot read " + strconv.Quote(s[i:])
			}
		}
	}
	return ""
}

func (t *translator) peek() token {
	if t.pos < len(t.toks) {
		return t.toks[t.pos]
	}
	return token{kind: tEOF}
}

func (t *translator) next() token {
	k := t.peek()
	if t.pos < len(t.toks) {
		t.pos++
	}
	return k
}

func (t *translator) accept(text string) bool {
	if k := t.peek(); (k.kind == tPunct || k.kind == tIdent) && k.text == text {
		t.pos++
		return true
	}
	return false
}

// node is a translated expression: its perflab text and what it is.
type node struct {
	text string
	kind int
	// nVarGet: the variable read (vars.get), for a null check.
	name string
	// nIndexOf: what is searched, and for what.
	of, what string
}

const (
	nValue   = iota
	nNull    // null
	nVarGet  // vars.get("x"): null when unset
	nIndexOf // x.indexOf(y): only compared with -1 or 0
	nString  // a string literal
	nNumber
	nBool
)

// Binary operators by precedence, lowest first.
var levels = [][]string{
	{"||", "or"},
	{"&&", "and"},
	{"==", "!=", "===", "!==", "eq", "ne", "=~", "!~"},
	{"<", ">", "<=", ">=", "lt", "gt", "le", "ge"},
	{"+", "-"},
	{"*", "/", "%"},
}

func (t *translator) expr(level int) (node, string) {
	if level == 0 {
		// The conditional operator, lowest of all.
		cond, err := t.expr(1)
		if err != "" {
			return node{}, err
		}
		if !t.accept("?") {
			return cond, ""
		}
		a, err := t.expr(0)
		if err != "" {
			return node{}, err
		}
		if !t.accept(":") {
			return node{}, "a ? without its :"
		}
		b, err := t.expr(0)
		if err != "" {
			return node{}, err
		}
		return node{text: "(" + cond.text + " ? " + a.text + " : " + b.text + ")"}, ""
	}
	if level > len(levels) {
		return t.unary()
	}
	left, err := t.expr(level + 1)
	if err != "" {
		return node{}, err
	}
	for {
		k := t.peek()
		op := ""
		for _, o := range levels[level-1] {
			if (k.kind == tPunct || k.kind == tIdent) && k.text == o {
				op = o
			}
		}
		if op == "" {
			return left, ""
		}
		t.pos++
		right, err := t.expr(level + 1)
		if err != "" {
			return node{}, err
		}
		left, err = binary(op, left, right)
		if err != "" {
			return node{}, err
		}
	}
}

// binary is left OP right in perflab's expressions.
func binary(op string, l, r node) (node, string) {
	switch op {
	case "or":
		op = "||"
	case "and":
		op = "&&"
	case "===", "eq":
		op = "=="
	case "!==", "ne":
		op = "!="
	case "lt":
		op = "<"
	case "gt":
		op = ">"
	case "le":
		op = "<="
	case "ge":
		op = ">="
	}
	// Null checks: a variable compared with null is whether it is set.
	if op == "==" || op == "!=" {
		if r.kind == nNull {
			l, r = r, l
		}
		if l.kind == nNull {
			if r.kind != nVarGet {
				return node{}, "a comparison with null of something else than a variable"
			}
			if op == "==" {
				return node{text: "!defined(" + strconv.Quote(r.name) + ")", kind: nBool}, ""
			}
			return node{text: "defined(" + strconv.Quote(r.name) + ")", kind: nBool}, ""
		}
	}
	// x.indexOf(y) compared with -1 or 0: whether x contains y.
	if l.kind == nIndexOf || r.kind == nIndexOf {
		io, other, flip := l, r, false
		if r.kind == nIndexOf {
			io, other, flip = r, l, true
		}
		has := "(" + io.of + " contains " + io.what + ")"
		v := strings.TrimSpace(other.text)
		switch {
		case (op == "!=" && v == "-1") || (!flip && (op == ">" && v == "-1" || op == ">=" && v == "0")) || (flip && (op == "<" && v == "-1" || op == "<=" && v == "0")):
			return node{text: has, kind: nBool}, ""
		case (op == "==" && v == "-1") || (!flip && op == "<" && v == "0") || (flip && op == ">" && v == "0"):
			return node{text: "!" + has, kind: nBool}, ""
		case op == "==" && v == "0":
			return node{text: "(" + io.of + " startsWith " + io.what + ")", kind: nBool}, ""
		}
		return node{}, "indexOf() compared with " + v
	}
	if l.kind == nNull || r.kind == nNull {
		return node{}, "null in arithmetic"
	}
	switch op {
	case "=~":
		return node{text: "(" + l.text + " matches " + anchored(r) + ")", kind: nBool}, ""
	case "!~":
		return node{text: "!(" + l.text + " matches " + anchored(r) + ")", kind: nBool}, ""
	}
	kind := nValue
	switch op {
	case "==", "!=", "<", ">", "<=", ">=", "&&", "||":
		kind = nBool
	case "%":
		// Arithmetic reads variables' text as numbers: expr-lang wants
		// them converted.
		l, r, kind = asNumber(l, "int"), asNumber(r, "int"), nNumber
	case "-", "*", "/":
		l, r, kind = asNumber(l, "float"), asNumber(r, "float"), nNumber
	case "+":
		if l.kind == nNumber || r.kind == nNumber {
			l, r, kind = asNumber(l, "float"), asNumber(r, "float"), nNumber
		}
	}
	return node{text: "(" + l.text + " " + op + " " + r.text + ")", kind: kind}, ""
}

// asNumber is x read as a number (f: int or float) unless it is one.
func asNumber(x node, f string) node {
	if x.kind == nNumber {
		return x
	}
	return node{text: f + "(" + x.text + ")", kind: nNumber}
}

// anchored is a regex operand made to match a whole value, as Java's
// String.matches and JEXL's =~ do.
func anchored(r node) string {
	if r.kind == nString {
		s, err := strconv.Unquote(r.text)
		if err == nil {
			if re, why, _ := toRE2(s); why == "" {
				return strconv.Quote("^(?:" + re + ")$")
			}
		}
	}
	return `("^(?:" + ` + r.text + ` + ")$")`
}

func (t *translator) unary() (node, string) {
	switch {
	case t.accept("!"), t.accept("not"):
		x, err := t.unary()
		if err != "" {
			return node{}, err
		}
		if x.kind == nIndexOf || x.kind == nNull {
			return node{}, "! of " + x.text
		}
		return node{text: "!" + x.text, kind: nBool}, ""
	case t.accept("-"):
		x, err := t.unary()
		if err != "" {
			return node{}, err
		}
		return node{text: "-" + x.text, kind: nNumber}, ""
	}
	return t.postfix()
}

func (t *translator) postfix() (node, string) {
	x, err := t.primary()
	if err != "" {
		return node{}, err
	}
	for {
		switch {
		case t.accept("."):
			name := t.next()
			if name.kind != tIdent {
				return node{}, "a method's name expected"
			}
			var args []node
			if t.accept("(") {
				if args, err = t.args(); err != "" {
					return node{}, err
				}
			}
			if x, err = method(x, name.text, args); err != "" {
				return node{}, err
			}
		case t.accept("as"):
			typ := t.next()
			switch typ.text {
			case "int", "Integer", "long", "Long", "short", "BigInteger":
				x = node{text: "int(" + x.text + ")", kind: nNumber}
			case "double", "Double", "float", "Float", "BigDecimal":
				x = node{text: "float(" + x.text + ")", kind: nNumber}
			case "String":
			default:
				return node{}, "a cast to " + typ.text
			}
		default:
			return x, ""
		}
	}
}

func (t *translator) args() ([]node, string) {
	var out []node
	if t.accept(")") {
		return nil, ""
	}
	for {
		a, err := t.expr(0)
		if err != "" {
			return nil, err
		}
		out = append(out, a)
		if t.accept(")") {
			return out, ""
		}
		if !t.accept(",") {
			return nil, "a , or ) expected"
		}
	}
}

// method is x.name(args) in perflab's expressions.
func method(x node, name string, args []node) (node, string) {
	one := func() (node, string) {
		if len(args) != 1 {
			return node{}, fmt.Sprintf("%s() with %d arguments", name, len(args))
		}
		return args[0], ""
	}
	switch name {
	case "equals", "contentEquals":
		a, err := one()
		if err != "" {
			return node{}, err
		}
		return node{text: "(" + x.text + " == " + a.text + ")", kind: nBool}, ""
	case "equalsIgnoreCase":
		a, err := one()
		if err != "" {
			return node{}, err
		}
		return node{text: "(lower(" + x.text + ") == lower(" + a.text + "))", kind: nBool}, ""
	case "contains", "startsWith", "endsWith":
		a, err := one()
		if err != "" {
			return node{}, err
		}
		return node{text: "(" + x.text + " " + name + " " + a.text + ")", kind: nBool}, ""
	case "matches":
		a, err := one()
		if err != "" {
			return node{}, err
		}
		return node{text: "(" + x.text + " matches " + anchored(a) + ")", kind: nBool}, ""
	case "indexOf":
		a, err := one()
		if err != "" {
			return node{}, err
		}
		return node{kind: nIndexOf, of: x.text, what: a.text, text: x.text + ".indexOf(" + a.text + ")"}, ""
	case "toInteger", "toLong", "intValue", "longValue", "toBigInteger":
		return node{text: "int(" + x.text + ")", kind: nNumber}, ""
	case "toDouble", "toFloat", "doubleValue", "toBigDecimal":
		return node{text: "float(" + x.text + ")", kind: nNumber}, ""
	case "toString", "toCharSequence":
		return x, ""
	case "trim", "strip":
		return node{text: "trim(" + x.text + ")"}, ""
	case "toLowerCase":
		return node{text: "lower(" + x.text + ")"}, ""
	case "toUpperCase":
		return node{text: "upper(" + x.text + ")"}, ""
	case "length", "size":
		return node{text: "len(" + x.text + ")", kind: nNumber}, ""
	case "isEmpty":
		return node{text: "(len(" + x.text + ") == 0)", kind: nBool}, ""
	case "isBlank":
		return node{text: "(trim(" + x.text + ") == \"\")", kind: nBool}, ""
	case "asBoolean", "toBoolean":
		return node{text: "(lower(trim(" + x.text + ")) == \"true\")", kind: nBool}, ""
	}
	return node{}, "the method " + name + "()"
}

func (t *translator) primary() (node, string) {
	k := t.next()
	switch k.kind {
	case tEOF:
		return node{}, "an expression ends too soon"
	case tNum:
		return node{text: k.text, kind: nNumber}, ""
	case tStr:
		return t.str(k.pieces)
	case tRef:
		p := k.pieces[0]
		if p.ref == "JMeterThread.last_sample_ok" {
			return node{text: "response.ok", kind: nBool}, ""
		}
		if bareCall(p.ref) {
			return t.call(piece{fn: p.ref[2:], src: p.src})
		}
		return node{text: exprMarkMode(modeVar, p.ref)}, ""
	case tCall:
		return t.call(k.pieces[0])
	case tPunct:
		if k.text == "(" {
			x, err := t.expr(0)
			if err != "" {
				return node{}, err
			}
			if !t.accept(")") {
				return node{}, "a ( without its )"
			}
			if x.kind == nIndexOf || x.kind == nNull || x.kind == nVarGet {
				return x, ""
			}
			return node{text: x.text, kind: x.kind}, ""
		}
		return node{}, "cannot read " + strconv.Quote(k.text+" "+t.rest())
	}
	// A name: a literal, a call.
	switch k.text {
	case "true", "false":
		return node{text: k.text, kind: nBool}, ""
	case "null", "undefined":
		return node{kind: nNull, text: "null"}, ""
	case "vars", "props":
		if !t.accept(".") {
			return node{}, k.text + " alone"
		}
		m := t.next()
		if !t.accept("(") {
			return node{}, k.text + "." + m.text + " is not a call"
		}
		args, err := t.args()
		if err != "" {
			return node{}, err
		}
		if len(args) != 1 || args[0].kind != nString {
			return node{}, k.text + "." + m.text + "() of something else than a name in quotes"
		}
		name, _ := strconv.Unquote(args[0].text)
		switch {
		case k.text == "vars" && (m.text == "get" || m.text == "getObject"):
			return node{text: exprMarkMode(modeVar, name), kind: nVarGet, name: name}, ""
		case k.text == "vars" && m.text == "remove":
			t.c.note(t.e, "vars.remove(\""+name+"\"): perflab reads the variable and leaves it set")
			return node{text: exprMarkMode(modeVar, name), kind: nVarGet, name: name}, ""
		case k.text == "props" && (m.text == "get" || m.text == "getProperty"):
			t.c.property(name, "", true, t.e)
			return node{text: exprMarkMode(modeProp, name)}, ""
		}
		return node{}, k.text + "." + m.text + "()"
	case "parseInt", "parseFloat", "Number":
		if !t.accept("(") {
			return node{}, k.text + " is not a call"
		}
		args, err := t.args()
		if err != "" || len(args) == 0 {
			return node{}, k.text + "() without an argument"
		}
		f := "int"
		if k.text != "parseInt" {
			f = "float"
		}
		return node{text: f + "(" + args[0].text + ")", kind: nNumber}, ""
	case "Integer", "Long", "Double", "Float", "Math", "String", "Boolean":
		if !t.accept(".") {
			return node{}, k.text + " alone"
		}
		m := t.next()
		if !t.accept("(") {
			return node{}, k.text + "." + m.text
		}
		args, err := t.args()
		if err != "" {
			return node{}, err
		}
		switch k.text + "." + m.text {
		case "Integer.parseInt", "Integer.valueOf", "Long.parseLong", "Long.valueOf":
			if len(args) == 1 {
				return node{text: "int(" + args[0].text + ")", kind: nNumber}, ""
			}
		case "Double.parseDouble", "Double.valueOf", "Float.parseFloat":
			if len(args) == 1 {
				return node{text: "float(" + args[0].text + ")", kind: nNumber}, ""
			}
		case "String.valueOf":
			if len(args) == 1 {
				return args[0], ""
			}
		case "Boolean.parseBoolean", "Boolean.valueOf":
			if len(args) == 1 {
				return node{text: "(lower(" + args[0].text + ") == \"true\")", kind: nBool}, ""
			}
		case "Math.random":
			return node{text: "random()", kind: nNumber}, ""
		case "Math.abs", "Math.floor", "Math.ceil", "Math.round":
			if len(args) == 1 {
				return node{text: strings.ToLower(m.text) + "(" + args[0].text + ")", kind: nNumber}, ""
			}
		}
		return node{}, k.text + "." + m.text + "()"
	case "new":
		// new Random().nextInt(N), new java.util.Random()...
		var cls []string
		for {
			n := t.next()
			cls = append(cls, n.text)
			if !t.accept(".") {
				break
			}
		}
		if cls[len(cls)-1] != "Random" || !t.accept("(") || !t.accept(")") || !t.accept(".") || !t.accept("nextInt") || !t.accept("(") {
			return node{}, "new " + strings.Join(cls, ".")
		}
		args, err := t.args()
		if err != "" || len(args) != 1 {
			return node{}, "nextInt() of one bound"
		}
		return node{text: "int(random() * " + args[0].text + ")", kind: nNumber}, ""
	}
	return node{}, "the name " + k.text
}

// str is a string literal, whose ${...} JMeter fills in first: a
// variable's text, or the text and the variables joined.
func (t *translator) str(ps []piece) (node, string) {
	if len(ps) == 0 {
		return node{text: `""`, kind: nString}, ""
	}
	var parts []string
	for _, p := range ps {
		switch {
		case p.ref == "JMeterThread.last_sample_ok":
			parts = append(parts, `string(response.ok)`)
		case p.ref != "":
			parts = append(parts, exprMarkMode(modeVar, p.ref))
		case p.fn != "":
			x, err := t.call(p)
			if err != "" {
				return node{}, err
			}
			parts = append(parts, "string("+x.text+")")
		default:
			parts = append(parts, strconv.Quote(p.text))
		}
	}
	if len(parts) == 1 {
		k := nValue
		if ps[0].text != "" {
			k = nString
		}
		return node{text: parts[0], kind: k}, ""
	}
	return node{text: "(" + strings.Join(parts, " + ") + ")"}, ""
}

// call is a JMeter function in an expression: a property, or a random
// number; others are not converted.
func (t *translator) call(p piece) (node, string) {
	switch p.fn {
	case "P", "property":
		m := t.c.function(p, t.e)
		if strings.HasPrefix(m, markOpen) {
			return node{text: exprOpen + m[1:len(m)-1] + exprClose}, ""
		}
	case "Random":
		if len(p.args) >= 2 {
			lo, err1 := strconv.Atoi(strings.TrimSpace(p.args[0]))
			hi, err2 := strconv.Atoi(strings.TrimSpace(p.args[1]))
			if err1 == nil && err2 == nil && lo <= hi {
				return node{text: fmt.Sprintf("(%d + int(random() * %d))", lo, hi-lo+1), kind: nNumber}, ""
			}
		}
	case "threadNum":
		return node{text: "vu", kind: nNumber}, ""
	case "RandomString", "time":
		if x, why, _ := t.c.genExpr(p, t.e); why == "" {
			return node{text: "(" + x + ")"}, ""
		}
	}
	return node{}, "the function " + p.src
}
