package convert

import (
	"fmt"
	"strconv"
	"strings"
)

// A JMeter function that computes a value each time a sampler reads it (a
// random string, a random number, the time) is, in perflab, a variable
// that a set: step gives the value of an expression just before the step
// that reads it: randomString(n, chars), an int of random(), now().Format
// (LAYOUT). Each call in the JMeter plan has a variable of its own,
// randomString_1, time_1 ... (or the name the call gives as its last
// argument), so two calls in one value are two values, as in JMeter.

// gen is such a call: the expression of its value (with marks for the
// variables it reads), what it is, and where.
type gen struct {
	kind, expr string
	// name is the variable the call names (its last argument), JMeter's
	// name; "" when it names none.
	name string
	src  string
	e    *element
	// out is the perflab variable, named when first used.
	out string
}

// genKey is a call's place: its element, the value it is in, and which of
// the calls written alike in that value it is. A value converted again
// (a Module Controller's target in two places) gives the same calls.
type genKey struct {
	e          *element
	value, src string
	n          int
}

// genSite starts converting the value v: the calls in it are v's. The
// function returned ends it.
func (c *converter) genSite(v string) func() {
	prevValue, prevCount := c.genValue, c.genCount
	c.genValue, c.genCount = v, map[string]int{}
	return func() { c.genValue, c.genCount = prevValue, prevCount }
}

// genCall is a call of __RandomString, __Random or __time as a mark of the
// variable its set: step gives, or the call kept as literal text, listed.
func (c *converter) genCall(p piece, e *element) string {
	x, why, approx := c.genExpr(p, e)
	if why != "" {
		c.note(e, "the function "+p.src+" (kept as literal text): "+why)
		return literal(p.src)
	}
	if approx != "" {
		c.note(e, "the function "+p.src+": "+approx)
	}
	if c.inUDV {
		c.note(e, "the function "+p.src+" in a User Defined Variable (kept as literal text): JMeter computes it once, as the test starts; give the value with --set")
		return literal(p.src)
	}
	key := genKey{e: e, value: c.genValue, src: p.src}
	if c.genCount != nil {
		key.n = c.genCount[p.src]
		c.genCount[p.src]++
	}
	if c.genKeys == nil {
		c.genKeys = map[genKey]int{}
	}
	i, ok := c.genKeys[key]
	if !ok {
		g := &gen{kind: p.fn, expr: x, src: p.src, e: e}
		if k := map[string]int{"RandomString": 2, "Random": 2, "time": 1}[p.fn]; len(p.args) > k {
			if name := strings.TrimSpace(p.args[k]); name != "" && !strings.Contains(name, "${") {
				g.name = name
				if c.setVars == nil {
					c.setVars = map[string]bool{}
				}
				c.setVars[name] = true
			}
		}
		i = len(c.gens)
		c.gens = append(c.gens, g)
		c.genKeys[key] = i
	}
	return mark(modeGen, strconv.Itoa(i))
}

