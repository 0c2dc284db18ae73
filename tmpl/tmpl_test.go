package tmpl

import (
	"errors"
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
