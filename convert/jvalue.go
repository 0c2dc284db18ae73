package convert

import (
	"github.com/perflab/perflab/tmpl"

	"regexp"
	"strconv"
	"strings"
)

// A JMeter value (a URL, a header, a body, an extractor's default) holds
// variables, ${name}, and functions, ${__name(args)}. The converter turns
// it into a perflab template in two passes: value writes each variable as
// a mark holding its JMeter name, and resolve (fixup.go), which knows
// where the step stands in the flow, writes each mark as what perflab
// calls that value there: an extracted variable, a data source's column,
// a variable of the plan, or a fallback.
//
// A mark cannot be confused with text of the plan: XML, and so a .jmx,
// holds no NUL.
const (
	markOpen  = "\x00" // \x00 MODE NAME \x01 in a template
	markClose = "\x01"
	exprOpen  = "\x02" // \x02 NAME \x03 in an expression
	exprClose = "\x03"
)

// Modes of a template's mark.
const (
	modeVar  = 'v' // a JMeter variable, ${name}
	modeRaw  = 'r' // a variable put in as it is (${raw:name}): a query parameter JMeter does not encode
	modeDec  = 'd' // a variable URL-decoded (${decoded:name}): a form field's value JMeter decodes before it encodes it
	modeProp = 'p' // a JMeter property, ${__P(name)}: a variable of the plan
	modeGen  = 'g' // a value JMeter computes each time (gens[name]): a set: step's variable
)

func mark(mode byte, name string) string { return markOpen + string(mode) + name + markClose }

func exprMark(name string) string { return exprOpen + name + exprClose }

// piece is a part of a JMeter value: text, a variable, or a function's
// call.
type piece struct {
	text string
	ref  string   // ${ref}
	fn   string   // ${__fn(args)}, fn without the underscores
	args []string // the call's arguments, as written (JMeter's escapes undone)
	src  string   // the ${...} as written
}

