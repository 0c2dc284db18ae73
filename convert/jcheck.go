package convert

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perflab/perflab/plan"
)

// judge gives a step the extractions and assertions in its scope, in
// JMeter's order: the post-processors (outer scopes first), then the
// assertions.
func (c *converter) judge(s *stepOut, sampler *element, sc scope) {
	c.pickLasts(sc.post)
	for _, p := range sc.post {
		if !c.scoped(p) {
			continue
		}
		switch {
		case c.pickers[p]:
			c.done(p) // its extractor takes the last match
			continue
		case p.Tag == "JSR223PostProcessor" || p.Tag == "BeanShellPostProcessor":
			if sets, ok := c.scriptSets(p); ok {
				c.done(p)
				for _, kv := range sets {
					s.conv.postSets.set(kv.K, kv.V)
				}
				continue
			}
		}
		c.extractor(s, p)
	}
	for _, a := range sc.asserts {
		if !c.scoped(a) {
			continue
		}
		c.assertion(s, a)
	}
}

// scoped reports whether a post-processor or assertion applies to the
// sample itself (JMeter's scope parent or all): one applied to a
// variable is listed; one applied to sub-samples only (redirects'
// hops, embedded resources) is taken as applied to the sample.
func (c *converter) scoped(e *element) bool {
	switch e.str("Sample.scope") + e.str("Assertion.scope") {
	case "variable":
		if v := strings.TrimSpace(e.str("Scope.variable")); e.Tag == "ResponseAssertion" && v != "" && !strings.Contains(v, "${") {
			return true // an assertion on the variable's value
		}
		c.drop(e, "applies to the variable "+strconv.Quote(e.str("Scope.variable"))+": perflab extracts and checks responses")
		return false
	case "children":
		c.note(e, "applies to sub-samples only (redirects' hops, embedded resources): perflab applies it to the response")
	}
	return true
}

