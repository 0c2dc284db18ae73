package http

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/cascadia"
	"github.com/antchfx/xmlquery"
	"github.com/antchfx/xpath"
	"github.com/tidwall/gjson"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// Extracts take values from a response, or a message, into a VU's
// variables.
type Extracts []extractor

type extractKind uint8

const (
	fromJSON extractKind = iota
	fromHeader
	fromRegex
	fromBetween
	fromCSS
	fromXPath
)

// The sources of regex and between (plan.Extract.From).
const (
	srcBody = iota
	srcHeaders
	srcURL
	srcStatus
)

type extractor struct {
	step   string // the step's name, for what a miss leaves unset
	name   string
	kind   extractKind
	json   *plan.JSONPath
	header string
	re     *regexp.Regexp
	group  int
	left   []byte
	right  []byte
	src    int
	css    cascadia.Selector
	attr   string
	// xpaths hands each goroutine a compiled XPath of its own: an
	// expression keeps its state while it is evaluated.
	xpaths *sync.Pool
	match  int // plan.ParseMatch
	// fallback is the default; nil: a miss fails the step.
	fallback *string
}

// MissRecorder is told what an extraction that missed leaves unset: name,
// which the extract of failed of step would have set, so that a later
// step that needs it says why it is unset (tmpl.Explainer).
type MissRecorder interface {
	Missed(name, step, failed string)
}

// CompileExtracts compiles the extractions of the step named step.
func CompileExtracts(step string, exs []*plan.Extract) (Extracts, error) {
	var out Extracts
	for _, ex := range exs {
		e := extractor{step: step, name: ex.Name, header: ex.Header, fallback: ex.Default, attr: ex.Attribute}
		var err error
		if e.match, err = plan.ParseMatch(ex.Match); err != nil {
			return nil, err
		}
		e.src = srcBody
		for i, f := range []string{"body", "headers", "url", "status"} {
			if ex.From == f {
				e.src = i
			}
		}
		switch {
		case ex.JSON != "":
			e.kind = fromJSON
			if e.json, err = plan.ParseJSONPath(ex.JSON); err != nil {
				return nil, err
			}
		case ex.Header != "":
			e.kind = fromHeader
		case ex.Regex != "":
			e.kind = fromRegex
			if e.re, err = regexp.Compile(ex.Regex); err != nil {
				return nil, err
			}
			if e.re.NumSubexp() > 0 {
				e.group = 1
			}
			if ex.Group != nil {
				e.group = *ex.Group
			}
			if e.group < 0 || e.group > e.re.NumSubexp() {
				return nil, fmt.Errorf("extract %s: no capture group %d", ex.Name, e.group)
			}
		case len(ex.Between) == 2:
			e.kind = fromBetween
			e.left, e.right = []byte(ex.Between[0]), []byte(ex.Between[1])
		case ex.CSS != "":
			e.kind = fromCSS
			if e.css, err = plan.CompileCSS(ex.CSS); err != nil {
				return nil, err
			}
		case ex.XPath != "":
			e.kind = fromXPath
			if _, err = plan.CompileXPath(ex.XPath); err != nil {
				return nil, err
			}
			src := ex.XPath
			e.xpaths = &sync.Pool{New: func() any {
				x, _ := plan.CompileXPath(src) // it compiled above
				return x
			}}
		default:
			return nil, fmt.Errorf("extract %s: nothing to extract with", ex.Name)
		}
		out = append(out, e)
	}
	return out, nil
}

// Apply sets each extracted value; a miss without a default is an
// ExtractFailed error, with a detail.
func (x Extracts) Apply(header func(string) ([]byte, bool), body []byte, vars Vars) (metrics.ErrKind, string) {
	v := view{body: body}
	defer v.release()
	return x.apply(&v, header, vars)
}

// reads says what of a response beyond its status, headers and body the
// extractions read (readsHeaders, readsURL), and whether they read the
// body.
func (x Extracts) reads() (what int, body bool) {
	for _, e := range x {
		switch {
		case e.kind == fromHeader:
		case (e.kind == fromRegex || e.kind == fromBetween) && e.src != srcBody:
			switch e.src {
			case srcHeaders:
				what |= readsHeaders
			case srcURL:
				what |= readsURL
			}
		default:
			body = true
		}
	}
	return what, body
}

