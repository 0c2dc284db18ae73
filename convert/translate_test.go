package convert

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/plan/expr"
)

// JMeter's conditions in their usual forms, as perflab's expressions
// (each compiles), or why not.
func TestConditions(t *testing.T) {
	for _, c := range []struct {
		cond        string
		useExpr     bool
		while       bool
		want, wants string // the expression, or what why says
	}{
		{`${__jexl3("${a}" == "x")}`, true, false, `(a == "x")`, ""},
		{`${__jexl3("${a}" eq "x" and ${n} gt 3,)}`, true, false, `((a == "x") && (n > 3))`, ""},
		{`${__jexl3(("${s}" == "A"||"${s}" == "B"),)}`, true, false, `((s == "A") || (s == "B"))`, ""},
		{`${__jexl3(${c} <= ${t_1},)}`, true, false, `(c <= t_1)`, ""},
		{`${__jexl3("${a}" =~ "x.*")}`, true, false, `(a matches "^(?:x.*)$")`, ""},
		{`${__groovy(vars.get("f").equals("v");)}`, true, false, `(f == "v")`, ""},
		{`${__groovy(!"NOT_FOUND".equals(vars.get("id")))}`, true, false, `!("NOT_FOUND" == id)`, ""},
		{`${__groovy( vars.get("u") != null && !vars.get("u").equals("") ;)}`, true, false, `(defined("u") && !(u == ""))`, ""},
		{`${__groovy(vars.get("t").toInteger() > 1800000)}`, true, false, `(int(t) > 1800000)`, ""},
		{`${__groovy((vars.get('c') as long) - (vars.get('e') as long) >= 0,)}`, true, false, `((int(c) - int(e)) >= 0)`, ""},
		{`${__groovy((new Random().nextInt(100) + 1) <= vars.get("p").toInteger();)}`, true, false, `((int(random() * 100) + 1) <= int(p))`, ""},
		{`${__groovy(vars.get("x").equalsIgnoreCase("Y"))}`, true, false, `(lower(x) == lower("Y"))`, ""},
		{`${__javaScript("${s}".indexOf("OK") == -1 && parseInt(vars.get("n")) < 30)}`, true, false, `(!(s contains "OK") && (int(n) < 30))`, ""},
		{`${__javaScript(!${JMeterThread.last_sample_ok})}`, true, false, `!response.ok`, ""},
		{`"${g}" == "checkout"`, false, false, `(g == "checkout")`, ""},
		{`${count} % 100 === 0`, false, false, `((int(count) % 100) == 0)`, ""},
		{`"${a}${b}" != "x"`, false, false, `((a + b) != "x")`, ""},
		{`${flag}`, true, false, `lower(trim(flag)) == "true"`, ""},
		{`${flag}`, false, false, `flag == "true"`, ""},
		{`${flag}`, false, true, `lower(trim(flag)) != "false"`, ""},
		{`${JMeterThread.last_sample_ok}`, true, false, `response.ok`, ""},
		{`${__P(go,true)}`, true, false, "", "the function __P"},
		{`Wait until done`, false, true, `true`, ""},
		{`${__groovy(new File("x").exists())}`, true, false, "", "new File"},
		{`${__groovy(vars.get("a").split(",")[0] == "x")}`, true, false, "", "the method split()"},
		{`${__jexl3("${a}" == "x") && "${b}" == "y"}`, true, false, "", "compares the whole text"},
	} {
		c2 := &converter{props: map[string]string{}, noted: map[[2]string]bool{}, data: map[string]*dataOut{}}
		got, why := c2.condition(c.cond, c.useExpr, c.while, nil)
		got = unmark(got)
		if !translated(t, c.cond, got, why, c.want, c.wants) {
			continue
		}
		if _, err := expr.Compile(got, expr.Bool, nil); err != nil {
			t.Errorf("%s: %q does not compile: %v", c.cond, got, err)
		}
	}
}

// translated reports whether in was translated into want, as the test
// wants (else it says so): or refused, why saying wantWhy, when that is
// given.
func translated(t *testing.T, in, got, why, want, wantWhy string) bool {
	t.Helper()
	switch {
	case wantWhy != "":
		if !strings.Contains(why, wantWhy) {
			t.Errorf("%s: %q, %q: want a refusal saying %q", in, got, why, wantWhy)
		}
		return false
	case got != want || why != "":
		t.Errorf("%s: %q (%s), want %q", in, got, why, want)
		return false
	}
	return true
}

// unmark writes the marks of an expression as their names.
func unmark(s string) string {
	return regexp.MustCompile("\x02.([^\x03]*)\x03").ReplaceAllString(s, "$1")
}

