package plan

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Every threshold of the README and the tests, and the plans'.
var thresholdSeeds = []string{
	"p95 < 500ms", "check-out: p75 <= 2s", "errors < 0.1%", "total: rps > 800", "errors < 5% abort",
	"p75 regression vs release=Goldenrod < 10%", "check-in: rps regression vs release=R1 <= 5%",
	"GET /a b: max >= 1.5s", "errors <= 0.7%", "p999 < 1.25us", "rps >= 10/s", "a:b: p50 < 1ms",
	"p75 regression vs release=A <= 0.7%", "mean > 0.000001ms", " p90<2m ",
	"dropped < 1%", "dropped == 0", "total: dropped <= 0.7% abort", "browse: dropped < 10", "errors == 0",
	"p95(ko) < 2s", "a (b): p99( all ) <= 1s abort", "p50(ok) < 3ms", "x(ko): mean(ko) > 1ms",
}

// A threshold read, written (String) and read again is the same threshold,
// and its text is stable from then on.
func FuzzThreshold(f *testing.F) {
	for _, s := range thresholdSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		text := th.String()
		back, err := ParseThreshold(text)
		if err != nil {
			t.Fatalf("%q read as %+v, written %q, which does not read: %v", s, th, text, err)
		}
		back.Source, th.Source = "", ""
		if *back != *th {
			t.Fatalf("%q read as %+v, written %q, read back as %+v", s, th, text, back)
		}
		if again := back.String(); again != text {
			t.Fatalf("%q written %q, then %q", s, text, again)
		}
	})
}

// A --set override either is refused with a plan error (on the command
// line or where the variable is used) or is the value the plan runs with:
// a scalar as it was given, a list as a sweep of its values.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"users=20", "size=[100, 200, 300]", "users=[1,5,8,20]", "users=", "ds=perf x", "size=[]", "users=${env.X}", "userz=3", "=1", "size=[a, [b]]"} {
		f.Add(s)
	}
	src, err := os.ReadFile("testdata/valid/full.yaml")
	if err != nil {
		f.Fatal(err)
	}
	env := func(k string) (string, bool) { return "x", k == "CPS_AUTH" }
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOverride(s)
		if err != nil {
			if strings.Contains(s, "=") && strings.TrimSpace(s[:strings.Index(s, "=")]) != "" {
				t.Fatalf("%q refused: %v", s, err)
			}
			return
		}
		p, err := Parse(src, "testdata/valid/full.yaml", Options{LookupEnv: env, Set: []Override{o}})
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("%q: error of type %T: %v", s, err, err)
			}
			return
		}
		var v *Var
		for _, x := range p.Vars {
			if x.Name == o.Name {
				v = x
			}
		}
		if v == nil {
			t.Fatalf("%q: accepted, but the plan has no such variable", s)
		}
		val := strings.TrimSpace(o.Value)
		if isList := strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]"); isList != v.List || !isList && (len(v.Values) != 1 || v.Values[0] != o.Value) {
			t.Fatalf("%q: the variable is %+v", s, v)
		}
		p.Stages() // must not panic on any accepted plan
	})
}