// extractor converts a post-processor into an extraction of the step,
// or lists it. JMeter's extractors never fail a sample: each extraction
// has a default ("" when JMeter has none), so that a miss does not fail
// the step.
func (c *converter) extractor(s *stepOut, e *element) {
	add := func(name string, x ordered) {
		c.done(e)
		n := c.extName(name)
		s.Extract.set(n, x)
	}
	switch e.Tag {
	case "RegexExtractor":
		ref := strings.TrimSpace(e.str("RegexExtractor.refname"))
		re, ok := c.javaRegex(e.str("RegexExtractor.regex"), e)
		if !ok || ref == "" {
			return
		}
		x := ordered{{"regex", re}}
		c.from(&x, e.str("RegexExtractor.useHeaders"), e)
		if g, ok := templateGroup(e.str("RegexExtractor.template")); !ok {
			c.note(e, "its template "+strconv.Quote(e.str("RegexExtractor.template"))+": perflab takes one group ("+strconv.Itoa(g)+")")
			x = append(x, kv{"group", g})
		} else if g != 1 {
			x = append(x, kv{"group", g})
		}
		c.match(&x, e.str("RegexExtractor.match_number"), e, ref)
		c.extractDefault(&x, e.str("RegexExtractor.default"), e.boolean("RegexExtractor.default_empty_value"), false, e)
		add(ref, x)
	case "BoundaryExtractor":
		ref := strings.TrimSpace(e.str("BoundaryExtractor.refname"))
		if ref == "" {
			c.drop(e, "a boundary extractor without a variable")
			return
		}
		x := ordered{{"between", []string{c.value(e.str("BoundaryExtractor.lboundary"), e), c.value(e.str("BoundaryExtractor.rboundary"), e)}}}
		c.from(&x, e.str("BoundaryExtractor.useHeaders"), e)
		c.match(&x, e.str("BoundaryExtractor.match_number"), e, ref)
		c.extractDefault(&x, e.str("BoundaryExtractor.default"), e.boolean("BoundaryExtractor.default_empty_value"), true, e)
		add(ref, x)
	case "HtmlExtractor":
		ref := strings.TrimSpace(e.str("HtmlExtractor.refname"))
		sel := e.str("HtmlExtractor.expr")
		if _, err := plan.CompileCSS(sel); err != nil || ref == "" {
			c.drop(e, fmt.Sprintf("its CSS selector %q: %v", sel, err))
			return
		}
		x := ordered{{"css", sel}}
		if a := strings.TrimSpace(e.str("HtmlExtractor.attribute")); a != "" {
			x = append(x, kv{"attribute", a})
		}
		if impl := e.str("HtmlExtractor.extractor_impl"); impl == "JODD" {
			c.note(e, "Jodd's selectors: perflab's are CSS3's (cascadia), as Jsoup's")
		}
		c.match(&x, e.str("HtmlExtractor.match_number"), e, ref)
		c.extractDefault(&x, e.str("HtmlExtractor.default"), e.boolean("HtmlExtractor.default_empty_value"), false, e)
		add(ref, x)
	case "XPathExtractor", "XPath2Extractor":
		p := "XPathExtractor."
		if e.Tag == "XPath2Extractor" {
			p = "XPathExtractor2."
		}
		ref := strings.TrimSpace(e.str(p + "refname"))
		q := e.str(p + "xpathQuery")
		if _, err := plan.CompileXPath(q); err != nil || ref == "" {
			c.drop(e, fmt.Sprintf("its XPath %q: %v", q, err))
			return
		}
		x := ordered{{"xpath", q}}
		if e.boolean(p + "fragment") {
			c.note(e, "it extracts XML fragments: perflab extracts their text")
		}
		if ns := strings.TrimSpace(e.str(p+"namespace") + e.str(p+"namespaces")); ns != "" && ns != "false" {
			c.note(e, "its namespaces: perflab's XPath matches names as written")
		}
		m := strings.TrimSpace(e.str(p + "matchNumber"))
		if m == "" || m == "-1" {
			// JMeter sets NAME to the first and NAME_1 ... all of them.
			if c.readsVar(ref+"_1") || c.readsVar(ref+"_matchNr") {
				m = "-1"
			} else {
				m = "1"
			}
		}
		c.match(&x, m, e, ref)
		c.extractDefault(&x, e.str(p+"default"), true, false, e)
		add(ref, x)
	case "JSONPostProcessor":
		names := splitSemi(e.str("JSONPostProcessor.referenceNames"))
		paths := splitSemi(e.str("JSONPostProcessor.jsonPathExprs"))
		defs := splitSemi(e.str("JSONPostProcessor.defaultValues"))
		matches := splitSemi(e.str("JSONPostProcessor.match_numbers"))
		if len(names) != len(paths) || len(defs) > 0 && len(defs) != len(names) {
			c.drop(e, fmt.Sprintf("%d names, %d paths and %d defaults: JMeter refuses them unless as many", len(names), len(paths), len(defs)))
			return
		}
		if e.boolean("JSONPostProcessor.compute_concat") {
			c.note(e, "NAME_ALL, its values joined by commas: not set (match: all gives NAME as a JSON list)")
		}
		for i, n := range names {
			path, ok := c.jsonPath(paths[i], e)
			if !ok || n == "" {
				continue
			}
			x := ordered{{"json", path}}
			m := "0"
			if len(matches) == len(names) {
				m = matches[i]
			} else if len(matches) == 1 {
				m = matches[0]
			}
			c.match(&x, m, e, n)
			def := ""
			if i < len(defs) {
				def = defs[i]
			}
			c.extractDefault(&x, def, true, false, e)
			add(n, x)
		}
	case "com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor":
		ref := strings.TrimSpace(e.str("VAR"))
		path, ok := c.jsonPath(e.str("JSONPATH"), e)
		if !ok || ref == "" {
			return
		}
		x := ordered{{"json", path}}
		c.extractDefault(&x, e.str("DEFAULT"), true, false, e)
		add(ref, x)
	case "JSR223PostProcessor", "BeanShellPostProcessor", "BSFPostProcessor":
		c.drop(e, "a script run after each sampler in its scope ("+scriptLang(e)+"): scripts do not run in perflab; a value it takes from a response is an extract, a branch it picks an if: or choose:")
	case "DebugPostProcessor":
		c.drop(e, "shows JMeter's variables: perflab's run keeps each step's errors")
	case "ResultAction":
		c.drop(e, "acts on a failed sample: perflab's scenario on_error (continue, next_iteration, stop_vu) acts on every failed step")
	default:
		c.drop(e, "a post-processor perflab does not know ("+e.Tag+")")
	}
}

func splitSemi(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ";")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	// Java's split drops the empty strings at the end.
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// extName is the perflab name of an extraction's JMeter variable.
func (c *converter) extName(ref string) string {
	n := varName(ref)
	if n != ref {
		if c.extNames == nil {
			c.extNames = map[string]string{}
		}
		c.extNames[ref] = n
	}
	return n
}

