package expr

import (
	"strings"
	"testing"
)

// env is a VU's environment over vars, with a last response.
func env(vars map[string]string, r Response) *Env {
	return &Env{
		Response: r, VU: 3, Iteration: 7,
		Var:      func(n string) string { return vars[n] },
		VarNamed: func(n string) string { return vars[n] },
		Defined:  func(n string) bool { _, ok := vars[n]; return ok },
		JSON:     func(string) any { return nil },
		Header:   func(string) string { return "" },
		Random:   func() float64 { return 0.5 },
		IntN:     func(n int) int { return n - 1 },
	}
}

func TestConditions(t *testing.T) {
	vars := map[string]string{"okapi-token": "t", "count": "7", "id": "007", "name": "abc", "users.name": "ann", "price": "2.5", "empty": ""}
	e := env(vars, Response{Status: 201, Duration: 12.5, Size: 40, OK: true})
	for src, want := range map[string]bool{
		`count > 5`:                         true,
		`count >= 7 && count <= 7`:          true,
		`5 < count`:                         true,
		`count == 7`:                        true,
		`count != 7`:                        false,
		`count == "7"`:                      true,
		`id == "007"`:                       true, // text compares as text
		`id == 7`:                           true, // with a number, as a number
		`price * 2 == 5`:                    true,
		`count + 1 == 8`:                    true,
		`name startsWith "ab"`:              true,
		`name matches "^a.c$"`:              true,
		`len(name) == 3`:                    true,
		`users.name == "ann"`:               true,
		`response.status == 201`:            true,
		`response.status in [200, 201]`:     true,
		`response.duration < 100`:           true,
		`response.ok && response.size > 0`:  true,
		`response.error == ""`:              true,
		`vu == 3 && iteration == 7`:         true,
		`defined("count") && !defined("x")`: true,
		`random() < 0.6`:                    true,
		`randomString(3) == "999"`:          true, // the last character, as this env's source picks
		`randomString(2, "ab") == "bb"`:     true,
		`len(randomString(5, "éè")) == 5`:   true, // characters, not bytes
		`now().Year() > 2000`:               true,
		`empty == ""`:                       true,
		`let n = count; n > 6`:              true,
	} {
		p, err := Compile(src, Bool, func(n string) bool { _, ok := vars[n]; return ok })
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		got, err := p.Bool(e)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", src, got, err, want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	known := func(n string) bool { return n == "count" || n == "name" }
	for src, want := range map[string]string{
		`counts > 5`:         "counts is not defined here",
		`${count} > 5`:       "not as ${count}",
		`count >`:            "unexpected token",
		`name`:               "expected bool",
		`response.stat == 1`: "stat",
		`nosuch("x")`:        "nosuch",
	} {
		_, err := Compile(src, Bool, known)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", src, err, want)
		}
	}
	if _, err := Compile(`counts > 5`, Bool, known); err.(*Error).Col != 1 {
		t.Errorf("column %d", err.(*Error).Col)
	}
	if _, err := Compile(`count > 5 && bad`, Bool, known); err.(*Error).Col != 14 {
		t.Errorf("column %d, want 14", err.(*Error).Col)
	}
}

// A comparison with a number of a text that is no number is an error at
// run time, not false.
func TestRunErrors(t *testing.T) {
	p, err := Compile(`name > 5`, Bool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Bool(env(map[string]string{"name": "abc"}, Response{})); err == nil || !strings.Contains(err.Error(), `"abc" is not a number`) {
		t.Errorf("%v", err)
	}
}

func TestWhatIsRead(t *testing.T) {
	p, err := Compile(`json("$.a") == 1 && header("X-Id") != "" && header("ETag") != "" && count > 1 && users.name != "" && count > 2`, Bool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Body || strings.Join(p.Headers, ",") != "X-Id,ETag" || strings.Join(p.Vars, ",") != "count,users.name" {
		t.Errorf("body %v, headers %v, vars %v", p.Body, p.Headers, p.Vars)
	}
	if _, err := Compile(`response.status == 200 && header(name) == ""`, Bool, nil); err == nil || !strings.Contains(err.Error(), "in quotes") {
		t.Errorf("a header named at run time: %v", err)
	}
	p, _ = Compile(`response.status == 200`, Bool, nil)
	if p.Body || len(p.Headers) > 0 {
		t.Errorf("response.status reads body %v, headers %v", p.Body, p.Headers)
	}
	p, _ = Compile(`response.body contains "x"`, Bool, nil)
	if !p.Body {
		t.Error("response.body is not read")
	}
}

func TestValues(t *testing.T) {
	p, err := Compile(`int(n) * 2`, Any, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.Eval(env(map[string]string{"n": "4"}, Response{})); err != nil || v != 8 {
		t.Errorf("%v %v", v, err)
	}
}