// genExpr is the expression of a call of __RandomString, __Random or
// __time, with marks for the variables its arguments read; why says why
// there is none, approx what it does otherwise than JMeter.
func (c *converter) genExpr(p piece, e *element) (x, why, approx string) {
	arg := func(i int) string {
		if i < len(p.args) {
			return p.args[i]
		}
		return ""
	}
	switch p.fn {
	case "RandomString":
		lit, ok := c.literalValue(strings.TrimSpace(arg(0)), e)
		n, err := strconv.Atoi(strings.TrimSpace(lit))
		if !ok || err != nil || n < 0 {
			return "", "its length " + strconv.Quote(arg(0)) + " is not a number", ""
		}
		chars, ok := c.literalValue(arg(1), e)
		if !ok {
			return "", "its characters " + strconv.Quote(arg(1)) + " are not plain text", ""
		}
		if chars = strings.TrimSpace(chars); chars == "" {
			return fmt.Sprintf("randomString(%d)", n), "", "JMeter draws any Unicode character, perflab letters and digits"
		}
		return fmt.Sprintf("randomString(%d, %s)", n, strconv.Quote(chars)), "", ""
	case "Random":
		bound := func(s string) (string, int64, bool) {
			s = strings.TrimSpace(s)
			if lit, ok := c.literalValue(s, e); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(lit), 10, 64)
				return "", n, err == nil
			}
			if v, ok := c.exprValue(s, e); ok {
				return "int(" + v + ")", 0, true
			}
			return "", 0, false
		}
		lx, lo, ok1 := bound(arg(0))
		hx, hi, ok2 := bound(arg(1))
		if !ok1 || !ok2 || len(p.args) < 2 {
			return "", "its bounds " + strconv.Quote(arg(0)) + " and " + strconv.Quote(arg(1)) + " are not numbers or variables", ""
		}
		switch {
		case lx == "" && hx == "":
			if lo > hi {
				return "", fmt.Sprintf("its bounds %d and %d are the wrong way round (JMeter fails)", lo, hi), ""
			}
			return fmt.Sprintf("%d + int(random() * %d)", lo, hi-lo+1), "", ""
		case lx == "":
			return fmt.Sprintf("%d + int(random() * (%s - %d + 1))", lo, hx, lo), "", ""
		case hx == "":
			return fmt.Sprintf("%s + int(random() * (%d - %s + 1))", lx, hi, lx), "", ""
		}
		return fmt.Sprintf("%s + int(random() * (%s - %s + 1))", lx, hx, lx), "", ""
	case "time":
		f, ok := c.literalValue(arg(0), e)
		if !ok {
			return "", "its format " + strconv.Quote(arg(0)) + " is not plain text", ""
		}
		if alias, ok := timeAliases[f]; ok {
			f = alias
		}
		switch {
		case f == "":
			return "now().UnixMilli()", "", ""
		case f == "/1000":
			return "now().Unix()", "", ""
		case divisor.MatchString(f):
			d, err := strconv.ParseInt(f[1:], 10, 64)
			if err != nil || d == 0 {
				return "", "its divisor " + strconv.Quote(f) + " is not a number above 0", ""
			}
			return fmt.Sprintf("int(now().UnixMilli() / %d)", d), "", ""
		}
		layout, why, approx := javaTimeLayout(f)
		if why != "" {
			return "", "its format " + strconv.Quote(f) + ": " + why, ""
		}
		return "now().Format(" + strconv.Quote(layout) + ")", "", approx
	}
	return "", "perflab has no such function", ""
}

// timeAliases are the formats __time knows by name (JMeter's default
// properties time.YMD ...).
var timeAliases = map[string]string{"YMD": "yyyyMMdd", "HMS": "HHmmss", "YMDHMS": "yyyyMMdd-HHmmss"}

var divisor = regexpMust(`^/\d+$`)

// genRef is the placeholder of a call's variable where sc stands (in mode
// raw: put in as it is, where JMeter does not encode a query parameter;
// decoded: URL-decoded, a form field's value), its set:
// step's value added to the step's (f.genSets); outside a flow (sc nil:
// the plan's target, headers, load), where no set: step goes, the call as
// literal text, listed.
func (f *fixer) genRef(i int, mode byte, sc *fscope) string {
	g := f.c.gens[i]
	if sc == nil {
		f.c.note(g.e, "the function "+g.src+" (kept as literal text): the plan's target, headers and load are read before any step (a set: step computes it in a flow)")
		return literal(g.src)
	}
	if g.out == "" {
		g.out = f.genName(g)
	}
	x, missing := f.expr(g.expr, sc)
	if len(missing) > 0 {
		f.c.note(g.e, "the function "+g.src+" reads "+strings.Join(missing, ", ")+", which nothing before it sets: read as empty")
	}
	f.genSets.set(g.out, x)
	return "${" + modePrefix(mode) + g.out + "}"
}

// genName names a call's variable: the one it names, else its kind and a
// number no other name of the plan has.
func (f *fixer) genName(g *gen) string {
	if g.name != "" {
		return f.c.extName(g.name)
	}
	base := map[string]string{"RandomString": "randomString", "Random": "random", "time": "time"}[g.kind]
	for {
		f.genCount[base]++
		name := base + "_" + strconv.Itoa(f.genCount[base])
		_, isUDV := f.c.udvs[name]
		_, isVar := f.vars[name]
		_, isData := f.c.data[name]
		_, isCol := f.c.csvCols[name]
		if !f.extracted[name] && !isUDV && !isVar && !isData && !isCol {
			return name
		}
	}
}