// from sets what a regex or boundary extraction reads (JMeter's "field to
// check").
func (c *converter) from(x *ordered, field string, e *element) {
	switch strings.TrimSpace(field) {
	case "", "false":
	case "true":
		*x = append(*x, kv{"from", "headers"})
	case "URL":
		*x = append(*x, kv{"from", "url"})
	case "code":
		*x = append(*x, kv{"from", "status"})
	case "unescaped":
		c.note(e, "it reads the body with HTML's escapes undone: perflab reads the body as it is")
	case "as_document":
		c.note(e, "it reads the body's text as a document (Tika): perflab reads the body as it is")
	case "request_headers":
		c.note(e, "it reads the request's headers: perflab reads the response's")
		*x = append(*x, kv{"from", "headers"})
	case "message":
		c.note(e, "it reads the response's message: perflab reads the status line with the headers")
		*x = append(*x, kv{"from", "headers"})
	}
}

// match sets which of several values an extraction takes: JMeter's 0 is
// a random one, N the N-th, -1 all of them (NAME_1 ... and, in perflab,
// NAME as a JSON list).
func (c *converter) match(x *ordered, m string, e *element, ref string) {
	m = strings.TrimSpace(m)
	n, err := strconv.Atoi(m)
	if m != "" && err != nil {
		if lit, ok := c.literalValue(m, e); ok {
			n, err = strconv.Atoi(lit)
		}
		if err != nil {
			c.note(e, "its match number "+strconv.Quote(m)+" is not a number: the first match")
			n = 1
		}
	}
	switch {
	case n == 0:
		*x = append(*x, kv{"match", "random"})
	case n < 0 && c.lastOf[e]:
		*x = append(*x, kv{"match", "last"})
	case n < 0:
		*x = append(*x, kv{"match", "all"})
	case n > 1:
		*x = append(*x, kv{"match", n})
	}
}

// extractDefault gives an extraction its default: JMeter's, or "" (a miss
// never fails a JMeter sample). A regex extractor without a default keeps
// the variable's earlier value on a miss, which perflab does not: the
// variable is empty, and that is said.
func (c *converter) extractDefault(x *ordered, def string, always, blankIsNone bool, e *element) {
	for _, p := range *x {
		if p.K == "match" && p.V == "all" {
			return // a miss is an empty list
		}
	}
	given := def != "" && !(blankIsNone && strings.TrimSpace(def) == "")
	if !given && !always {
		c.note(e, "without a default JMeter keeps the variable's value on a miss: perflab empties it")
	}
	if !given {
		def = ""
	}
	*x = append(*x, kv{"default", c.value(def, e)})
}

var templateRef = regexp.MustCompile(`\$(\d+)\$`)

// templateGroup is the group a regex extractor's template names: $N$
// alone, else the first it names.
func templateGroup(t string) (int, bool) {
	t = strings.TrimSpace(t)
	if t == "" {
		return 1, true
	}
	m := templateRef.FindAllStringSubmatch(t, -1)
	if len(m) == 0 {
		return 0, false
	}
	g, _ := strconv.Atoi(m[0][1])
	return g, len(m) == 1 && m[0][0] == t
}

// jsonPath is a JMeter (Jayway) JSON path as perflab reads it, or listed.
func (c *converter) jsonPath(p string, e *element) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" {
		c.note(e, "an empty JSON path")
		return "", false
	}
	if !strings.HasPrefix(p, "$") {
		p = "$." + p // Jayway reads a path without $ from the root
	}
	if strings.Contains(p, "${") {
		c.note(e, "the JSON path "+strconv.Quote(p)+" holds a variable: perflab's paths are written out")
		return "", false
	}
	if _, err := plan.ParseJSONPath(p); err != nil {
		q := jaywayToRFC(p)
		if _, err2 := plan.ParseJSONPath(q); err2 != nil {
			c.note(e, fmt.Sprintf("the JSON path %q: %v", p, err))
			return "", false
		}
		p = q
	}
	return p, true
}

// jaywayToRFC rewrites what Jayway takes and RFC 9535 writes otherwise:
// filters in parentheses with == between quotes are the same; a
// function at the end (.length()) is not, and is kept (refused).
func jaywayToRFC(p string) string {
	p = strings.ReplaceAll(p, "[?(", "[?")
	p = strings.ReplaceAll(p, ")]", "]")
	p = strings.ReplaceAll(p, ".[", "[")
	return p
}

