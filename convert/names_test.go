package convert_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/plan"
)

// hostile is a name that would end a comment line and start a YAML
// document of its own (a Pod) where a name is written as a line.
const hostile = "x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n"

// Names taken from another tool's file are made one line: the plan loads
// with the names' line breaks and control characters as spaces, says so,
// and is one YAML document whose comment lines are all comments.
func TestConvertMakesNamesOneLine(t *testing.T) {
	jmx := `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan testclass="TestPlan" testname="x&#10;---&#10;apiVersion: v1&#10;kind: Pod&#10;metadata: {name: evil}&#10;"/>
    <hashTree>
      <ThreadGroup testclass="ThreadGroup" testname="users&#13;&#10;more">
        <intProp name="ThreadGroup.num_threads">1</intProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
          <stringProp name="LoopController.loops">1</stringProp>
        </elementProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="GET&#9;item&#x2028;">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.path">/items</stringProp>
          <stringProp name="HTTPSampler.method">GET</stringProp>
        </HTTPSamplerProxy>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
	openapi := `openapi: 3.0.0
info: {title: "x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n", version: "1"}
paths:
  /items:
    get: {operationId: "list\u0085items\u0000", responses: {"200": {description: ok}}}
`
	har := `{"log": {"creator": {"name": "rec\n---\nkind: Pod", "version": "1\u2029"}, "entries": [
  {"startedDateTime": "2026-01-01T00:00:00Z", "time": 1,
   "request": {"method": "GET", "url": "http://127.0.0.1:1/a%0Ab", "headers": []},
   "response": {"status": 200, "headers": [], "content": {"mimeType": "text/plain"}}}]}}`
	for _, c := range []struct {
		name string
		conv func() (*convert.Result, error)
		// want are the names the plan gets, in the order Names lists them.
		want []string
	}{
		{"jmeter", func() (*convert.Result, error) { return convert.JMeter(strings.NewReader(jmx), "plan.jmx") },
			[]string{"x --- apiVersion: v1 kind: Pod metadata: {name: evil} ", "users  more", "GET item "}},
		{"openapi", func() (*convert.Result, error) { return convert.OpenAPI(strings.NewReader(openapi), "api.yaml") },
			[]string{"x --- apiVersion: v1 kind: Pod metadata: {name: evil} ", "api", "list items "}},
		{"har", func() (*convert.Result, error) {
			return convert.HAR(strings.NewReader(har), "rec\n---\nkind: Pod.har", convert.HAROptions{})
		}, []string{"rec --- kind: Pod", "recording", "GET /a b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := c.conv()
			if err != nil {
				t.Fatal(err)
			}
			// One document, and every line before the plan's first key a
			// comment.
			dec := yaml.NewDecoder(bytes.NewReader(res.Plan))
			var docs int
			for {
				var n yaml.Node
				if err := dec.Decode(&n); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("%v\n%s", err, res.Plan)
				}
				docs++
			}
			if docs != 1 {
				t.Errorf("%d YAML documents, want 1:\n%s", docs, res.Plan)
			}
			for _, line := range strings.Split(string(res.Plan), "\n") {
				if strings.HasPrefix(line, "name:") {
					break
				}
				if !strings.HasPrefix(line, "#") {
					t.Errorf("a line of the first comment is not a comment: %q", line)
				}
			}
			if bytes.ContainsAny(res.Plan, "\r\u0085\u2028\u2029\x00") {
				t.Errorf("the plan holds a line break or control character other than LF:\n%q", res.Plan)
			}
			path := filepath.Join(t.TempDir(), "plan.yaml")
			if err := os.WriteFile(path, res.Plan, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := plan.Load(path, plan.Options{})
			if err != nil {
				t.Fatalf("the converted plan does not load: %v\n%s", err, res.Plan)
			}
			got := []string{p.Name, p.Scenarios[0].Name, p.Scenarios[0].Flow[0].Label()}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("names %q, want %q", got, c.want)
			}
			said := strings.Join(res.Skipped, "\n")
			if !strings.Contains(said, "its line breaks and control characters, which a name may not hold, are spaces") {
				t.Errorf("the plan does not say its names were changed: %q", res.Skipped)
			}
			for _, s := range res.Skipped {
				if _, changed := plan.SingleLine(s); changed {
					t.Errorf("a note of more than one line: %q", s)
				}
			}
		})
	}
}
