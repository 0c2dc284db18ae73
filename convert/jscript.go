package convert

import (
	"regexp"
	"strconv"
	"strings"
)

// Scripts do not run in perflab. Two kinds of small scripts that plans
// use often are converted all the same:
//   - one that only gives variables text, or other variables' values
//     (vars.put("state", "NotSet"), vars.put("a", vars.get("b"))), with
//     log calls and comments beside: a set: step, in the script sampler's
//     place, or before (a pre-processor's) or after (a post-processor's)
//     each step in its scope;
//   - a post-processor that puts the last of an extractor's matches in its
//     variable (vars.put("X", vars.get("X_" + X_matchNr))): the extractor
//     takes the last match (match: last).
// Any other script is listed, with what in perflab does its usual job.

// scriptOf is an element's script: false when it runs a file.
func scriptOf(e *element) (string, bool) {
	if strings.TrimSpace(e.str("filename")+e.str("BeanShellSampler.filename")) != "" {
		return "", false
	}
	return e.str("script") + e.str("BeanShellSampler.query"), true
}

// scriptSets is the variables e's script sets, when it only sets
// variables (see scriptSets), with perflab's names; they are variables
// set: steps give.
func (c *converter) scriptSets(e *element) (ordered, bool) {
	src, ok := scriptOf(e)
	if !ok {
		return nil, false
	}
	sets, ok := scriptSets(src)
	if !ok {
		return nil, false
	}
	var out ordered
	for _, kv := range sets {
		if c.setVars == nil {
			c.setVars = map[string]bool{}
		}
		c.setVars[kv.K] = true
		out.set(c.extName(kv.K), kv.V)
	}
	return out, true
}

// scriptSets reads a script made only of vars.put of text or of another
// variable (log calls, comments and blank lines change nothing): the
// variables it sets, in order, JMeter's names with their expressions
// (marks for the variables they read); false for any other script.
func scriptSets(src string) (ordered, bool) {
	stmts, ok := statements(src)
	if !ok {
		return nil, false
	}
	var out ordered
	for _, st := range stmts {
		switch {
		case logCall.MatchString(st):
		default:
			m := varsPut.FindStringSubmatch(st)
			if m == nil {
				return nil, false
			}
			name, ok1 := scriptString(m[1])
			if !ok1 || name == "" {
				return nil, false
			}
			var x string
			if g := varsGetAll.FindStringSubmatch(m[2]); g != nil {
				from, ok := scriptString(g[1])
				if !ok || from == "" {
					return nil, false
				}
				x = exprMarkMode(modeVar, from)
			} else if v, ok := scriptString(m[2]); ok {
				x = strconv.Quote(v)
			} else {
				return nil, false
			}
			out.set(name, x)
		}
	}
	return out, len(out) > 0
}

var (
	logCall    = regexpMust(`^(?:log|OUT|System\.out)\.\w+\(.*\)$`)
	varsPut    = regexpMust(`^vars\.put\(\s*("[^"]*"|'[^']*')\s*,\s*(.*?)\s*\)$`)
	varsGetAll = regexpMust(`^vars\.get\(\s*("[^"]*"|'[^']*')\s*\)$`)
)

// scriptString is a string literal of a script as text: one without
// escapes or interpolation ($, which Groovy's "..." and JMeter's ${...}
// fill in).
func scriptString(s string) (string, bool) {
	if len(s) < 2 || s[0] != s[len(s)-1] || s[0] != '"' && s[0] != '\'' {
		return "", false
	}
	v := s[1 : len(s)-1]
	if strings.ContainsAny(v, `\$`) {
		return "", false
	}
	return v, true
}

// statements splits a script into its statements, at semicolons and line
// ends outside strings and parentheses, its comments removed: false when
// it cannot (a string or a comment not closed).
func statements(src string) ([]string, bool) {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(src); i++ {
		ch := src[i]
		switch {
		case ch == '"' || ch == '\'':
			j := strings.IndexByte(src[i+1:], ch)
			if j < 0 {
				return nil, false
			}
			cur.WriteString(src[i : i+j+2])
			i += j + 1
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, false
			}
			i += j + 3
		case ch == '(':
			depth++
			cur.WriteByte(ch)
		case ch == ')':
			depth--
			cur.WriteByte(ch)
		case (ch == ';' || ch == '\n') && depth == 0:
			flush()
		default:
			cur.WriteByte(ch)
		}
	}
	flush()
	return out, depth == 0
}

