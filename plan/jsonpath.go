package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"
	"github.com/tidwall/gjson"
)

// JSONPath is a JSON path of a check or an extraction, compiled: an RFC
// 9535 JSONPath ($.items[?@.state=='OPEN'].id, $..name, $.a[1:3],
// $.a['b','c']), or gjson's syntax for a path without a leading $ (as
// k6's res.json(path) reads it).
//
// A path of names and indexes only ($.a.b[0]['c.d']) is read with gjson,
// without decoding the body: what it selects is what the RFC 9535 engine
// selects on the same document (TestJSONPathEngines), at a fraction of
// the cost (BenchmarkJSONPath). Other paths decode the body into a tree
// once per response (JSONBody) however many paths read it.
type JSONPath struct {
	src string
	// fast is the path as gjson segments, one per name or index, when
	// the path has nothing else; nil otherwise.
	fast []fastSeg
	// gjson is set for a path in gjson's own syntax.
	gjson string
	rfc   *jsonpath.Path
	// deep marks a path with a descendant segment (..), whose work grows
	// with the body's nesting (MaxJSONDescent).
	deep bool
}

type fastSeg struct {
	path  string // the segment in gjson's syntax
	index bool   // an array index; else an object member's name
}

// ParseJSONPath compiles a JSON path. A path that is not RFC 9535 is an
// error saying where, except for the forms perflab read before it did
// RFC 9535: a name after a dot holding characters RFC 9535 only takes in
// brackets ($.content-type reads as $['content-type']), and a number
// after a dot ($.items.0 reads as $.items[0]).
func ParseJSONPath(s string) (*JSONPath, error) {
	if s == "" {
		return nil, fmt.Errorf("empty JSON path")
	}
	if s[0] != '$' {
		return &JSONPath{src: s, gjson: s}, nil
	}
	p, err := jsonpath.Parse(s)
	if err != nil {
		legacy, ok := legacyPath(s)
		if !ok {
			return nil, fmt.Errorf("JSON path %q: %v", s, strings.TrimPrefix(err.Error(), "jsonpath: "))
		}
		if p, err = jsonpath.Parse(legacy); err != nil {
			return nil, fmt.Errorf("JSON path %q: %v", s, strings.TrimPrefix(err.Error(), "jsonpath: "))
		}
	}
	jp := &JSONPath{src: s, rfc: p, deep: strings.Contains(p.String(), "..")}
	jp.fast = fastPath(p.Query())
	return jp, nil
}

// String is the path as the plan wrote it.
func (p *JSONPath) String() string { return p.src }

// Fast reports whether the path is read without decoding the body.
func (p *JSONPath) Fast() bool { return p.fast != nil || p.gjson != "" }

// fastPath is q as gjson segments, or nil when it has a segment other
// than a name or an index from the start.
func fastPath(q *spec.PathQuery) []fastSeg {
	segs := q.Segments()
	out := make([]fastSeg, 0, len(segs)+1)
	for _, sg := range segs {
		sels := sg.Selectors()
		if sg.IsDescendant() || len(sels) != 1 {
			return nil
		}
		switch s := sels[0].(type) {
		case spec.Name:
			if s == "" { // gjson has no path for an empty name
				return nil
			}
			out = append(out, fastSeg{path: escapeGJSON(string(s))})
		case spec.Index:
			if s < 0 {
				return nil
			}
			out = append(out, fastSeg{path: strconv.Itoa(int(s)), index: true})
		default:
			return nil
		}
	}
	if len(out) == 0 {
		out = append(out, fastSeg{path: "@this"})
	}
	return out
}

