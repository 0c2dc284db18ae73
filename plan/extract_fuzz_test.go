package plan_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/plan"
	phttp "github.com/perflab/perflab/protocol/http"
)

func noHeader(string) ([]byte, bool) { return nil, false }

// extract applies one extraction to a body as a step does.
func extract(t *testing.T, ex *plan.Extract, body []byte) (string, bool) {
	t.Helper()
	ex.Name = "x"
	xs, err := phttp.CompileExtracts("fuzz", []*plan.Extract{ex})
	if err != nil {
		return "", false
	}
	v := testenv.Vars{}
	_, _ = xs.Apply(noHeader, body, v)
	s, ok := v["x"]
	return s, ok
}

// simplePath splits $.a.b[0]['odd.key'] into names and indexes; ok is
// false for wildcards and names that start with a digit (gjson reads
// those as indexes).
var simpleSeg = regexp.MustCompile(`^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]{1,6})\]|\['([^'\]]*)'\])`)

func walk(doc any, path string) (any, bool, bool) {
	if !strings.HasPrefix(path, "$") {
		return nil, false, false
	}
	rest, cur := path[1:], doc
	for rest != "" {
		m := simpleSeg.FindStringSubmatch(rest)
		if m == nil {
			return nil, false, false
		}
		rest = rest[len(m[0]):]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return nil, false, false // $.content-type: a name the regex cut short
		}
		switch {
		case m[2] != "":
			arr, isArr := cur.([]any)
			if !isArr {
				return nil, false, false // gjson reads [0] of an object as its key "0"
			}
			i, _ := strconv.Atoi(m[2])
			if i >= len(arr) {
				return nil, false, true
			}
			cur = arr[i]
		default:
			name := m[1] + m[3]
			if name == "" || name[0] >= '0' && name[0] <= '9' {
				return nil, false, false
			}
			obj, isObj := cur.(map[string]any)
			if !isObj {
				return nil, false, true
			}
			if cur, isObj = obj[name]; !isObj {
				return nil, false, true
			}
		}
	}
	return cur, true, true
}