// scan splits a JMeter value into its pieces, as JMeter's function parser
// reads it: a function's arguments are split at commas outside
// parentheses and nested ${...}; a backslash escapes $, a comma or a
// backslash where the value holds ${ (JMeter compiles only those).
func scan(s string) []piece {
	var out []piece
	var text strings.Builder
	escapes := strings.Contains(s, "${")
	flush := func() {
		if text.Len() > 0 {
			out = append(out, piece{text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		if escapes && s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$,\\", s[i+1]) >= 0 {
			text.WriteByte(s[i+1])
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			text.WriteByte(s[i])
			i++
			continue
		}
		if p, n, ok := scanCall(s[i:]); ok {
			flush()
			out = append(out, p)
			i += n
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		name := ""
		if end >= 0 {
			name = s[i+2 : i+2+end]
		}
		if end < 0 || name == "" || strings.Contains(name, "${") {
			text.WriteString("${")
			i += 2
			continue
		}
		flush()
		out = append(out, piece{ref: name, src: s[i : i+3+end]})
		i += 3 + end
	}
	flush()
	return out
}

// bareCall reports whether ${ref} is a function's call without arguments
// (${__threadNum}), not a variable: JMeter's loop indexes
// (${__jm__NAME__idx}) are variables.
func bareCall(ref string) bool {
	return strings.HasPrefix(ref, "__") && !strings.HasPrefix(ref, "__jm__") && identRe.MatchString(ref)
}

var callName = regexp.MustCompile(`^\$\{__([A-Za-z_][A-Za-z0-9_]*)\(`)

// scanCall reads a function's call at the start of s: the piece, and the
// bytes it takes.
func scanCall(s string) (piece, int, bool) {
	m := callName.FindStringSubmatch(s)
	if m == nil {
		return piece{}, 0, false
	}
	i := len(m[0])
	var args []string
	var arg strings.Builder
	fnDepth, parens := 0, 0
	prev := byte(0)
	for ; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			if strings.IndexByte("$,\\", s[i+1]) < 0 {
				arg.WriteByte(ch)
			}
			arg.WriteByte(s[i+1])
			i++
			prev = ' '
			continue
		case ch == ',' && fnDepth == 0 && parens == 0:
			args = append(args, arg.String())
			arg.Reset()
			prev = ' '
			continue
		case ch == ')' && fnDepth == 0 && parens == 0:
			args = append(args, arg.String())
			j := i + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j >= len(s) || s[j] != '}' {
				return piece{}, 0, false
			}
			if len(args) == 1 && args[0] == "" {
				args = nil
			}
			return piece{fn: m[1], args: args, src: s[:j+1]}, j + 1, true
		case ch == '{' && prev == '$':
			fnDepth++
		case ch == '}' && fnDepth > 0:
			fnDepth--
		case ch == '(' && fnDepth == 0:
			parens++
		case ch == ')' && fnDepth == 0:
			parens--
		}
		arg.WriteByte(ch)
		prev = ch
	}
	return piece{}, 0, false
}

// literal is a JMeter value written as perflab template text that
// perflab takes as it is: ${ becomes $${.
func literal(s string) string { return strings.ReplaceAll(s, "${", "$${") }

// value turns a JMeter value into a perflab template with marks (see
// above). Functions perflab has are its placeholders; others are kept as
// literal text and listed under e.
func (c *converter) value(v string, e *element) string { return c.valueAs(v, e, modeVar) }

// valueAs is value with the variables in the given mode.
func (c *converter) valueAs(v string, e *element, mode byte) string {
	defer c.genSite(v)()
	var b strings.Builder
	for _, p := range scan(v) {
		switch {
		case p.fn != "":
			t := c.function(p, e)
			if (mode == modeRaw || mode == modeDec) && strings.HasPrefix(t, markOpen+string(modeGen)) {
				t = markOpen + string(modeGen) + string(mode) + t[2:] // as the variables around it: put in as it is, or decoded
			}
			b.WriteString(t)
		case bareCall(p.ref):
			// A function without arguments: ${__threadNum}.
			b.WriteString(c.function(piece{fn: p.ref[2:], src: p.src}, e))
		case p.ref != "":
			b.WriteString(mark(mode, p.ref))
		case mode == modeDec: // decoded as the variables beside it are
			b.WriteString(literal(tmpl.FormDecode(p.text)))
		default:
			b.WriteString(literal(p.text))
		}
	}
	return b.String()
}

// function is a JMeter function's call as a perflab template.
func (c *converter) function(p piece, e *element) string {
	arg := func(i int) string {
		if i < len(p.args) {
			return strings.TrimSpace(p.args[i])
		}
		return ""
	}
	switch p.fn {
	case "P", "property":
		name := arg(0)
		def, given := arg(1), len(p.args) > 1
		if p.fn == "property" {
			def, given = arg(2), len(p.args) > 2
			if !given {
				def = name // __property's default is the property's name
			}
		} else if !given {
			def = "1" // __P's default
		}
		if name == "" || strings.Contains(name, "${") {
			break
		}
		c.property(name, def, given, e)
		return mark(modeProp, name)
	case "threadNum":
		return "${vu}"
	case "UUID":
		return "${uuid}"
	case "time":
		if arg(0) == "" && arg(1) == "" {
			return "${timestamp_ms}"
		}
		return c.genCall(p, e)
	case "RandomString":
		return c.genCall(p, e)
	case "log":
		// __log(text, ...) logs the text and gives it.
		if len(p.args) > 0 {
			return c.value(p.args[0], e)
		}
	case "env":
		if name := arg(0); envName.MatchString(name) {
			if len(p.args) > 1 {
				return "${env." + name + ":-" + literal(arg(1)) + "}"
			}
			return "${env." + name + "}"
		}
	case "Random":
		return c.genCall(p, e)
	}
	c.note(e, "the function "+p.src+" (kept as literal text): "+functionHint(p.fn))
	return literal(p.src)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// functionHint says what in perflab does what a function does, if
// anything.
func functionHint(fn string) string {
	switch fn {
	case "groovy", "jexl", "jexl2", "jexl3", "javaScript", "BeanShell":
		return "scripts do not run in perflab; a value taken from a response is an extract, a decision an if: or choose:"
	case "RandomDate", "RandomFromMultipleVars", "randomString":
		return "a set: step computes a random value: random(), randomString(n, chars)"
	case "timeShift", "dateTimeConvert":
		return "a set: step computes a time: now().Format(\"2006-01-02\"), now().Unix(); ${timestamp_ms} is milliseconds"
	case "counter":
		return "${iteration} counts a VU's iterations"
	case "CSVRead", "StringFromFile", "FileToString":
		return "a data source (data: csv or file)"
	case "P", "property":
		return "a property named by a variable: give the value with --set"
	}
	return "perflab has no such placeholder"
}

// varName is a JMeter property's or variable's name as a perflab
// variable's: letters, digits, _ and -, starting with a letter or _.
func varName(s string) string {
	s = badVarChar.ReplaceAllString(s, "_")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z' || s[0] == '_') {
		s = "p_" + s
	}
	return s
}

var badVarChar = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// isIdent reports whether a name can stand in an expression as it is.
func isIdent(s string) bool { return s != "" && identRe.MatchString(s) }

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// property declares a variable of a JMeter property (--set overrides it),
// noting a property without a default in the plan.
func (c *converter) property(name, def string, given bool, e *element) {
	v := varName(name)
	if _, ok := c.props[v]; ok {
		return
	}
	if strings.Contains(def, "${") {
		c.note(e, "the default "+strconv.Quote(def)+" of the property "+name+" is not a plain value: the variable "+v+" is empty unless given with --set "+v+"=VALUE")
		def = ""
	} else if !given {
		c.note(e, "the property "+name+" has no default (JMeter's is "+strconv.Quote(def)+"): give it with --set "+v+"=VALUE")
	}
	c.props[v] = def
	c.propOrder = append(c.propOrder, v)
}

// modePrefix is the placeholder prefix of a variable in mode: raw: or
// decoded:, else none.
func modePrefix(mode byte) string {
	switch mode {
	case modeRaw:
		return "raw:"
	case modeDec:
		return "decoded:"
	}
	return ""
}