// Java's regexes as RE2's, or why not.
func TestJavaRegexes(t *testing.T) {
	for _, c := range []struct{ java, re2, why string }{
		{`"id":"(\w+)"`, `"id":"(\w+)"`, ""},
		{`[^"]++"`, `[^"]+"`, ""},
		{`(?>a+)b`, `(?:a+)b`, ""},
		{`\Q$1.00\E`, `\$1\.00`, ""},
		{`caf\u00e9`, `caf\x{00e9}`, ""},
		{`\p{Alpha}+\P{Digit}`, `[[:alpha:]]+[[:^digit:]]`, ""},
		{`a\hb`, `a[` + hSpace + `]b`, ""},
		{`(?U)\w+`, `\w+`, ""},
		{`(?i)token`, `(?i)token`, ""},
		{`x{2}+y`, `x{2}y`, ""},
		{`(?<n>\d+)`, `(?<n>\d+)`, ""},
		{`[a-z&&[^e]]`, "", "a class intersection"},
		{`(?=x)y`, "", "a lookahead"},
		{`(?<!x)y`, "", "a lookbehind"},
		{`(a)\1`, "", "a backreference"},
	} {
		got, why, _ := toRE2(c.java)
		if got != c.re2 || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s: %q (%s), want %q (%s)", c.java, got, why, c.re2, c.why)
			continue
		}
		if why == "" {
			if _, err := regexp.Compile(got); err != nil {
				t.Errorf("%s: %q: %v", c.java, got, err)
			}
		}
	}
}

// Values: functions perflab has are its placeholders, properties
// variables (a default __P gives 1), others literal text; JMeter's escapes
// in a value with ${ are undone.
func TestValues(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`${__P(users,10)}`, "\x00pusers\x01"},
		{`${__threadNum}-${__UUID()}`, "${vu}-${uuid}"},
		{`${__time()}`, "${timestamp_ms}"},
		{`${__time(,)}`, "${timestamp_ms}"},
		{`a\,b${x}`, "a,b\x00vx\x01"},
		{`a\,b`, `a\,b`},
		{`${__groovy(jwt(vars.getObject("k")\, vars.get("u")))}`, `$${__groovy(jwt(vars.getObject("k")\, vars.get("u")))}`},
		{`${__Random(1,${max})}-${__Random(1,${max})}`, "\x00g0\x01-\x00g1\x01"},
		{`${__Random(1,${a}${b})}`, `$${__Random(1,$${a}$${b})}`},
		{`${__log(${__P(host,localhost)})}`, "\x00phost\x01"},
		{`${__env(HOME,/root)}`, "${env.HOME:-/root}"},
		{`${a`, `$${a`},
	} {
		c2 := &converter{props: map[string]string{}, noted: map[[2]string]bool{}}
		if got := c2.value(c.in, nil); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
	// A query parameter JMeter does not encode: the function's value goes
	// in as it is too.
	c2 := &converter{props: map[string]string{}, noted: map[[2]string]bool{}}
	if got := c2.valueAs(`${__time(HH:mm)}`, nil, modeRaw); got != "\x00gr0\x01" {
		t.Errorf("a raw value's call is %q", got)
	}
}

