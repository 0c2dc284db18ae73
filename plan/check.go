package plan

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xpath"

	"github.com/perflab/perflab/plan/expr"
)

// The sources regex and between extractions read (Extract.From).
var extractFrom = []string{"body", "headers", "url", "status"}

// ParseMatch reads an extraction's match: 0 for first (and ""), -1 for
// last, -2 for random, -3 for all, N for the N-th (1-based).
func ParseMatch(s string) (int, error) {
	switch s {
	case "", "first":
		return 0, nil
	case "last":
		return MatchLast, nil
	case "random":
		return MatchRandom, nil
	case "all":
		return MatchAll, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("match %q: want first, last, random, all or a number from 1 (the N-th match)", s)
	}
	return n, nil
}

// Match values of ParseMatch other than the N-th.
const (
	MatchFirst  = 0
	MatchLast   = -1
	MatchRandom = -2
	MatchAll    = -3
)

// Bounds on what one extraction of a response does, whatever the
// response: a server's page of a million links is no million variables.
const (
	// MaxMatches is the most matches an extraction reads: match: all,
	// last and random, which read every match, fail past it (as
	// extract_failed, saying so); match: N takes N up to it.
	MaxMatches = 10000
	// MaxExtractBytes is the most text an extraction sets: its values,
	// and match: all's JSON list of them. An element's text holds its
	// children's, so the texts of nested elements add up to many times
	// the body.
	MaxExtractBytes = 16 << 20
	// MaxXPathSteps is the most moves from node to node an xpath
	// evaluates across the document, about half a second's work: a
	// query that visits each node a few times takes a few per node (a 3
	// MB page has about 100,000), where //li[last()] counts the list
	// again for each item of it and ran for minutes on one of 30,000.
	MaxXPathSteps = 10_000_000
)

// CompileCSS compiles an extraction's CSS selector.
func CompileCSS(sel string) (cascadia.Selector, error) {
	s, err := cascadia.Compile(sel)
	if err != nil {
		return nil, fmt.Errorf("CSS selector %q: %v", sel, err)
	}
	return s, nil
}

// CompileXPath compiles an extraction's XPath.
func CompileXPath(expr string) (*xpath.Expr, error) {
	e, err := xpath.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("XPath %q: %v", expr, err)
	}
	return e, nil
}

// CompileRegex compiles the regex of an assertion's matches (the whole
// value: anchored), not_matches, or contains_match (a find).
func CompileRegex(op, re string) (*regexp.Regexp, error) {
	r, err := regexp.Compile(re)
	if err != nil || op != "matches" && op != "not_matches" {
		return r, err
	}
	return regexp.Compile(`^(?:` + re + `)$`)
}

// ParseBound reads a bound of lt, le, gt, ge or between: a number, or a
// duration (500ms, 2s) when the subject is the response time. It gives
// durations in milliseconds.
func ParseBound(s string, duration bool) (float64, error) {
	if duration {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("want a duration such as 500ms, got %q", s)
		}
		return float64(d) / float64(time.Millisecond), nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("want a number, got %q", s)
	}
	return f, nil
}

// checks checks a step's json checks and assertions (http: the step is an
// HTTP request, the only kind that takes assertions).
func (v *validator) checks(c *Check, who string, sc *scope, http bool) {
	for _, jc := range c.JSON {
		if _, err := ParseJSONPath(jc.Path); err != nil {
			v.at(jc.Pos, "%s: %v", who, err)
		}
		v.refs(jc.Equals, sc)
	}
	if len(c.That) > 0 && !http {
		v.at(c.That[0].Pos, "%s: check that is for HTTP requests", who)
		return
	}
	for i, a := range c.That {
		v.assertion(a, fmt.Sprintf("%s: check that[%d]", who, i), sc)
	}
}

func (v *validator) assertion(a *Assertion, who string, sc *scope) {
	subject := a.Subject()
	if subject == "" || strings.Contains(subject, ", ") {
		v.at(a.Pos, "%s: give one subject: json, header, body, status, duration, size (each but json and header as true) or expr", who)
		return
	}
	who += " " + subject
	if a.JSON != "" {
		if _, err := ParseJSONPath(a.JSON); err != nil {
			v.at(a.JSONPos, "%s: %v", who, err)
		}
	}
	ops := a.Operators()
	if a.Expr != nil {
		kind := expr.Bool
		if len(ops) > 0 {
			kind = expr.Any
		}
		v.compile(a.Expr, kind, sc, who)
	}
	if len(ops) == 0 && a.Expr == nil {
		v.at(a.Pos, "%s: give an operator: exists, absent, equals, not_equals, contains, not_contains, matches, not_matches, contains_match, lt, le, gt, ge, between or one_of", who)
	}
	for _, op := range ops {
		for _, t := range op.Values {
			v.refs(t, sc)
		}
		literal := func(t *Text) (string, bool) {
			if t.T.IsLiteral() {
				s, _ := t.T.Expand(nil)
				return s, true
			}
			return "", false
		}
		switch op.Name {
		case "exists", "absent":
			if a.JSON == "" && a.Header == "" {
				v.at(a.Pos, "%s: %s is for json and header: the %s is always there", who, op.Name, subject)
			}
		case "matches", "not_matches", "contains_match":
			if s, ok := literal(op.Values[0]); ok {
				if _, err := CompileRegex(op.Name, s); err != nil {
					v.at(op.Values[0].Pos, "%s: %s: bad regex: %v", who, op.Name, err)
				}
			}
		case "lt", "le", "gt", "ge", "between":
			if op.Name == "between" && len(op.Values) != 2 {
				v.at(a.BetweenPos, "%s: between takes two bounds, [low, high], got %d", who, len(op.Values))
				continue
			}
			var bounds []float64
			for _, t := range op.Values {
				if s, ok := literal(t); ok {
					f, err := ParseBound(s, a.Duration)
					if err != nil {
						v.at(t.Pos, "%s: %s: %v", who, op.Name, err)
						continue
					}
					bounds = append(bounds, f)
				}
			}
			if len(bounds) == 2 && bounds[0] > bounds[1] {
				v.at(a.BetweenPos, "%s: between: the low bound is above the high one", who)
			}
		case "one_of":
			if len(op.Values) == 0 {
				v.at(a.OneOfPos, "%s: one_of lists no value", who)
			}
		}
	}
}

