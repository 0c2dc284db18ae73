package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/plan"
)

// A plan whose only notes are its scripts loads as converted: each script
// is listed once, with its path and what in perflab does what it is
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
		get("b", "/b?t=${token}", script("JSR223PreProcessor", "sign", `vars.put("sig", "x")`)),
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
