package plan

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func selectAll(t testing.TB, path, doc string, tree bool) []string {
	t.Helper()
	p, err := ParseJSONPath(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var b JSONBody
	b.Reset([]byte(doc))
	var rs []gjson.Result
	if tree {
		rs = p.SelectTree(&b, nil)
	} else {
		rs = p.Select(&b, nil)
	}
	var out []string
	for _, r := range rs {
		out = append(out, r.Type.String()+":"+r.String())
	}
	return out
}

const storeDoc = `{
  "store": {"name": "Corner", "open": true, "closed": null, "odd.key": {"x": "y"}, "content-type": "json",
    "items": [
      {"id": "a1", "state": "OPEN",   "price": 8.95, "tags": ["x", "y"], "owner": {"username": "ann"}},
      {"id": "b2", "state": "CLOSED", "price": 12.5, "tags": [],         "owner": {"username": "bob"}},
      {"id": "c3", "state": "OPEN",   "price": 1e2,  "tags": ["z"],      "owner": {"username": "cat", "nested": {"username": "dee"}}}
    ],
    "obj": {"z": 1,  "a": [1, 2]}
  },
  "n": 1.50e3, "big": 12345678901234567890, "esc": "\u00e9\"\\ \ud83d\ude00", "": "empty"
}`

// The paths RFC 9535 adds: filters, recursive descent, slices, wildcards,
// unions, negative indexes, names in brackets.
func TestJSONPathRFC9535(t *testing.T) {
	for path, want := range map[string]string{
		`$.store.items[?@.state=='OPEN'].id`:           "String:a1 String:c3",
		`$.store.items[?(@.price > 10)].id`:            "String:b2 String:c3",
		`$..username`:                                  "String:ann String:bob String:dee String:cat", // by place: nested before username
		`$.store.items[0:2].id`:                        "String:a1 String:b2",
		`$.store.items[::-1].id`:                       "String:a1 String:b2 String:c3", // in the order of their places
		`$.store.items[-1].id`:                         "String:c3",
		`$.store.items[*].tags[*]`:                     "String:x String:y String:z",
		`$.store.items[0,2].id`:                        "String:a1 String:c3",
		`$.store['name','open']`:                       "String:Corner True:true",
		`$.store.obj`:                                  `JSON:{"z": 1,  "a": [1, 2]}`,
		`$.store.obj.*`:                                "JSON:[1, 2] Number:1", // members by name: a, z
		`$.store.items[?@.tags[0]=='z'].owner`:         `JSON:{"username": "cat", "nested": {"username": "dee"}}`,
		`$.store.items[?length(@.tags) == 0].id`:       "String:b2",
		`$.store.items[?match(@.id, '[ab].*')].id`:     "String:a1 String:b2",
		`$.store.items[?search(@.state, 'CLO')].id`:    "String:b2",
		`$.store.closed`:                               "Null:",
		`$.store.missing`:                              "",
		`$['']`:                                        "String:empty",
		`$.store.items[?@.state=='GONE'].id`:           "",
		`$.n`:                                          "Number:1500",
		`$.esc`:                                        "String:é\"\\ 😀",
		`$.store.items[?@.owner.username=='bob'].tags`: "JSON:[]",
	} {
		got := strings.Join(selectAll(t, path, storeDoc, false), " ")
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
}

// A path of names and indexes is read by gjson without decoding the
// body, and selects what the RFC 9535 engine selects: the same values,
// with the same texts (a number and an object as the body wrote them).
func TestJSONPathEngines(t *testing.T) {
	docs := []string{
		storeDoc,
		`[1, "two", {"3": "three"}, [4], null]`,
		`{"0": "zero", "list": {"0": "key"}, "arr": ["index"]}`,
		`{"a": {"b": {"c": [10, 20, {"d": "deep"}]}}}`,
		`{"a*b": {"c|d": "#"}, "x.y": 1, "@m": 2, "h#": 3, "q?": 4, "e=": 5, "p%": 6, "b\\s": 7, "sp ace": 8}`,
		`{"dup": 1, "dup": 2}`,
		`"scalar"`,
		`{}`,
	}
	paths := []string{
		"$", "$.store", "$.store.name", "$.store.open", "$.store.closed", "$.store.items", "$.store.items[0]",
		"$.store.items[2].owner.nested.username", "$.store.items[5]", "$.store.obj", "$.store.obj.a[1]",
		"$.store['odd.key'].x", "$.store['content-type']", "$.n", "$.big", "$.esc", "$.nope.deeper",
		"$[0]", "$[1]", "$[2]", "$[2]['3']", "$[3][0]", "$[4]", "$[9]",
		"$['0']", "$[0]", "$.list['0']", "$.list[0]", "$.arr[0]", "$.arr['0']",
		"$.a.b.c[2].d", "$.a.b.c[0]", "$.a.b",
		"$['a*b']['c|d']", "$['x.y']", "$['@m']", "$['h#']", "$['q?']", "$['e=']", "$['p%']", `$['b\\s']`, "$['sp ace']",
		"$.dup",
	}
	for _, doc := range docs {
		for _, path := range paths {
			p, err := ParseJSONPath(path)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !p.Fast() {
				t.Fatalf("%s is not read by gjson", path)
			}
			fast := strings.Join(selectAll(t, path, doc, false), " ")
			tree := strings.Join(selectAll(t, path, doc, true), " ")
			if fast != tree {
				t.Errorf("%s in %s: gjson %q, RFC 9535 %q", path, doc, fast, tree)
			}
		}
	}
}

// Paths as perflab read them before RFC 9535 read as they did; other
// paths that are not RFC 9535 are errors that say where.
func TestJSONPathLegacyAndErrors(t *testing.T) {
	for path, want := range map[string]string{
		"$.store['content-type']":         "String:json",
		"$.store.content-type":            "String:json",
		"$.store.items.0.id":              "String:a1",
		`$.store["odd.key"].x`:            "String:y",
		"$.store.items[1].owner.username": "String:bob",
	} {
		if got := strings.Join(selectAll(t, path, storeDoc, false), " "); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	// gjson's syntax, without $.
	if got := strings.Join(selectAll(t, "store.items.#.id", storeDoc, false), " "); got != `JSON:["a1","b2","c3"]` {
		t.Errorf("gjson path = %q", got)
	}
	for path, want := range map[string]string{
		"$.":                  `JSON path "$.": unexpected`,
		"$[x]":                `JSON path "$[x]": unexpected identifier at position 3`,
		"$.a[1":               `JSON path "$.a[1"`,
		"$x":                  `JSON path "$x"`,
		"$.items[?@.a=='x'":   `JSON path "$.items[?@.a=='x'"`,
		"$.items[?@.a = 'x']": `JSON path "$.items[?@.a = 'x']"`,
		"":                    "empty JSON path",
	} {
		_, err := ParseJSONPath(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJSONPath(%q) = %v, want %q", path, err, want)
		}
	}
}

var benchDoc = []byte(`{"id":"c0a8","status":{"name":"Open","code":3},"items":[` + strings.Repeat(`{"id":1,"name":"item","tags":["a","b"]},`, 40) + `{"id":2}],"owner":{"name":"x"}}`)

// The gjson fast path against the RFC 9535 engine on the same path, a
// body of 1.6 KB: what a check or an extraction of a simple path costs a
// request.
func BenchmarkJSONPath(b *testing.B) {
	p, err := ParseJSONPath("$.owner.name")
	if err != nil {
		b.Fatal(err)
	}
	var buf [4]gjson.Result
	b.Run("gjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var body JSONBody
			body.Reset(benchDoc)
			if r := p.Select(&body, buf[:0]); len(r) != 1 {
				b.Fatal(r)
			}
		}
	})
	b.Run("rfc9535", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var body JSONBody
			body.Reset(benchDoc)
			if r := p.SelectTree(&body, buf[:0]); len(r) != 1 {
				b.Fatal(r)
			}
		}
	})
}