// The functions JMeter computes each time they are read, as the
// expressions of perflab's set: steps (each compiles and gives what
// JMeter's gives), or why not: Java's date patterns as Go's layouts.
func TestFunctionExpressions(t *testing.T) {
	at := time.Date(2026, 3, 7, 14, 5, 9, 42_000_000, time.UTC)
	for _, c := range []struct {
		call, want, why string
		gives           string // what it gives at 2026-03-07 14:05:09.042 UTC, with random() 0.5
	}{
		{`${__RandomString(7)}`, `randomString(7)`, "", ""},
		{`${__RandomString(10, abcdefghijklmnopqrstuwxyz)}`, `randomString(10, "abcdefghijklmnopqrstuwxyz")`, "", ""},
		{`${__RandomString(5,abcdefgf123,)}`, `randomString(5, "abcdefgf123")`, "", ""},
		{`${__RandomString(${n})}`, "", "its length", ""},
		{`${__Random(0,999,)}`, `0 + int(random() * 1000)`, "", "500"},
		{`${__Random(1,${max})}`, `1 + int(random() * (int(max) - 1 + 1))`, "", "5"},
		{`${__Random(5,1)}`, "", "the wrong way round", ""},
		{`${__time(yyyy-MM-dd'T'hh:mm:ssX)}`, `now().Format("2006-01-02T03:04:05Z07")`, "", "2026-03-07T02:05:09Z"},
		{`${__time(yyyy-MM-dd'T'HH:mm:ss.SSS'Z',)}`, `now().Format("2006-01-02T15:04:05.000Z")`, "", "2026-03-07T14:05:09.042Z"},
		{`${__time(yyyy-MM-dd'T'HH:mm:ss.SSSZ)}`, `now().Format("2006-01-02T15:04:05.000-0700")`, "", "2026-03-07T14:05:09.042+0000"},
		{`${__time(dd MMM yyyy\, EEEE hh:mm a XXX)}`, `now().Format("02 Jan 2006, Monday 03:04 PM Z07:00")`, "", "07 Mar 2026, Saturday 02:05 PM Z"},
		{`${__time(''yy'')}`, `now().Format("'06'")`, "", "'26'"},
		{`${__time(HMS)}`, `now().Format("150405")`, "", "140509"},
		{`${__time(yyyy-MM-dd,)}`, `now().Format("2006-01-02")`, "", "2026-03-07"},
		{`${__time(/1000)}`, `now().Unix()`, "", ""},
		{`${__time(/60000,minute)}`, `int(now().UnixMilli() / 60000)`, "", ""},
		{`${__time(,stamp)}`, `now().UnixMilli()`, "", ""},
		{`${__time(H:mm)}`, "", `the field "H"`, ""},
		{`${__time(yyyyMMddHHmmssSSS)}`, "", `the field "SSS"`, ""},
		{`${__time('day 1' yyyy)}`, "", "holds digits", ""},
		{`${__time(EEE'day')}`, "", "run together", ""},
		{`${__time('T)}`, "", "an unclosed quote", ""},
	} {
		c2 := &converter{props: map[string]string{}, noted: map[[2]string]bool{}}
		p := scan(c.call)[0]
		got, why, _ := c2.genExpr(p, nil)
		got = unmark(got)
		if !translated(t, c.call, got, why, c.want, c.why) {
			continue
		}
		prog, err := expr.Compile(got, expr.Any, nil)
		if err != nil {
			t.Errorf("%s: %q does not compile: %v", c.call, got, err)
			continue
		}
		if c.gives == "" {
			continue
		}
		// now() is the clock's: the layout is checked with Go's Format.
		if layout, ok := strings.CutPrefix(got, `now().Format(`); ok {
			layout, _ = strconv.Unquote(strings.TrimSuffix(layout, ")"))
			if s := at.Format(layout); s != c.gives {
				t.Errorf("%s: %q writes %q, want %q", c.call, layout, s, c.gives)
			}
			continue
		}
		env := &expr.Env{Var: func(string) string { return "9" }, Random: func() float64 { return 0.5 }}
		v, err := prog.Eval(env)
		if err != nil || fmt.Sprint(v) != c.gives {
			t.Errorf("%s: %q gives %v (%v), want %s", c.call, got, v, err, c.gives)
		}
	}
}

// Scripts that only give variables text or other variables' values are
// set: steps; a post-processor that picks an extractor's last match is
// match: last; others are neither.
func TestScripts(t *testing.T) {
	for _, c := range []struct {
		src, want string // the sets as name=expression, or "" for none
	}{
		{`vars.put("POLICIES_UNDEPLOYED", "NotSet")`, `POLICIES_UNDEPLOYED="NotSet"`},
		{"vars.put(\"loopCondition\", \"true\");\nvars.put(\"primeState\", \"\");\n// reset\nvars.put('a', vars.get('b'));\nlog.info(\"done\")", `loopCondition="true" primeState="" a=b`},
		{"/* set */ vars.put(\"x\", \"1\"); vars.put(\"x\", \"2\")", `x="2"`},
		{`vars.put("x", "${y}")`, ""},
		{`vars.put("x", "a\"b")`, ""},
		{`vars.put("x", y)`, ""},
		{`vars.put("user_found", "user_not_found"); if (x) vars.put("y", "z")`, ""},
		{`String s = vars.get("a"); vars.put("b", s)`, ""},
		{`vars.put("x", "unclosed)`, ""},
		{``, ""},
	} {
		sets, ok := scriptSets(c.src)
		var got []string
		for _, kv := range sets {
			got = append(got, kv.K+"="+unmark(kv.V.(string)))
		}
		if strings.Join(got, " ") != c.want || ok != (c.want != "") {
			t.Errorf("%q: %q (%v), want %q", c.src, got, ok, c.want)
		}
	}
	for src, want := range map[string]string{
		"def n = (vars.get('csrfToken_matchNr') ?: '0') as int\nif (n > 0) vars.put('csrfToken', vars.get(\"csrfToken_${n}\"))\n": "csrfToken",
		"int n = Integer.parseInt(vars.get(\"t_matchNr\"));":                                                                      "",
		`vars.put("t", vars.get("t_" + vars.get("t_matchNr")));`:                                                                  "t",
		`vars.put("t", vars.get("u_" + vars.get("t_matchNr")));`:                                                                  "",
		"def n = (vars.get('a_matchNr') ?: '0') as int\nif (n > 0) vars.put('b', vars.get(\"a_${n}\"))":                           "",
	} {
		if got := pickLast(src); got != want {
			t.Errorf("%q picks the last match of %q, want %q", src, got, want)
		}
	}
}