func (x Extracts) apply(v *view, header headerFunc, vars Vars) (metrics.ErrKind, string) {
	var buf [4]gjson.Result
	for i := range x {
		e := &x[i]
		found := matches{want: e.wanted()}
		ms, detail := e.values(v, header, &found, buf[:0])
		if found.over != "" {
			return metrics.ExtractFailed, "extract " + e.name + ": " + found.over
		}
		if e.match == plan.MatchAll {
			if over := setAll(e.name, ms, found.bytes, vars); over != "" {
				return metrics.ExtractFailed, "extract " + e.name + ": " + over
			}
			continue
		}
		m, ok := pick(ms, e.match)
		if !ok {
			if e.fallback == nil {
				if detail != "" {
					detail = ": " + detail
				}
				if m, ok := vars.(MissRecorder); ok {
					for _, rest := range x[i:] {
						m.Missed(rest.name, e.step, e.name)
					}
				}
				return metrics.ExtractFailed, "nothing to extract for " + e.name + detail
			}
			vars.Set(e.name, *e.fallback)
			continue
		}
		vars.Set(e.name, strings.Clone(m.String())) // not a part of the body
	}
	return metrics.OK, ""
}

// pick is the match of ms that match (plan.ParseMatch) names.
func pick(ms []gjson.Result, match int) (gjson.Result, bool) {
	n := len(ms)
	switch {
	case n == 0:
		return gjson.Result{}, false
	case match == plan.MatchFirst:
		return ms[0], true
	case match == plan.MatchLast:
		return ms[n-1], true
	case match == plan.MatchRandom:
		return ms[rand.IntN(n)], true
	case match <= n:
		return ms[match-1], true
	}
	return gjson.Result{}, false
}

// setAll sets NAME to the JSON array of the matches, NAME_count to their
// number and NAME_1 ... NAME_n to each; the NAME_i beyond n that an
// earlier response set are emptied. size is the matches' text: with the
// array, it may not pass maxExtractBytes, or nothing is set and setAll
// says why.
func setAll(name string, ms []gjson.Result, size int, vars Vars) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		t := jsonText(m)
		if size+b.Len()+len(t)+1 > maxExtractBytes {
			return tooMuchText()
		}
		b.WriteString(t)
	}
	b.WriteByte(']')
	vars.Set(name, b.String())
	before := 0
	if s, ok := vars.Lookup(name + "_count"); ok {
		before, _ = strconv.Atoi(s)
	}
	vars.Set(name+"_count", strconv.Itoa(len(ms)))
	for i, m := range ms {
		vars.Set(name+"_"+strconv.Itoa(i+1), strings.Clone(m.String()))
	}
	for i := len(ms); i < before; i++ {
		vars.Set(name+"_"+strconv.Itoa(i+1), "")
	}
	return ""
}

// jsonText is a match as an item of a JSON array: a string quoted, any
// other value as the body wrote it.
func jsonText(m gjson.Result) string {
	switch m.Type {
	case gjson.String:
		return plan.QuoteJSON(m.Str)
	case gjson.Null:
		return "null"
	}
	return m.Raw
}

// textMatch is a match of a text extraction, as a JSON path's string.
func textMatch(s string) gjson.Result { return gjson.Result{Type: gjson.String, Str: s} }

// maxExtractBytes is plan.MaxExtractBytes but in tests, which make
// their cases small.
var maxExtractBytes = plan.MaxExtractBytes

// matches counts an extraction's matches as they are gathered, as many
// as it wants (the first, the N-th), or all of them up to
// plan.MaxMatches; over says why the extraction fails when there are
// more than that, or when their text passes maxExtractBytes. (The
// matches themselves are a slice of the caller's, which stays on its
// stack.)
type matches struct {
	want  int
	n     int
	bytes int // the text of the matches
	over  string
}