// Issue 37: $..* on a body of 9,000 arrays nested in each other (18 KB)
// allocated 1.3 GB in 11 s: a descendant segment copies each value once
// for each level it is nested at. A path with .. reads a body whose
// values nest at most plan.MaxJSONDescent levels in all (a smaller limit
// here, so that the case is small); another path reads it as before.
func TestDescendantPathBounded(t *testing.T) {
	defer func(n int) { maxJSONDescent = n }(maxJSONDescent)
	maxJSONDescent = 100000
	deep := []byte(strings.Repeat("[", 500) + "1" + strings.Repeat("]", 500)) // 125,250 in all
	var b JSONBody
	b.Reset(deep)
	p, err := ParseJSONPath("$..*")
	if err != nil {
		t.Fatal(err)
	}
	var got []gjson.Result
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	why := p.Refusal(&b)
	got = p.Select(&b, got)
	runtime.ReadMemStats(&m1)
	if !strings.Contains(why, "125250") || !strings.Contains(why, "plan.MaxJSONDescent") || len(got) != 0 {
		t.Errorf("refused %q, selected %d values; want a refusal and none", why, len(got))
	}
	if used := m1.TotalAlloc - m0.TotalAlloc; used > 1<<20 {
		t.Errorf("allocated %d bytes for a body of %d", used, len(deep))
	}
	if p, _ := ParseJSONPath("$[0][0][0]"); p.Refusal(&b) != "" || len(p.Select(&b, nil)) != 1 {
		t.Errorf("a path without .. is refused")
	}
	b.Reset([]byte(strings.Repeat("[", 400) + "1" + strings.Repeat("]", 400))) // 80,200
	if why, got := p.Refusal(&b), p.Select(&b, nil); why != "" || len(got) != 400 {
		t.Errorf("within the limit: refused %q, %d values", why, len(got))
	}
}