// extracts checks a step's extractions and adds their names to the scope
// (a match: all extraction's NAME_count and NAME_1 ... too).
func (v *validator) extracts(st *Step, sc *scope) {
	http := st.IsRequest() && st.GRPC == nil && st.WS == nil
	for _, ex := range st.Extract {
		who := "extract " + ex.Name
		n := 0
		for _, set := range []bool{ex.JSON != "", ex.Header != "", ex.Regex != "", ex.Between != nil, ex.CSS != "", ex.XPath != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.at(ex.Pos, "%s: give exactly one of json, header, regex, between, css or xpath", who)
		}
		if ex.JSON != "" {
			if _, err := ParseJSONPath(ex.JSON); err != nil {
				v.at(ex.JSONPos, "%s: %v", who, err)
			}
		}
		if ex.Regex != "" {
			re, err := regexp.Compile(ex.Regex)
			if err != nil {
				v.at(ex.RegexPos, "%s: bad regex: %v", who, err)
			} else if ex.Group != nil && (*ex.Group < 0 || *ex.Group > re.NumSubexp()) {
				v.at(ex.GroupPos, "%s: group %d: the regex's groups are 0 (the whole match) to %d", who, *ex.Group, re.NumSubexp())
			}
		} else if ex.Group != nil {
			v.at(ex.GroupPos, "%s: group is for regex", who)
		}
		if ex.Between != nil && len(ex.Between) != 2 {
			v.at(ex.BetweenPos, "%s: between takes two boundaries, [left, right] (an empty left is the text's start, an empty right its end)", who)
		}
		if ex.CSS != "" {
			if _, err := CompileCSS(ex.CSS); err != nil {
				v.at(ex.CSSPos, "%s: %v", who, err)
			}
		} else if ex.Attribute != "" {
			v.at(ex.Pos, "%s: attribute is for css", who)
		}
		if ex.XPath != "" {
			if _, err := CompileXPath(ex.XPath); err != nil {
				v.at(ex.XPathPos, "%s: %v", who, err)
			}
		}
		switch {
		case ex.From == "":
		case ex.Regex == "" && ex.Between == nil:
			v.at(ex.FromPos, "%s: from is for regex and between", who)
		case !http && ex.From != "body":
			v.at(ex.FromPos, "%s: from %q is for HTTP requests; this step's extractions read its message", who, ex.From)
		case !oneOf(ex.From, extractFrom):
			v.at(ex.FromPos, "%s: from %q: want body, headers, url or status", who, ex.From)
		}
		m, err := ParseMatch(ex.Match)
		if err != nil {
			v.at(ex.MatchPos, "%s: %v", who, err)
		}
		if m > MaxMatches {
			v.at(ex.MatchPos, "%s: match %d: an extraction reads at most %d matches (plan.MaxMatches)", who, m, MaxMatches)
		}
		if m == MatchAll && ex.Default != nil {
			v.at(ex.MatchPos, "%s: match: all has no default: a miss is an empty list", who)
		}
		if msg := checkIdent(ex.Name); msg != "" {
			v.at(ex.Pos, "extract %q: %s", ex.Name, msg)
		}
		if v.global[ex.Name] {
			v.at(ex.Pos, "%s: the name is already a variable or data source", who)
		} else if why := readOnly(ex.Name, st.Repeat != nil && v.inPhase); why != "" {
			v.at(ex.Pos, "%s: %s", who, why)
		}
		sc.local[ex.Name] = true
		if m == MatchAll {
			sc.local[ex.Name+"_count"] = true
			sc.local[ex.Name+listMark] = true
		}
	}
}

// listMark marks, in a scope, the names of match: all extractions: NAME
// and this stand for NAME_1, NAME_2 ...
const listMark = "_#"

// listItem reports whether name is NAME_N of a match: all extraction in
// the scope.
func listItem(name string, local map[string]bool) bool {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 || i == len(name)-1 || strings.Trim(name[i+1:], "0123456789") != "" || name[i+1] == '0' {
		return false
	}
	return local[name[:i]+listMark]
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}
