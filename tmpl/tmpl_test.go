package tmpl

import (
	"errors"
	"strings"
	"testing"
)

func vars(m map[string]string) Lookup {
	return LookupFunc(func(n string) (string, bool) { v, ok := m[n]; return v, ok })
}

func TestExpand(t *testing.T) {
	l := vars(map[string]string{"vu": "3", "iteration": "17", "users.login": "ann", "env.HOME": "/root"})
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{"anchor-${vu}-${iteration}", "anchor-3-17"},
		{"${users.login}", "ann"},
		{"${ vu }", "3"},
		{"${missing:-dflt}", "dflt"},
		{"${vu:-dflt}", "3"},
		{"${missing:-}", ""},
		{"${missing:-$${missing}}", "${missing}"}, // a default that is the placeholder's text
		{"${vu:-$${vu}}/x", "3/x"},
		{"a ${missing:-b $${c} d} e", "a b ${c} d e"},
		{"cost $5 and $${vu}", "cost $5 and ${vu}"},
		{"${env.HOME}/x", "/root/x"},
	}
	for _, c := range cases {
		tp, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		got, err := tp.Expand(l)
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		b, err := tp.AppendTo([]byte(">"), l)
		if err != nil || string(b) != ">"+c.want {
			t.Errorf("AppendTo(%q) = %q, %v", c.in, b, err)
		}
	}
}

func TestUndefined(t *testing.T) {
	tp := MustParse("a-${nope}")
	_, err := tp.Expand(vars(nil))
	var ue *UndefinedError
	if !errors.As(err, &ue) || ue.Name != "nope" {
		t.Fatalf("got %v, want UndefinedError for nope", err)
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		in     string
		offset int
	}{
		{"abc ${vu", 4},
		{"${}", 0},
		{"x${a b}", 1},
		{"${a..b}", 0},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != c.offset {
			t.Errorf("Parse(%q) = %v; want SyntaxError at %d", c.in, err, c.offset)
		}
	}
}

func TestRefs(t *testing.T) {
	tp := MustParse("/a/${ds}/b/${anchor:-x}")
	refs := tp.Refs()
	if len(refs) != 2 || refs[0].Name != "ds" || refs[0].Offset != 3 || refs[1].Name != "anchor" || !refs[1].HasFallback {
		t.Fatalf("Refs = %+v", refs)
	}
	if tp.IsLiteral() || !MustParse("lit").IsLiteral() {
		t.Fatal("IsLiteral wrong")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"a${b}c", "${x:-y}", "$${", "${", "${a.b.c}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := Parse(s)
		if err != nil {
			return
		}
		// Every placeholder resolves to its name: expansion must not fail or panic.
		out, err := tp.Expand(LookupFunc(func(n string) (string, bool) { return n, true }))
		if err != nil {
			t.Fatalf("Expand: %v", err)
		}
		if tp.IsLiteral() && len(tp.Refs()) != 0 {
			t.Fatal("literal with refs")
		}
		_ = out
	})
}

// A URL's substituted values are escaped by where they land: as they are
// before the path (a base URL, a host), path-segment escaping in the path,
// query escaping in the query; literal text and ${raw:...} are kept.
func TestAppendURL(t *testing.T) {
	l := vars(map[string]string{"base": "http://127.0.0.1:8080/api", "host": "h:1", "v": `a b"c<d>%#?/é`, "p": "/x/y", "id": "7"})
	cases := []struct{ in, want string }{
		{"${base}/items/${id}", "http://127.0.0.1:8080/api/items/7"},
		{"${base}/q/${v}", "http://127.0.0.1:8080/api/q/a%20b%22c%3Cd%3E%25%23%3F%2F%C3%A9"},
		{"${base}/q?v=${v}&w=${v}", "http://127.0.0.1:8080/api/q?v=a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9&w=a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9"},
		{"http://${host}/${v}", "http://h:1/a%20b%22c%3Cd%3E%25%23%3F%2F%C3%A9"},
		{"${base}${p}", "http://127.0.0.1:8080/api%2Fx%2Fy"}, // the base has its path: p is one segment of it
		{"${base}${raw:p}", "http://127.0.0.1:8080/api/x/y"},
		{"http://${host}${p}?a=${raw:p}", "http://h:1/x/y?a=/x/y"}, // before the path: as it is
		{"${base}/files/${raw:p}/lit eral?q=${raw:v}", "http://127.0.0.1:8080/api/files//x/y/lit eral?q=" + `a b"c<d>%#?/é`},
		{"/rel/${v}", "/rel/a%20b%22c%3Cd%3E%25%23%3F%2F%C3%A9"},
		{"${base}/x#${v}", "http://127.0.0.1:8080/api/x#a+b%22c%3Cd%3E%25%23%3F%2F%C3%A9"},
		{"${base}/x/${missing:-a b}", "http://127.0.0.1:8080/api/x/a%20b"},
		{"${raw:missing:-a b}", "a b"},
	}
	for _, c := range cases {
		tp, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		got, err := tp.AppendURL([]byte("prefix "), l)
		if err != nil || string(got) != "prefix "+c.want {
			t.Errorf("AppendURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		// Elsewhere than a URL, nothing is escaped; raw: names the variable.
		if s, err := tp.Expand(l); err != nil || strings.Contains(c.in, "${raw:") && strings.Contains(s, "raw:") {
			t.Errorf("Expand(%q) = %q, %v", c.in, s, err)
		}
	}
	if tp := MustParse("/x/${raw:v}"); len(tp.Refs()) != 1 || tp.Refs()[0].Name != "v" {
		t.Errorf("the refs of ${raw:v}: %+v", tp.Refs())
	}
	if _, err := Parse("${raw:}"); err == nil {
		t.Error("${raw:} parsed")
	}
}
