package convert_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/perflab/perflab/convert"
)

// A document, a recording or a test plan of which nothing converts into a
// request is refused: no plan that sends nothing is written. The error
// says what was missing, and carries what was not converted and why.
func TestConvertRefusesNothingToSend(t *testing.T) {
	sampler := el("JDBCSampler", "query", sp("query", "select 1"))
	for _, c := range []struct {
		name, src, want, skipped string
		conv                     func(string) (*convert.Result, error)
	}{
		{"openapi without paths", "openapi: 3.0.0\ninfo: {title: t, version: \"1\"}\n", "x.yaml: no operation under paths (get, put, post, delete, options, head, patch, trace)", "paths: none", openapi},
		{"openapi with empty paths", "openapi: 3.0.0\npaths: {}\n", "x.yaml: no operation under paths (get, put, post, delete, options, head, patch, trace)", "", openapi},
		{"openapi of parameters only", "openapi: 3.0.0\npaths:\n  /a:\n    parameters: [{name: q, in: query}]\n", "x.yaml: no operation under paths (get, put, post, delete, options, head, patch, trace)", "", openapi},
		{"har of static assets", `{"log":{"entries":[{"request":{"method":"GET","url":"http://a.test/x.png"},"response":{"content":{"mimeType":"image/png"}}}]}}`,
			"x.har: none of its 1 entries was kept (--static keeps static assets, --all-hosts other hosts)", "entry 1 (GET http://a.test/x.png): a static asset", har},
		{"jmx without thread group", testPlanOnly(), "x.jmx: no sampler perflab converts (HTTP Request samplers) in an enabled thread group", "no enabled thread group", jmx},
		{"jmx without sampler", testPlan("p", "", 1), "x.jmx: no sampler perflab converts (HTTP Request samplers) in an enabled thread group", `the thread group "users" has no sampler perflab converts`, jmx},
		{"jmx of a JDBC sampler", testPlan("p", "", 1, sampler), "x.jmx: no sampler perflab converts (HTTP Request samplers) in an enabled thread group", "JDBCSampler", jmx},
	} {
		res, err := c.conv(c.src)
		var nothing *convert.NothingToSendError
		if !errors.As(err, &nothing) || !strings.Contains(err.Error(), c.want+", so the plan would send no request: none is written") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
			continue
		}
		if res != nil {
			t.Errorf("%s: a plan with the error:\n%s", c.name, res.Plan)
		}
		if c.skipped != "" && !strings.Contains(strings.Join(nothing.Skipped, "\n"), c.skipped) {
			t.Errorf("%s: not converted %q, want %q among them", c.name, nothing.Skipped, c.skipped)
		}
	}
	// One request is a plan.
	if _, err := openapi("openapi: 3.0.0\npaths: {/a: {get: {}}}\n"); err != nil {
		t.Errorf("one operation: %v", err)
	}
}

func openapi(src string) (*convert.Result, error) {
	return convert.OpenAPI(strings.NewReader(src), "x.yaml")
}
func har(src string) (*convert.Result, error) {
	return convert.HAR(strings.NewReader(src), "x.har", convert.HAROptions{})
}
func jmx(src string) (*convert.Result, error) { return convert.JMeter(strings.NewReader(src), "x.jmx") }

// testPlanOnly is a test plan without a thread group.
func testPlanOnly() string {
	return `<?xml version="1.0" encoding="UTF-8"?><jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>` +
		el("TestPlan", "p", "") + `</hashTree></jmeterTestPlan>`
}