// legacyPath rewrites a path of perflab's older subset ($.name with any
// character but . and [ in the name, [N], [*], ['name']) in RFC 9535's
// syntax; ok is false when s is not of that subset.
func legacyPath(s string) (string, bool) {
	var b strings.Builder
	b.WriteByte('$')
	name := func(n string) {
		if strings.Trim(n, "0123456789") == "" {
			b.WriteString("[" + n + "]")
			return
		}
		b.WriteString("[" + jsonString(n) + "]")
	}
	for i := 1; i < len(s); {
		switch s[i] {
		case '.':
			j := i + 1
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			if j == i+1 {
				return "", false
			}
			name(s[i+1 : j])
			i = j
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return "", false
			}
			inner := s[i+1 : i+end]
			switch {
			case inner == "*":
				b.WriteString("[*]")
			case len(inner) >= 3 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				b.WriteString("[" + jsonString(inner[1:len(inner)-1]) + "]")
			case inner != "" && strings.Trim(inner, "0123456789") == "":
				b.WriteString("[" + inner + "]")
			default:
				return "", false
			}
			i += end + 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

func escapeGJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%', ',', ':', '[', ']', '{', '}', '(', ')', '"', '\'', '$':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// JSONBody is a body read by JSON paths: decoded into a tree once, by the
// first path that needs one.
type JSONBody struct {
	raw     []byte
	decoded bool
	root    any
	ok      bool // the body is JSON
	// raws holds the text of every object and array of the tree (by its
	// map or slice), so that a selected one reads as the body wrote it.
	raws map[unsafe.Pointer]string
	// descent is the levels the tree's values are nested at, in all.
	descent int
}

// MaxJSONDescent bounds a body that a path with a descendant segment
// (..) reads: the levels its values are nested at, in all (a value at
// depth 3 counts 3). The RFC 9535 engine copies each value it descends
// to once for each level above it: on 9,000 arrays nested in each other
// (18 KB), $..* allocated 1.3 GB in 11 s. A body of API objects nests
// its values a few levels deep, 4 MiB of them about 2 million in all.
const MaxJSONDescent = 4 << 20

// maxJSONDescent is MaxJSONDescent but in tests, which make their cases
// small.
var maxJSONDescent = MaxJSONDescent

// Reset makes b read raw, which must not change while b is in use.
func (b *JSONBody) Reset(raw []byte) { *b = JSONBody{raw: raw} }

// maxDepth bounds the nesting of a body decoded into a tree, as
// encoding/json's does.
const maxDepth = 10000

func (b *JSONBody) tree() (any, bool) {
	if !b.decoded {
		b.decoded = true
		s := unsafe.String(unsafe.SliceData(b.raw), len(b.raw))
		if gjson.Valid(s) {
			b.raws = map[unsafe.Pointer]string{}
			b.root, b.ok = b.build(gjson.Parse(s), 0)
		}
	}
	return b.root, b.ok
}

func (b *JSONBody) build(r gjson.Result, depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	b.descent += depth
	switch r.Type {
	case gjson.String:
		return r.Str, true
	case gjson.Number:
		return json.Number(r.Raw), true
	case gjson.True:
		return true, true
	case gjson.False:
		return false, true
	case gjson.Null:
		return nil, true
	}
	ok := true
	if r.IsArray() {
		a := []any{}
		r.ForEach(func(_, v gjson.Result) bool {
			var e any
			e, ok = b.build(v, depth+1)
			a = append(a, e)
			return ok
		})
		if len(a) > 0 {
			b.raws[unsafe.Pointer(unsafe.SliceData(a))] = r.Raw
		}
		return a, ok
	}
	m := map[string]any{}
	r.ForEach(func(k, v gjson.Result) bool {
		var e any
		e, ok = b.build(v, depth+1)
		if _, dup := m[k.Str]; !dup { // the first, as gjson reads it
			m[k.Str] = e
		}
		return ok
	})
	b.raws[reflect.ValueOf(m).UnsafePointer()] = r.Raw
	return m, ok
}

// Select appends the values the path selects in b to dst: in the order
// of their places (array items by index, object members by name), each
// as gjson gives it (String() is its text: a string unquoted, a number
// or an object as the body wrote it, null empty). Their strings may be
// parts of the body: a caller copies what it keeps.
func (p *JSONPath) Select(b *JSONBody, dst []gjson.Result) []gjson.Result {
	switch {
	case p.gjson != "":
		if r := gjson.Get(unsafe.String(unsafe.SliceData(b.raw), len(b.raw)), p.gjson); r.Exists() {
			dst = append(dst, r)
		}
		return dst
	case p.fast != nil:
		if r, ok := p.selectFast(b.raw); ok {
			dst = append(dst, r)
		}
		return dst
	}
	return p.selectTree(b, dst)
}

// selectFast reads a path of names and indexes with gjson, segment by
// segment: an index applies to arrays only and a name to objects only, as
// in RFC 9535 (gjson reads "0" of an object as its member "0").
func (p *JSONPath) selectFast(raw []byte) (gjson.Result, bool) {
	s := unsafe.String(unsafe.SliceData(raw), len(raw))
	cur := gjson.Result{Type: gjson.JSON, Raw: s}
	for _, sg := range p.fast {
		if sg.path != "@this" {
			first := firstByte(cur.Raw)
			if sg.index && first != '[' || !sg.index && first != '{' {
				return gjson.Result{}, false
			}
		}
		cur = cur.Get(sg.path)
		if !cur.Exists() {
			return cur, false
		}
	}
	cur.Indexes = nil
	return cur, true
}

func firstByte(s string) byte {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return s[i]
	}
	return 0
}

// Refusal says why p does not read b (a path with .. on a body nested
// past MaxJSONDescent, where it selects nothing), or is empty.
func (p *JSONPath) Refusal(b *JSONBody) string {
	if !p.deep {
		return ""
	}
	if _, ok := b.tree(); !ok || b.descent <= maxJSONDescent {
		return ""
	}
	return "the body's values are nested " + strconv.Itoa(b.descent) + " levels deep in all, past the " +
		strconv.Itoa(maxJSONDescent) + " that a JSON path with .. reads (plan.MaxJSONDescent)"
}

// selectTree selects with the RFC 9535 engine on the decoded body.
func (p *JSONPath) selectTree(b *JSONBody, dst []gjson.Result) []gjson.Result {
	root, ok := b.tree()
	if !ok || p.deep && b.descent > maxJSONDescent {
		return dst
	}
	nodes := p.rfc.SelectLocated(root)
	nodes.Sort()
	for _, n := range nodes {
		dst = append(dst, b.result(n.Node))
	}
	return dst
}

// SelectTree is Select by the RFC 9535 engine whatever the path, for
// the tests that compare the engines.
func (p *JSONPath) SelectTree(b *JSONBody, dst []gjson.Result) []gjson.Result {
	if p.rfc == nil {
		return p.Select(b, dst)
	}
	return p.selectTree(b, dst)
}

// result is a value of the tree as gjson would have read it.
func (b *JSONBody) result(v any) gjson.Result {
	switch v := v.(type) {
	case string:
		return gjson.Result{Type: gjson.String, Str: v, Raw: QuoteJSON(v)}
	case json.Number:
		f, _ := strconv.ParseFloat(string(v), 64)
		return gjson.Result{Type: gjson.Number, Num: f, Raw: string(v)}
	case bool:
		if v {
			return gjson.Result{Type: gjson.True, Raw: "true"}
		}
		return gjson.Result{Type: gjson.False, Raw: "false"}
	case nil:
		return gjson.Result{Type: gjson.Null, Raw: "null"}
	case []any:
		raw := "[]"
		if len(v) > 0 {
			raw = b.raws[unsafe.Pointer(unsafe.SliceData(v))]
		}
		return gjson.Result{Type: gjson.JSON, Raw: raw}
	case map[string]any:
		return gjson.Result{Type: gjson.JSON, Raw: b.raws[reflect.ValueOf(v).UnsafePointer()]}
	}
	return gjson.Result{}
}

// QuoteJSON is s as a JSON string, with <, > and & as they are.
func QuoteJSON(s string) string { return jsonString(s) }

// Value is what an expression's json() gives of a body: the one value p
// selects, a list when it selects several, nil when none.
func (p *JSONPath) Value(b *JSONBody) any {
	ms := p.Select(b, nil)
	switch len(ms) {
	case 0:
		return nil
	case 1:
		return ms[0].Value()
	}
	list := make([]any, len(ms))
	for i, m := range ms {
		list[i] = m.Value()
	}
	return list
}