// Any path is a plan error or selects values, on any body, without a
// panic; on valid JSON, a path that gjson reads (names and indexes)
// selects what the RFC 9535 engine selects, and for simple paths agrees
// with encoding/json: found where it finds a value, the string itself for
// a string, the JSON text otherwise.
func FuzzJSONPathExtract(f *testing.F) {
	for _, c := range [][2]string{
		{`{"id":"c0a8","status":{"name":"Open"},"items":[{"id":1},{"id":2}]}`, "$.status.name"},
		{`{"id":"c0a8","items":[{"id":1},{"id":2}]}`, "$.items[1].id"},
		{`{"odd.key":{"x":"y"}}`, "$['odd.key'].x"},
		{`{"a*b":{"c|d":"#"}}`, "$['a*b']['c|d']"},
		{`{"list":[{"id":"a"},{"id":"b"}]}`, "$.list[*].id"},
		{`{"anchors":[{"name":"anchor-1-0","dataspace":"perf"}]}`, "$.anchors[0]"},
		{`[1,2,3]`, "$[2]"},
		{`{"n":1.50e3,"t":true,"z":null}`, "$.n"},
		{`{"n":1.50e3,"t":true,"z":null}`, "$.t"},
		{`{"a":"x","a":"y"}`, "$.a"},
		{`{"s":"\u00e9\"\\ \ud83d\ude00"}`, "$.s"},
		{`{"items":[{"id":1,"state":"OPEN"},{"id":2,"state":"CLOSED"}]}`, "$.items[?@.state=='OPEN'].id"},
		{`{"a":{"username":"x","b":{"username":"y"}}}`, "$..username"},
		{`[0,1,2,3,4,5]`, "$[1:5:2]"},
		{`{"a":1,"b":[2,3]}`, "$['a','b'][*]"},
		{`{"items":[{"n":3},{"n":10}]}`, "$.items[?@.n > 5 && length(@) == 1]"},
		{`{"x":"abc"}`, "$[?match(@, 'a.*')]"},
		{`{"list":{"0":"key"},"arr":["index"]}`, "$.list[0]"},
		{`{"a":[[[[1]]]]}`, "$..*"},
		{`{"content-type":"json"}`, "$.content-type"},
		{`{"a":1}`, "$[?@.a = 1]"},
	} {
		f.Add([]byte(c[0]), c[1])
	}
	f.Fuzz(func(t *testing.T, raw []byte, path string) {
		p, err := plan.ParseJSONPath(path)
		if err != nil {
			return // any path: a plan error or a result
		}
		extract(t, &plan.Extract{JSON: path}, raw) // any body: no panic
		var tree plan.JSONBody
		tree.Reset(raw)
		p.SelectTree(&tree, nil)
		if !json.Valid(raw) {
			return
		}
		// A path that gjson reads selects what the RFC 9535 engine does.
		if p.Fast() && strings.HasPrefix(path, "$") {
			var a, b plan.JSONBody
			a.Reset(raw)
			b.Reset(raw)
			fast, slow := p.Select(&a, nil), p.SelectTree(&b, nil)
			if len(fast) != len(slow) || len(fast) == 1 && (fast[0].Type != slow[0].Type || fast[0].String() != slow[0].String()) {
				t.Fatalf("%s in %s: gjson selects %v, RFC 9535 %v", path, raw, fast, slow)
			}
		}
		// The same document as encoding/json writes it: no duplicate keys.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc any
		if dec.Decode(&doc) != nil {
			return
		}
		canon, err := json.Marshal(doc)
		if err != nil {
			return
		}
		want, found, simple := walk(doc, path)
		if !simple {
			return
		}
		got, ok := extract(t, &plan.Extract{JSON: path}, canon)
		if ok != found {
			t.Fatalf("%s in %s: extracted %v (%q), encoding/json found %v", path, canon, ok, got, found)
		}
		if !found {
			return
		}
		if s, isStr := want.(string); isStr {
			if got != s {
				t.Fatalf("%s in %s: extracted %q, want %q", path, canon, got, s)
			}
			return
		}
		if want == nil {
			return // gjson gives null as ""
		}
		if n, isNum := want.(json.Number); isNum {
			w, err1 := n.Float64()
			g, err2 := strconv.ParseFloat(got, 64)
			if err1 == nil && (err2 != nil || g != w) {
				t.Fatalf("%s in %s: extracted %s, want %s", path, canon, got, n)
			}
			return
		}
		if w, _ := json.Marshal(want); got != string(w) {
			t.Fatalf("%s in %s: extracted %s, want %s", path, canon, got, w)
		}
	})
}

// A regex extraction takes part of the body, group 1 when there is one;
// a literal in the body is found; a default stands in for a miss.
func FuzzRegexExtract(f *testing.F) {
	f.Add([]byte(`<a href="/login?token=abc123&x=1">`), `token=(\w+)`, "abc123")
	f.Add([]byte("Location: /anchors/42\r\n"), `/anchors/(\d+)`, "/anchors/")
	f.Add([]byte(`{"id":"c0a8"}`), `"id":"([^"]*)"`, `"id"`)
	f.Add([]byte("no match"), `(x)(y)?`, "no")
	f.Fuzz(func(t *testing.T, body []byte, re, literal string) {
		if re == "" || len(re) > 200 { // a plan refuses an empty regex
			return
		}
		if got, ok := extract(t, &plan.Extract{Regex: re}, body); ok && !bytes.Contains(body, []byte(got)) {
			t.Fatalf("%q extracted %q, which is not in the body %q", re, got, body)
		}
		none := "none"
		if _, ok := extract(t, &plan.Extract{Regex: re, Default: &none}, body); !ok {
			if _, err := regexp.Compile(re); err == nil {
				t.Fatalf("%q with a default extracted nothing", re)
			}
		}
		// Go's regexp reads invalid UTF-8 as U+FFFD, in the pattern and the body alike.
		if literal == "" || !utf8.ValidString(literal) || !bytes.Contains(body, []byte(literal)) {
			return
		}
		if got, ok := extract(t, &plan.Extract{Regex: "(" + regexp.QuoteMeta(literal) + ")"}, body); !ok || got != literal {
			t.Fatalf("literal %q in %q: extracted %q, %v", literal, body, got, ok)
		}
	})
}