// assertion converts an assertion into the step's checks, or lists it.
func (c *converter) assertion(s *stepOut, e *element) {
	switch e.Tag {
	case "ResponseAssertion":
		c.responseAssertion(s, e)
	case "JSONPathAssertion", "com.atlantbh.jmeter.plugins.jsonutils.jsonpathassertion.JSONPathAssertion":
		c.jsonAssertion(s, e)
	case "DurationAssertion":
		raw := strings.TrimSpace(e.str("DurationAssertion.duration"))
		lit, ok := c.literalValue(raw, e)
		ms, err := strconv.ParseInt(lit, 10, 64)
		if !ok || err != nil || ms <= 0 {
			c.drop(e, "its duration "+strconv.Quote(raw)+" is not a number of milliseconds")
			return
		}
		c.done(e)
		c.that(s, ordered{{"duration", true}, {"le", strconv.FormatInt(ms, 10) + "ms"}}, e)
	case "SizeAssertion":
		raw := strings.TrimSpace(e.str("SizeAssertion.size"))
		lit, ok := c.literalValue(raw, e)
		n, err := strconv.ParseInt(lit, 10, 64)
		if !ok || err != nil {
			c.drop(e, "its size "+strconv.Quote(raw)+" is not a number of bytes")
			return
		}
		op := map[string]string{"1": "equals", "2": "not_equals", "3": "gt", "4": "lt", "5": "ge", "6": "le"}[strings.TrimSpace(e.str("SizeAssertion.operator"))]
		if op == "" {
			op = "equals"
		}
		switch f := e.str("Assertion.test_field"); f {
		case "", "SizeAssertion.response_data":
		case "SizeAssertion.response_network_size":
			c.note(e, "it checks the whole response's size (headers too): perflab checks the body's")
		default:
			c.drop(e, "it checks the size of "+f+": perflab checks the body's")
			return
		}
		c.done(e)
		var v any = n
		if op == "equals" || op == "not_equals" {
			v = strconv.FormatInt(n, 10)
		}
		c.that(s, ordered{{"size", true}, {op, v}}, e)
	case "JSR223Assertion", "BeanShellAssertion", "BSFAssertion":
		c.drop(e, "a script that judges each response ("+scriptLang(e)+"): check.that asserts on the status, a header, the body, a JSON path, the time or the size")
	case "XPathAssertion", "XPath2Assertion":
		c.drop(e, "an XPath assertion: an xpath extract with a default and a check.that on it say what it tests")
	default:
		c.drop(e, "an assertion perflab does not know ("+e.Tag+")")
	}
}

// that adds an assertion to the step's check that, with the JMeter
// assertion's custom message.
func (c *converter) that(s *stepOut, a ordered, e *element) {
	if m := strings.TrimSpace(e.str("Assertion.custom_message")); m != "" {
		a = append(a, kv{"message", m})
	}
	if s.Check == nil {
		s.Check = map[string]any{}
	}
	list, _ := s.Check["that"].([]any)
	s.Check["that"] = append(list, a)
}

// Response Assertion test types (a bit mask).
const (
	rMatch     = 1
	rContains  = 2
	rNot       = 4
	rEquals    = 8
	rSubstring = 16
	rOr        = 32
)

