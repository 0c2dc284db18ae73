package convert

import (
	"regexp"
	"strings"
	"testing"

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
		if c.wants != "" {
			if !strings.Contains(why, c.wants) {
				t.Errorf("%s: %q, %q: want a refusal saying %q", c.cond, got, why, c.wants)
			}
			continue
		}
		if got != c.want || why != "" {
			t.Errorf("%s: %q (%s), want %q", c.cond, got, why, c.want)
			continue
		}
		if _, err := expr.Compile(got, expr.Bool, nil); err != nil {
			t.Errorf("%s: %q does not compile: %v", c.cond, got, err)
		}
	}
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
		{`${__Random(1,${max})}`, `$${__Random(1,$${max})}`},
		{`${__log(${__P(host,localhost)})}`, "\x00phost\x01"},
		{`${__env(HOME,/root)}`, "${env.HOME:-/root}"},
		{`${a`, `$${a`},
	} {
		c2 := &converter{props: map[string]string{}, noted: map[[2]string]bool{}}
		if got := c2.value(c.in, nil); got != c.want {
			t.Errorf("%s: %q, want %q", c.in, got, c.want)
		}
	}
}