// pickLast reports which variable a script puts the last match of an
// extractor with match number -1 in: vars.put("X", vars.get("X_" + n))
// where n is X_matchNr ("" for any other script).
func pickLast(src string) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(src, "'", `"`)), " ")
	if m := pickLastVar.FindStringSubmatch(s); m != nil && m[1] == m[3] && m[3] == m[6] && m[2] == m[4] && m[4] == m[5] {
		return m[2]
	}
	if m := pickLastInPlace.FindStringSubmatch(s); m != nil && m[1] == m[2] && m[2] == m[3] {
		return m[1]
	}
	return ""
}

// The usual ways of writing it in Groovy and BeanShell: n read into a
// variable (with a default, as an int) and checked to be above 0, or read
// in place.
var (
	pickLastVar = regexpMust(`^(?:def|int|String) (\w+) = \(?vars\.get\("(\w+)_matchNr"\)(?: \?: "0")?\)?(?: as int| as Integer|\.toInteger\(\))? ?;? ` +
		`if \((\w+) > 0\) \{? ?vars\.put\("(\w+)", vars\.get\("(\w+)_\$\{(\w+)\}"\)\) ?;? ?\}?$`)
	pickLastInPlace = regexpMust(`^vars\.put\("(\w+)", vars\.get\("(\w+)_" \+ vars\.get\("(\w+)_matchNr"\)\)\) ?;?$`)
)

// pickLasts finds, among a sampler's post-processors in order, the scripts
// that put the last match of an extractor before them (match number -1)
// in its variable (pickLast): the extractor takes the last match
// (c.lastOf), and the script is done (c.pickers). Not when the plan
// reads the extractor's other variables (X_1 ..., X_matchNr) elsewhere:
// match: last does not set them.
func (c *converter) pickLasts(post []*element) {
	for i, p := range post {
		if p.Tag != "JSR223PostProcessor" && p.Tag != "BeanShellPostProcessor" {
			continue
		}
		src, ok := scriptOf(p)
		x := pickLast(src)
		if !ok || x == "" {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			q := post[j]
			if ref, m := extractorOf(q, x); ref {
				if m == "-1" && !c.readsAll(x) {
					if c.lastOf == nil {
						c.lastOf, c.pickers = map[*element]bool{}, map[*element]bool{}
					}
					c.lastOf[q], c.pickers[p] = true, true
				}
				break
			}
		}
	}
}

// extractorOf reports whether e is an extractor of the variable x, and its
// match number for x.
func extractorOf(e *element, x string) (bool, string) {
	switch e.Tag {
	case "RegexExtractor", "BoundaryExtractor", "HtmlExtractor":
		if strings.TrimSpace(e.str(e.Tag+".refname")) == x {
			return true, strings.TrimSpace(e.str(e.Tag + ".match_number"))
		}
	case "JSONPostProcessor":
		names, matches := splitSemi(e.str("JSONPostProcessor.referenceNames")), splitSemi(e.str("JSONPostProcessor.match_numbers"))
		for i, n := range names {
			if n == x {
				switch {
				case len(matches) == len(names):
					return true, matches[i]
				case len(matches) == 1:
					return true, matches[0]
				}
				return true, "0"
			}
		}
	}
	return false, ""
}

// readsAll reports whether an enabled element other than a script that
// picks x's last match reads what an extractor of x with match number -1
// sets beside x: x_matchNr, x_1, x_2 ...
func (c *converter) readsAll(x string) bool {
	re := regexpMust(`\$\{` + regexp.QuoteMeta(x) + `_(?:matchNr|\d+)\}|vars\.get(?:Object)?\(\s*["']` + regexp.QuoteMeta(x) + `_`)
	found := false
	c.doc.plan.each(func(e *element) {
		if found || !enabledPath(e) {
			return
		}
		if src, ok := scriptOf(e); ok && src != "" && pickLast(src) == x {
			return
		}
		for _, p := range e.Props {
			p.eachValue(func(v string) {
				if re.MatchString(v) {
					found = true
				}
			})
		}
	})
	return found
}
