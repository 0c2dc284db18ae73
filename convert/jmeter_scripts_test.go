package convert_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/plan"
)

// A plan whose only notes are its scripts loads as converted: each script
// that does more than give variables values is listed once, with its path and what in perflab does what it is
// commonly for; a variable only a script sets is a variable of the plan,
// empty until --set gives it.
func TestConvertScriptsOnly(t *testing.T) {
	script := func(tag, name, code string) string {
		return el(tag, name, sp("scriptLanguage", "groovy")+sp("script", code))
	}
	jmx := testPlan("scripts", "", 1,
		script("JSR223Sampler", "pick", `vars.put("branch", new Random().nextInt(2) == 0 ? "a" : "b")`),
		el("IfController", "branch a", sp("IfController.condition", `${__jexl3("${branch}" == "a")}`)+bp("IfController.useExpression", true),
			get("a", "/a/${branch}", script("JSR223PostProcessor", "token", `vars.put("token", prev.getResponseDataAsString())`),
				script("JSR223Assertion", "judge", `AssertionResult.setFailure(false)`))),
		get("b", "/b?t=${token}", script("JSR223PreProcessor", "sign", `vars.put("sig", vars.get("branch").md5())`)),
	)
	res, dir := convertJMX(t, jmx)
	path := filepath.Join(dir, "plan.yaml")
	os.WriteFile(path, res.Plan, 0o644)
	if _, err := plan.Load(path, plan.Options{}); err != nil {
		t.Fatalf("the plan does not load: %v\n%s", err, res.Plan)
	}
	for name, what := range map[string]string{
		"pick":  "a script sampler (groovy): scripts do not run in perflab; a request it makes is a step, a value it computes a variable (perflab run --set) or a data source, a branch it picks an if: or choose:",
		"token": "a script run after each sampler in its scope (groovy): scripts do not run in perflab; a value it takes from a response is an extract",
		"judge": "a script that judges each response (groovy): check.that asserts on",
		"sign":  "a script run before each sampler in its scope (groovy)",
		"a":     "${token}: TestPlan \"scripts\" / ThreadGroup \"users\" / IfController \"branch a\" / HTTPSamplerProxy \"a\" / JSR223PostProcessor \"token\", not converted, sets it",
	} {
		if !hasNote(res, name, what) {
			t.Errorf("no note of %s saying %q: %q", name, what, res.Skipped)
		}
	}
	if !strings.Contains(string(res.Plan), "branch: \"\"") || !strings.Contains(string(res.Plan), `if: (branch == "a")`) {
		t.Errorf("the script's variable is not the plan's:\n%s", res.Plan)
	}
	if res.Elements.Dropped != nil || res.Elements.Converted != 6 || res.Elements.Listed != 4 {
		t.Errorf("elements: %+v, want 6 converted (the test plan, its defaults, the thread group, the If, two samplers), 4 listed", res.Elements)
	}
}

// regex is a Regular Expression Extractor of name's first group, match
// number match.
func regex(name, re, match string) string {
	return el("RegexExtractor", name, sp("RegexExtractor.refname", name)+sp("RegexExtractor.regex", re)+sp("RegexExtractor.template", "$1$")+
		sp("RegexExtractor.match_number", match)+sp("RegexExtractor.default", ""))
}

// Scripts that only give variables text or other variables' values are
// set: steps: a script sampler in its place, a pre-processor before each
// sampler in its scope, a post-processor after; a post-processor that
// puts the last of a regex's matches (match number -1) in its variable
// makes the extraction match: last. A While Controller reads its
// variables by name at each check: one a script resets before the loop
// (NotSet), and a User Defined Variable that the loop's extractor sets,
// which JMeter reads as its value until then and as the last extracted
// after, in later iterations too (the loop then runs no pass).
func TestConvertSimpleScripts(t *testing.T) {
	script := func(tag, name, code string) string {
		return el(tag, name, sp("scriptLanguage", "groovy")+sp("script", code))
	}
	jmx := testPlan("scripts", udv("state", "", "phase", "start"), 2,
		script("JSR223Sampler", "reset", `vars.put("state", "NotSet")`),
		el("WhileController", "until done", sp("WhileController.condition", `${__jexl3("${state}" != "done")}`),
			get("poll", "/poll", regex("state", `state=(\w+)`, "1"))),
		el("WhileController", "until the end", sp("WhileController.condition", `${__jexl3("${phase}" != "end")}`),
			get("phase", "/phase?was=${phase}", regex("phase", `phase=(\w+)`, "1"))),
		get("mode", "/m?mode=${mode}&copy=${copy}",
			el("BeanShellPreProcessor", "pre", sp("script", "vars.put(\"mode\", \"fast\"); // set\nvars.put(\"copy\", vars.get(\"state\"))")),
			script("JSR223PostProcessor", "post", `vars.put("after", "yes")`)),
		get("after", "/after?after=${after}"),
		get("list", "/list", regex("tok", `tok=(\w+)`, "-1"),
			script("JSR223PostProcessor", "pick last", "def n = (vars.get('tok_matchNr') ?: '0') as int\nif (n > 0) vars.put('tok', vars.get(\"tok_${n}\"))\n")),
		get("use", "/use?tok=${tok}"),
	)
	polls, phases := 0, 0
	res, got := runJMX(t, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/poll":
			if polls++; polls%2 == 1 {
				w.Write([]byte("state=wait"))
			} else {
				w.Write([]byte("state=done"))
			}
		case "/phase":
			if phases++; phases%2 == 1 {
				w.Write([]byte("phase=mid"))
			} else {
				w.Write([]byte("phase=end"))
			}
		case "/list":
			w.Write([]byte("tok=a tok=b tok=c"))
		}
	})
	for _, w := range []string{"- set:\n          state: '\"NotSet\"'\n", "while: (state != \"done\")", `while: '((defined("phase") ? phase : "start") != "end")'`,
		"- set:\n          mode: '\"fast\"'\n          copy: state\n", "- set:\n          after: '\"yes\"'\n", "match: last"} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	once := []string{"GET /poll", "GET /poll", "GET /phase?was=start", "GET /phase?was=mid", "GET /m?mode=fast&copy=done", "GET /after?after=yes", "GET /list", "GET /use?tok=c"}
	again := append([]string{"GET /poll", "GET /poll"}, once[4:]...)
	if want := append(once, again...); !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q", got.reqs, want)
	}
	if res.Elements.Dropped != nil || res.Elements.Listed != 0 {
		t.Errorf("elements: %+v, want none listed: %q", res.Elements, res.Skipped)
	}
}