// responseAssertion converts a Response Assertion: each pattern an
// assertion (all must pass), or with OR one assertion any pattern passes.
func (c *converter) responseAssertion(s *stepOut, e *element) {
	var tests []string
	if ts := e.Props["Asserion.test_strings"]; ts != nil { // JMeter's own spelling
		for _, t := range ts.Items {
			tests = append(tests, t.Value)
		}
	}
	typ, err := strconv.Atoi(strings.TrimSpace(e.str("Assertion.test_type")))
	if err != nil {
		typ = rContains
	}
	not, or := typ&rNot != 0, typ&rOr != 0
	op := "matches"
	switch {
	case typ&rContains != 0:
		op = "contains_match"
	case typ&rEquals != 0:
		op = "equals"
	case typ&rSubstring != 0:
		op = "contains"
	}
	field := e.str("Assertion.test_field")
	if len(tests) == 0 {
		c.drop(e, "an assertion with nothing to test: JMeter passes it")
		return
	}
	assume := e.boolean("Assertion.assume_success")
	var subject ordered
	switch {
	case e.str("Assertion.scope") == "variable":
		// The variable's value, whatever the field.
		subject = ordered{{"expr", exprMarkMode(modeVar, strings.TrimSpace(e.str("Scope.variable")))}}
	case field == "Assertion.response_data" || field == "":
		subject = ordered{{"body", true}}
	case field == "Assertion.response_data_as_document":
		c.note(e, "it reads the body's text as a document (Tika): perflab reads the body")
		subject = ordered{{"body", true}}
	case field == "Assertion.response_code":
		c.statusAssertion(s, e, tests, op, not, or, assume)
		return
	case field == "Assertion.response_headers":
		c.headerAssertion(s, e, tests, op, not, or)
		return
	default:
		what := map[string]string{"Assertion.response_message": "the response's message", "Assertion.request_headers": "the request's headers",
			"Assertion.request_data": "the request's body", "Assertion.sample_label": "the URL"}[field]
		if what == "" {
			what = field
		}
		c.drop(e, "it checks "+what+": perflab checks the status, a header, the body, a JSON path, the time or the size")
		return
	}
	if assume {
		c.note(e, "it ignores the status (Ignore Status): perflab's step also needs a status it accepts (check.status)")
	}
	if or && not && len(tests) > 1 {
		c.drop(e, "NOT with OR: it passes when a pattern does not match, which one assertion cannot say")
		return
	}
	pats, ok := c.patterns(tests, op, e)
	if !ok {
		return
	}
	c.done(e)
	if or && len(pats) > 1 {
		c.that(s, combine(subject, op, pats, not), e)
		return
	}
	for _, p := range pats {
		a := append(append(ordered{}, subject...), kv{op, p})
		if not {
			a = append(a, kv{"not", true})
		}
		c.that(s, a, e)
	}
}

// patterns are the assertion's patterns as perflab writes them: regexes
// made RE2's, all with JMeter's variables as placeholders.
func (c *converter) patterns(tests []string, op string, e *element) ([]string, bool) {
	var out []string
	for _, t := range tests {
		if op == "contains_match" || op == "matches" {
			re, ok := c.javaRegex(t, e)
			if !ok {
				return nil, false
			}
			out = append(out, re)
			continue
		}
		out = append(out, c.value(t, e))
	}
	return out, true
}

// combine is one assertion that passes when any of the patterns does (a
// Response Assertion with OR).
func combine(subject ordered, op string, pats []string, not bool) ordered {
	a := append(ordered{}, subject...)
	switch op {
	case "equals":
		a = append(a, kv{"one_of", pats})
	case "contains":
		var q []string
		for _, p := range pats {
			q = append(q, regexp.QuoteMeta(p))
		}
		a = append(a, kv{"contains_match", strings.Join(q, "|")})
	default:
		var q []string
		for _, p := range pats {
			q = append(q, "(?:"+p+")")
		}
		a = append(a, kv{op, strings.Join(q, "|")})
	}
	if not {
		a = append(a, kv{"not", true})
	}
	return a
}

// statusAssertion converts a Response Assertion on the status: the codes
// it accepts (of 100-599) are the step's check.status, as JMeter's
// sampler takes 200-399 unless the assertion ignores the status. A set
// too large to list is an assertion on the status.
func (c *converter) statusAssertion(s *stepOut, e *element, tests []string, op string, not, or, assume bool) {
	var res []*regexp.Regexp
	for _, t := range tests {
		switch op {
		case "contains_match", "matches":
			re, ok := c.javaRegex(t, e)
			if !ok {
				return
			}
			if op == "matches" {
				re = "^(?:" + re + ")$"
			}
			r, err := regexp.Compile(re)
			if err != nil {
				c.drop(e, "its pattern "+strconv.Quote(t)+": "+err.Error())
				return
			}
			res = append(res, r)
		default:
			if strings.Contains(t, "${") {
				c.drop(e, "a status given by a variable ("+t+"): perflab's check.status lists numbers")
				return
			}
			q := regexp.QuoteMeta(t)
			if op == "equals" {
				q = "^" + q + "$"
			}
			res = append(res, regexp.MustCompile(q))
		}
	}
	var codes []int
	for code := 100; code <= 599; code++ {
		text := strconv.Itoa(code)
		pass := !or
		for _, r := range res {
			m := r.MatchString(text) != not
			if or && m {
				pass = true
			}
			if !or && !m {
				pass = false
			}
		}
		if pass && (assume || code >= 200 && code <= 399) {
			codes = append(codes, code)
		}
	}
	sort.Ints(codes)
	c.done(e)
	if s.Check == nil {
		s.Check = map[string]any{}
	}
	if prev, ok := s.Check["status"].(flowInts); ok && prev != nil {
		codes = intersect(prev, codes)
	}
	switch {
	case len(codes) == 0:
		c.note(e, "it accepts no status JMeter's sampler accepts (200-399 unless Ignore Status): the step always fails, as in JMeter")
		s.Check["status"] = flowInts{599}
	case len(codes) <= 30:
		s.Check["status"] = flowInts(codes)
	default:
		c.note(e, fmt.Sprintf("it accepts %d statuses: the step's check.status lists them", len(codes)))
		s.Check["status"] = flowInts(codes)
	}
	if m := strings.TrimSpace(e.str("Assertion.custom_message")); m != "" {
		c.note(e, "its message "+strconv.Quote(m)+": a status not accepted fails the step as http_4xx, http_5xx ... with perflab's message")
	}
}