// add appends r to dst, the matches so far; ok reports whether to
// gather more.
func (m *matches) add(dst []gjson.Result, r gjson.Result) (_ []gjson.Result, ok bool) {
	if !m.count(&r) {
		return dst, false
	}
	return append(dst, r), m.n < m.want
}

// count counts r, unless it is one too many or its text too much (over).
func (m *matches) count(r *gjson.Result) bool {
	if m.n == plan.MaxMatches {
		m.over = "more than " + strconv.Itoa(plan.MaxMatches) + " matches (plan.MaxMatches): match: all, last and random read every match"
		return false
	}
	size := len(r.Raw)
	if r.Type == gjson.String {
		size = len(r.Str)
	}
	if m.bytes+size > maxExtractBytes {
		m.over = tooMuchText()
		return false
	}
	m.n++
	m.bytes += size
	return true
}

// keep counts the matches dst[from:], which a selection appended at
// once, as add would have one by one, and keeps those add would have.
func (m *matches) keep(dst []gjson.Result, from int) []gjson.Result {
	for i := from; i < len(dst); i++ {
		if !m.count(&dst[i]) {
			return dst[:i]
		}
		if m.n == m.want {
			return dst[:i+1]
		}
	}
	return dst
}

// tooMuchText says an extraction's values passed maxExtractBytes.
func tooMuchText() string {
	return "its values pass " + plan.FormatSize(int64(maxExtractBytes)) + " (plan.MaxExtractBytes)"
}

// wanted is how many matches the extraction reads: up to the one it
// takes (the first, the N-th), or all, which is one past MaxMatches for
// match: all, last and random to know there are too many.
func (e *extractor) wanted() int {
	switch {
	case e.match == plan.MatchFirst:
		return 1
	case e.match > 0:
		return e.match
	}
	return plan.MaxMatches + 1
}

// values appends the extraction's matches in v to dst, counted by found;
// detail says why there is none when it is not that nothing matched.
func (e *extractor) values(v *view, header headerFunc, found *matches, dst []gjson.Result) (_ []gjson.Result, detail string) {
	ok := true
	switch e.kind {
	case fromJSON:
		body, why := v.jsonTree(e.json)
		if why != "" {
			found.over = why
			return dst, ""
		}
		return found.keep(e.json.Select(body, dst), len(dst)), ""
	case fromHeader:
		if h, ok := header(e.header); ok {
			dst, _ = found.add(dst, textMatch(unsafeString(h)))
		}
		return dst, ""
	case fromRegex:
		src := e.source(v)
		if found.want == 1 {
			if m := e.re.FindSubmatchIndex(src); m != nil {
				dst, _ = found.add(dst, textMatch(group(src, m, e.group)))
			}
			return dst, ""
		}
		for _, m := range e.re.FindAllSubmatchIndex(src, found.want) {
			if dst, ok = found.add(dst, textMatch(group(src, m, e.group))); !ok {
				break
			}
		}
		return dst, ""
	case fromBetween:
		src := e.source(v)
		for {
			i := bytes.Index(src, e.left)
			if i < 0 {
				break
			}
			src = src[i+len(e.left):]
			j := len(src) // an empty right boundary is the text's end, as in JMeter
			if len(e.right) > 0 {
				if j = bytes.Index(src, e.right); j < 0 {
					break
				}
			}
			if dst, ok = found.add(dst, textMatch(unsafeString(src[:j]))); !ok || len(e.right) == 0 {
				break
			}
			src = src[j+len(e.right):]
		}
		return dst, ""
	case fromCSS:
		if why := v.parseRefusal("css"); why != "" {
			found.over = why
			return dst, ""
		}
		for _, n := range v.htmlDoc().FindMatcher(e.css).EachIter() {
			if e.attr == "" {
				dst, ok = found.add(dst, textMatch(strings.TrimSpace(n.Text())))
			} else if a, has := n.Attr(e.attr); has {
				dst, ok = found.add(dst, textMatch(a))
			}
			if !ok {
				break
			}
		}
		return dst, ""
	}
	if why := v.parseRefusal("xpath"); why != "" {
		found.over = why
		return dst, ""
	}
	doc, err := v.xmlDoc()
	if err != nil {
		return dst, "the body is not XML or HTML: " + err.Error()
	}
	expr := e.xpaths.Get().(*xpath.Expr)
	defer e.xpaths.Put(expr)
	nav := &stepNav{NodeNavigator: xmlquery.CreateXPathNavigator(doc), steps: &xpathSteps{left: maxXPathSteps}}
	switch r := expr.Evaluate(nav).(type) {
	case *xpath.NodeIterator:
		for r.MoveNext() && !nav.steps.over {
			if dst, ok = found.add(dst, textMatch(r.Current().Value())); !ok {
				break
			}
		}
	case string:
		dst, _ = found.add(dst, textMatch(r))
	case float64:
		dst, _ = found.add(dst, textMatch(strconv.FormatFloat(r, 'f', -1, 64)))
	case bool:
		dst, _ = found.add(dst, textMatch(strconv.FormatBool(r)))
	}
	if nav.steps.over { // what it gave is of part of the document
		found.over = "xpath " + expr.String() + " moved across the document more than " + strconv.Itoa(maxXPathSteps) + " times (plan.MaxXPathSteps)"
	}
	return dst, ""
}

