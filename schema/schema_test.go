package schema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/schema"
)

func compile(t *testing.T, name string, src []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(name)
	if err != nil {
		t.Fatalf("%s does not compile: %v", name, err)
	}
	return s
}

// asJSON turns a YAML or JSON document into what the validator expects.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func yamlFile(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return asJSON(t, v)
}

func TestPlansValidate(t *testing.T) {
	s := compile(t, "plan.schema.json", schema.Plan)
	files, _ := filepath.Glob("../examples/*/plan.yaml")
	more, _ := filepath.Glob("../plan/testdata/valid/*.yaml")
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if err := s.Validate(yamlFile(t, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// And the schema rejects what the plan decoder rejects as unknown.
	if err := s.Validate(yamlFile(t, "../plan/testdata/invalid/unknown_field.yaml")); err == nil {
		t.Error("unknown_field.yaml passes the schema")
	}
}

func TestSummaryValidates(t *testing.T) {
	s := compile(t, "summary.schema.json", schema.Summary)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ops := []metrics.Op{{Name: "a", Kind: metrics.KindStep, Scenario: "s", Transaction: "tx"}, {Name: "tx", Kind: metrics.KindTransaction, Scenario: "s"}}
	totals := []*metrics.Stats{metrics.NewStats(), metrics.NewStats()}
	for i := 1; i <= 10; i++ {
		totals[0].Add(time.Duration(i)*time.Millisecond, metrics.OK, 10)
	}
	totals[0].Add(time.Second, metrics.Timeout, 0)
	ph := &metrics.Phase{Index: 1, Name: "users=1", Values: []metrics.KV{{Name: "users", Value: "1"}}, Start: t0, End: t0.Add(time.Second),
		Ops: ops, Totals: totals, Load: []metrics.Load{{Scenario: "s", VUs: 1, Iterations: 10}}}
	run := &metrics.Run{ID: "r", PlanName: "p", Start: t0, End: t0.Add(2 * time.Second), Status: metrics.StatusCompleted,
		Vars:  []metrics.Var{{Name: "users", Values: []string{"1"}, Swept: true}, {Name: "ds", Values: []string{"x"}}},
		Setup: []*metrics.Phase{{Name: "setup", Start: t0, End: t0, Ops: ops[:1], Totals: totals[:1]}}, Stages: []*metrics.Phase{ph}}
	var b bytes.Buffer
	if err := report.Summarize(run, report.HostFacts()).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("summary.json does not match its schema: %v", err)
	}
}

// props returns the property names of a schema object found by a path of
// keys ("properties", "http", ...).
func props(t *testing.T, root map[string]any, path ...string) []string {
	t.Helper()
	var cur any = root
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("schema path %v: %q is not an object", path, k)
		}
		cur = m[k]
	}
	m, _ := cur.(map[string]any)
	p, _ := m["properties"].(map[string]any)
	var out []string
	for k := range p {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tags lists a struct's keys for a struct tag (yaml or json), inlining
// embedded structs and skipping "-".
func tags(typ reflect.Type, key string) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get(key)
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && tag == "" {
			out = append(out, tags(f.Type, key)...)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func load(t *testing.T, src []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The schemas list exactly the keys the Go types read and write.
func TestSchemasMatchTheCode(t *testing.T) {
	p := load(t, schema.Plan)
	s := load(t, schema.Summary)
	cases := []struct {
		name   string
		typ    any
		tag    string
		schema []string
	}{
		{"plan", plan.Plan{}, "yaml", props(t, p)},
		{"http", plan.HTTPOptions{}, "yaml", props(t, p, "properties", "http")},
		{"data", plan.Data{}, "yaml", props(t, p, "$defs", "data")},
		{"range", plan.RangeGen{}, "yaml", props(t, p, "$defs", "data", "properties", "range")},
		{"scenario", plan.Scenario{}, "yaml", props(t, p, "$defs", "scenario")},
		{"step", plan.Step{}, "yaml", props(t, p, "$defs", "step")},
		{"check", plan.Check{}, "yaml", props(t, p, "$defs", "step", "properties", "check")},
		{"repeat", plan.Repeat{}, "yaml", props(t, p, "$defs", "step", "properties", "repeat")},
		{"summary", report.Summary{}, "json", props(t, s)},
		{"host", report.Host{}, "json", props(t, s, "properties", "host")},
		{"plan info", report.PlanInfo{}, "json", props(t, s, "properties", "plan")},
		{"total", report.Total{}, "json", props(t, s, "properties", "total")},
		{"phase", report.PhaseSummary{}, "json", props(t, s, "$defs", "phase")},
		{"operation", report.Operation{}, "json", props(t, s, "$defs", "phase", "properties", "operations", "items")},
		{"latency", metrics.LatencySummary{}, "json", props(t, s, "$defs", "phase", "properties", "operations", "items", "properties", "latency_ms")},
		{"load", metrics.Load{}, "json", props(t, s, "$defs", "phase", "properties", "load", "items")},
	}
	for _, c := range cases {
		got := tags(reflect.TypeOf(c.typ), c.tag)
		if !reflect.DeepEqual(got, c.schema) {
			t.Errorf("%s: code has %v\n  schema has %v", c.name, got, c.schema)
		}
	}
}