func intersect(a, b []int) flowInts {
	in := map[int]bool{}
	for _, x := range a {
		in[x] = true
	}
	var out flowInts
	for _, x := range b {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

var statusLine = regexp.MustCompile(`^HTTP/[0-9.]+ ([1-5][0-9][0-9])$`)

var headerLine = regexp.MustCompile(`^([A-Za-z0-9!#$%&'*+.^_|~-]+):\s*(.*)$`)

// headerAssertion converts a Response Assertion on the headers: a pattern
// "Name: value" is an assertion on that header; others are listed.
func (c *converter) headerAssertion(s *stepOut, e *element, tests []string, op string, not, or bool) {
	if or && len(tests) > 1 {
		c.drop(e, "an either-or assertion on the headers: perflab asserts on one header at a time")
		return
	}
	var as []ordered
	for _, t := range tests {
		if m := statusLine.FindStringSubmatch(t); m != nil && len(tests) == 1 && (op == "contains" || op == "contains_match") {
			// The status line, which JMeter's headers start with: the
			// status.
			c.statusAssertion(s, e, []string{m[1]}, "equals", not, false, e.boolean("Assertion.assume_success"))
			return
		}
		m := headerLine.FindStringSubmatch(t)
		if m == nil || op != "contains" && op != "equals" && op != "contains_match" {
			if (op == "contains" || op == "contains_match") && !strings.Contains(t, ":") && regexp.QuoteMeta(t) == t {
				// A header's name alone: the header is there.
				a := ordered{{"header", t}, {"exists", true}}
				if not {
					a = ordered{{"header", t}, {"absent", true}}
				}
				as = append(as, a)
				continue
			}
			c.drop(e, "its pattern "+strconv.Quote(t)+" on the headers: perflab asserts on one header (header: NAME)")
			return
		}
		v := strings.TrimSpace(m[2])
		a := ordered{{"header", m[1]}}
		switch op {
		case "equals":
			a = append(a, kv{"equals", c.value(v, e)})
		case "contains":
			a = append(a, kv{"contains", c.value(v, e)})
		default:
			re, ok := c.javaRegex(v, e)
			if !ok {
				return
			}
			a = append(a, kv{"contains_match", re})
		}
		if not {
			a = append(a, kv{"not", true})
		}
		as = append(as, a)
	}
	c.done(e)
	for _, a := range as {
		c.that(s, a, e)
	}
}

// jsonAssertion converts a JSON Assertion: the path exists, or its value
// (any of its values, for a path of several) equals, matches or is null;
// INVERT negates it (a missing path then passes, as in JMeter).
func (c *converter) jsonAssertion(s *stepOut, e *element) {
	path, ok := c.jsonPath(e.str("JSON_PATH"), e)
	if !ok {
		c.drop(e, "its JSON path is not converted")
		return
	}
	a := ordered{{"json", path}}
	validate := e.boolean("JSONVALIDATION")
	regex := !e.has("ISREGEX") || e.boolean("ISREGEX")
	want := e.str("EXPECTED_VALUE")
	switch {
	case !validate:
		a = append(a, kv{"exists", true})
	case e.boolean("EXPECT_NULL"):
		a = append(a, kv{"equals", "null"})
	case regex:
		re, ok := c.javaRegex(want, e)
		if !ok {
			return
		}
		a = append(a, kv{"matches", re})
	default:
		// JMeter reads the expected value as JSON: "abc" with its quotes
		// is abc; 5 a number.
		var v any
		if err := json.Unmarshal([]byte(strings.TrimSpace(want)), &v); err == nil {
			if str, ok := v.(string); ok {
				want = str
			}
		}
		a = append(a, kv{"equals", c.value(want, e)})
	}
	if e.boolean("INVERT") {
		a = append(a, kv{"not", true})
	}
	c.done(e)
	c.that(s, a, e)
}