// maxXPathSteps is plan.MaxXPathSteps but in tests, which make their
// cases quick.
var maxXPathSteps = plan.MaxXPathSteps

// xpathSteps is what an xpath evaluation has left of its moves.
type xpathSteps struct {
	left int
	over bool // it wanted more
}

// stepNav is a navigator of an xpath evaluation that counts its moves
// from node to node, and the text it reads (a node's value is all the
// text below it: a step for each 8 bytes); past its budget it moves no
// more, and the evaluation ends, over.
type stepNav struct {
	*xmlquery.NodeNavigator
	steps *xpathSteps
}

// take takes k steps, if they are left.
func (n *stepNav) take(k int) bool {
	if n.steps.left < k {
		n.steps.left, n.steps.over = 0, true
		return false
	}
	n.steps.left -= k
	return true
}

func (n *stepNav) step() bool { return n.take(1) }

func (n *stepNav) Value() string {
	v := n.NodeNavigator.Value()
	n.take(1 + len(v)/8)
	return v
}

func (n *stepNav) Copy() xpath.NodeNavigator {
	return &stepNav{NodeNavigator: n.NodeNavigator.Copy().(*xmlquery.NodeNavigator), steps: n.steps}
}
func (n *stepNav) MoveToParent() bool { return n.step() && n.NodeNavigator.MoveToParent() }
func (n *stepNav) MoveToNextAttribute() bool {
	return n.step() && n.NodeNavigator.MoveToNextAttribute()
}
func (n *stepNav) MoveToChild() bool    { return n.step() && n.NodeNavigator.MoveToChild() }
func (n *stepNav) MoveToFirst() bool    { return n.step() && n.NodeNavigator.MoveToFirst() }
func (n *stepNav) MoveToNext() bool     { return n.step() && n.NodeNavigator.MoveToNext() }
func (n *stepNav) MoveToPrevious() bool { return n.step() && n.NodeNavigator.MoveToPrevious() }

func (n *stepNav) MoveTo(other xpath.NodeNavigator) bool {
	if o, ok := other.(*stepNav); ok {
		other = o.NodeNavigator
	}
	return n.NodeNavigator.MoveTo(other)
}

// source is what a regex or between extraction reads.
func (e *extractor) source(v *view) []byte {
	switch e.src {
	case srcHeaders:
		return v.headerText()
	case srcURL:
		return v.url
	case srcStatus:
		return strconv.AppendInt(nil, int64(v.status), 10)
	}
	return v.body
}

// group is capture group g of the match m (indexes into src); a group
// that took no part in the match is empty.
func group(src []byte, m []int, g int) string {
	if m[2*g] < 0 {
		return ""
	}
	return unsafeString(src[m[2*g]:m[2*g+1]])
}
