package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/dataset"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/schema"
)

// ---------------------------------------------------------------------------
// Loading and compiling.

// compile compiles a schema with a real draft 2020-12 validator, which also
// checks the schema against the draft's meta-schema. Formats (date-time) are
// asserted.
func compile(t *testing.T, name string, src []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
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

func planSchema(t *testing.T) *jsonschema.Schema { return compile(t, "plan.schema.json", schema.Plan) }
func summarySchema(t *testing.T) *jsonschema.Schema {
	return compile(t, "summary.schema.json", schema.Summary)
}

// rawDoc is a schema as plain JSON values, for walking.
func rawDoc(t *testing.T, src []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// yamlValue decodes YAML into the JSON-compatible values the validator
// takes, as an editor sees the file (YAML 1.2 types; keys as written).
func yamlValue(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatalf("YAML: %v", err)
	}
	return jsonCompatible(v)
}

func jsonCompatible(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = jsonCompatible(x)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonCompatible(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = jsonCompatible(x)
		}
		return out
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case []byte:
		return string(v)
	}
	return v
}

func TestSchemasCompile(t *testing.T) {
	for name, src := range map[string][]byte{"plan.schema.json": schema.Plan, "summary.schema.json": schema.Summary} {
		compile(t, name, src)
		if got := rawDoc(t, src)["$schema"]; got != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", name, got)
		}
	}
}

// ---------------------------------------------------------------------------
// Walking a schema document.

// visitSchemas calls f on every subschema of n, with a readable path.
func visitSchemas(n any, path string, f func(s map[string]any, path string)) {
	s, ok := n.(map[string]any)
	if !ok {
		return
	}
	f(s, path)
	for _, kw := range []string{"properties", "$defs", "patternProperties", "dependentSchemas"} {
		if m, ok := s[kw].(map[string]any); ok {
			for k, sub := range m {
				visitSchemas(sub, path+"/"+kw+"/"+k, f)
			}
		}
	}
	for _, kw := range []string{"items", "additionalProperties", "propertyNames", "not", "contains", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"} {
		visitSchemas(s[kw], path+"/"+kw, f)
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if l, ok := s[kw].([]any); ok {
			for i, sub := range l {
				visitSchemas(sub, fmt.Sprintf("%s/%s/%d", path, kw, i), f)
			}
		}
	}
}

// Every property an editor can complete says what it does, in one line.
func TestEveryPropertyHasADescription(t *testing.T) {
	for name, src := range map[string][]byte{"plan.schema.json": schema.Plan, "summary.schema.json": schema.Summary} {
		n := 0
		visitSchemas(rawDoc(t, src), "#", func(s map[string]any, path string) {
			props, _ := s["properties"].(map[string]any)
			for k, p := range props {
				n++
				d, _ := p.(map[string]any)["description"].(string)
				switch {
				case strings.TrimSpace(d) == "":
					t.Errorf("%s: %s/properties/%s has no description", name, path, k)
				case strings.Contains(d, "\n"):
					t.Errorf("%s: %s/properties/%s: description is more than one line", name, path, k)
				}
			}
		})
		if n < 20 {
			t.Errorf("%s: only %d properties found; is the walk broken?", name, n)
		}
	}
}

// doc resolves local references and collects what the branches of a
// subschema (anyOf, oneOf, allOf, $ref) say about objects and arrays.
type doc struct {
	t    *testing.T
	root map[string]any
}

func (d doc) ref(s map[string]any) map[string]any {
	ref, ok := s["$ref"].(string)
	if !ok {
		return nil
	}
	if !strings.HasPrefix(ref, "#/") {
		d.t.Fatalf("unsupported $ref %q: use #/$defs/...", ref)
	}
	var cur any = d.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[tok]
	}
	target, ok := cur.(map[string]any)
	if !ok {
		d.t.Fatalf("$ref %q does not resolve", ref)
	}
	return target
}

// branches returns s and every schema s applies through $ref, anyOf, oneOf
// and allOf, recursively.
func (d doc) branches(s map[string]any) []map[string]any {
	if s == nil {
		return nil
	}
	out := []map[string]any{s}
	if r := d.ref(s); r != nil {
		out = append(out, d.branches(r)...)
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		l, _ := s[kw].([]any)
		for _, sub := range l {
			if m, ok := sub.(map[string]any); ok {
				out = append(out, d.branches(m)...)
			}
		}
	}
	return out
}

// props is the union of the properties the branches of s declare.
func (d doc) props(s map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, b := range d.branches(s) {
		m, _ := b["properties"].(map[string]any)
		for k, v := range m {
			out[k], _ = v.(map[string]any)
		}
	}
	return out
}

// sub returns the first schema a branch of s gives under kw (items,
// additionalProperties), or nil.
func (d doc) sub(s map[string]any, kw string) map[string]any {
	for _, b := range d.branches(s) {
		if m, ok := b[kw].(map[string]any); ok {
			return m
		}
	}
	return nil
}

// required is the union of the required lists of s's own object branches
// (not those inside oneOf/anyOf alternatives, which are conditional).
func (d doc) required(s map[string]any) []string {
	var out []string
	for _, b := range append([]map[string]any{s}, d.branches(d.ref(s))...) {
		if b == nil {
			continue
		}
		l, _ := b["required"].([]any)
		for _, x := range l {
			if _, isObj := b["properties"]; isObj {
				out = append(out, x.(string))
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// types lists the JSON types s accepts as declared by type, const or enum
// in any of its branches.
func (d doc) types(s map[string]any) []string {
	var out []string
	add := func(v any) {
		switch v.(type) {
		case string:
			out = append(out, "string")
		case float64:
			out = append(out, "number")
		case bool:
			out = append(out, "boolean")
		}
	}
	for _, b := range d.branches(s) {
		switch tt := b["type"].(type) {
		case string:
			out = append(out, tt)
		case []any:
			for _, x := range tt {
				out = append(out, x.(string))
			}
		}
		if c, ok := b["const"]; ok {
			add(c)
		}
		if l, ok := b["enum"].([]any); ok {
			for _, x := range l {
				add(x)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// diffKeys reports keys only in the code and keys only in the schema.
func diffKeys(t *testing.T, path string, code, sch []string) {
	t.Helper()
	for _, k := range code {
		if !slices.Contains(sch, k) {
			t.Errorf("%s: key %q exists in the Go types but not in the schema", path, k)
		}
	}
	for _, k := range sch {
		if !slices.Contains(code, k) {
			t.Errorf("%s: key %q is in the schema but not in the Go types", path, k)
		}
	}
}

// ---------------------------------------------------------------------------
// The plan schema against plan.Plan.

// Types the plan decoder reads in a shape of their own (see plan/decode.go).
var (
	typText      = reflect.TypeOf(&plan.Text{})
	typNum       = reflect.TypeOf(&plan.Num{})
	typDuration  = reflect.TypeOf(plan.Duration{})
	typSize      = reflect.TypeOf(plan.Size{})
	typThink     = reflect.TypeOf(&plan.Think{})
	typPairs     = reflect.TypeOf([]plan.Pair{})
	typVars      = reflect.TypeOf([]*plan.Var{})
	typData      = reflect.TypeOf([]*plan.Data{})
	typExtracts  = reflect.TypeOf([]*plan.Extract{})
	typJSONCheck = reflect.TypeOf([]*plan.JSONCheck{})
	typJSONDoc   = reflect.TypeOf(&plan.JSONDoc{})
	typExpr      = reflect.TypeOf(&plan.Expr{})
	typFragments = reflect.TypeOf([]*plan.Fragment{})
	typAssigns   = reflect.TypeOf([]*plan.Assign{})
	typThreshold = reflect.TypeOf([]*plan.Threshold{})
)

// thinkKeys are the keys of the {min, max} form of a think time, which the
// decoder reads through a struct of its own.
var thinkKeys = []string{"max", "min"}

type planWalker struct {
	doc
	seen map[string]bool
}

// yamlKeys lists the keys the decoder accepts for a struct: its yaml tags
// other than "-" (untagged fields are not read either).
func yamlKeys(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous && opts == "inline" {
			for k, inner := range yamlKeys(f.Type) {
				out[k] = inner
			}
			continue
		}
		if tag != "" && tag != "-" {
			out[tag] = f
		}
	}
	return out
}

func (w *planWalker) object(t reflect.Type, s map[string]any, path string) {
	id := fmt.Sprintf("%v@%p", t, s)
	if w.seen[id] {
		return // steps of a transaction: the same type at the same schema
	}
	w.seen[id] = true
	fields := yamlKeys(t)
	props := w.props(s)
	diffKeys(w.t, path, keys(fields), keys(props))
	for _, k := range keys(fields) {
		if p, ok := props[k]; ok {
			w.field(fields[k].Type, p, path+"."+k)
		}
	}
}

// mapOf checks that s is an object of names to values and returns the
// values' schema.
func (w *planWalker) mapOf(s map[string]any, path string) map[string]any {
	v := w.sub(s, "additionalProperties")
	if v == nil || !slices.Contains(w.types(s), "object") {
		w.t.Errorf("%s: want an object of names to values in the schema", path)
	}
	if len(w.props(s)) > 0 {
		w.t.Errorf("%s: a map of names must not list fixed properties, found %v", path, keys(w.props(s)))
	}
	return v
}

func (w *planWalker) leaf(s map[string]any, path string) {
	if p := w.props(s); len(p) > 0 {
		w.t.Errorf("%s: the Go type is a value, but the schema lists keys %v", path, keys(p))
	}
}

func (w *planWalker) field(t reflect.Type, s map[string]any, path string) {
	switch t {
	case typText, typNum, typDuration, typSize, typJSONDoc, typExpr:
		w.leaf(s, path)
		return
	case typAssigns: // name: an expression
		if v := w.mapOf(s, path); v != nil {
			w.leaf(v, path+".*")
		}
		return
	case typFragments: // name: a list of steps
		if v := w.mapOf(s, path); v != nil {
			if items := w.sub(v, "items"); items != nil {
				w.object(reflect.TypeOf(plan.Step{}), items, path+".*[]")
			}
		}
		return
	case typThreshold: // a list of expressions
		if items := w.sub(s, "items"); items != nil {
			w.leaf(items, path+"[]")
		}
		return
	case typThink:
		diffKeys(w.t, path, thinkKeys, keys(w.props(s)))
		return
	case typPairs, typVars, typJSONCheck:
		if v := w.mapOf(s, path); v != nil {
			w.leaf(v, path+".*")
		}
		return
	case typData, typExtracts:
		if v := w.mapOf(s, path); v != nil {
			w.object(t.Elem().Elem(), v, path+".*")
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.field(t.Elem(), s, path)
	case reflect.Struct:
		w.object(t, s, path)
	case reflect.Slice:
		et := t.Elem()
		if et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		if et.Kind() == reflect.Struct {
			items := w.sub(s, "items")
			if items == nil {
				w.t.Errorf("%s: want a list in the schema", path)
				return
			}
			w.object(et, items, path+"[]")
			return
		}
		w.leaf(s, path) // []string, []int: a value or a list of values
	case reflect.Map: // name: value, as a simulator reply's headers
		if v := w.sub(s, "additionalProperties"); v != nil {
			w.leaf(v, path+".*")
		} else {
			w.t.Errorf("%s: want an object of names to values in the schema", path)
		}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
		w.leaf(s, path)
	default:
		w.t.Errorf("%s: the test does not know how plan files write %v; teach it (and the schema)", path, t)
	}
}

// The plan schema has exactly the keys the plan decoder accepts, at every
// level, so neither can change without the other.
func TestPlanSchemaMatchesPlanTypes(t *testing.T) {
	root := rawDoc(t, schema.Plan)
	w := &planWalker{doc: doc{t: t, root: root}, seen: map[string]bool{}}
	w.object(reflect.TypeOf(plan.Plan{}), root, "plan")
}

// ---------------------------------------------------------------------------
// The summary schema against results.Summary.

type jsonField struct {
	typ      reflect.Type
	optional bool // omitempty
}

// jsonKeys lists the keys encoding/json writes for a struct, with embedded
// structs inlined.
func jsonKeys(t reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonKeys(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out[name] = jsonField{typ: f.Type, optional: slices.Contains(strings.Split(opts, ","), "omitempty")}
	}
	return out
}

var typTime = reflect.TypeOf(time.Time{})

type summaryWalker struct{ doc }

func (w summaryWalker) wantType(s map[string]any, path, want string) {
	if got := w.types(s); !slices.Contains(got, want) {
		w.t.Errorf("%s: the Go type writes a JSON %s, the schema allows %v", path, want, got)
	}
}

func (w summaryWalker) value(t reflect.Type, s map[string]any, path string) {
	if t == typTime {
		w.wantType(s, path, "string")
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		w.value(t.Elem(), s, path)
	case reflect.Struct:
		w.wantType(s, path, "object")
		w.object(t, s, path)
	case reflect.Map:
		w.wantType(s, path, "object")
		v := w.sub(s, "additionalProperties")
		if v == nil {
			w.t.Errorf("%s: the schema does not say what the map's values are", path)
			return
		}
		w.value(t.Elem(), v, path+".*")
	case reflect.Slice, reflect.Array:
		w.wantType(s, path, "array")
		items := w.sub(s, "items")
		if items == nil {
			w.t.Errorf("%s: the schema does not say what the list's items are", path)
			return
		}
		w.value(t.Elem(), items, path+"[]")
	case reflect.String:
		w.wantType(s, path, "string")
	case reflect.Bool:
		w.wantType(s, path, "boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.wantType(s, path, "integer")
	case reflect.Float32, reflect.Float64:
		w.wantType(s, path, "number")
	case reflect.Interface:
		// Any value; the schema says which (checked by TestSummaryValidates).
	default:
		w.t.Errorf("%s: the test does not know how %v is written; teach it", path, t)
	}
}

func (w summaryWalker) object(t reflect.Type, s map[string]any, path string) {
	fields := jsonKeys(t)
	props := w.props(s)
	diffKeys(w.t, path, keys(fields), keys(props))
	var always []string
	for k, f := range fields {
		if !f.optional {
			always = append(always, k)
		}
	}
	sort.Strings(always)
	if got := w.required(s); !slices.Equal(got, always) {
		w.t.Errorf("%s: schema requires %v; the Go type always writes %v (the fields without omitempty)", path, got, always)
	}
	if ap, ok := s["additionalProperties"].(bool); !ok || ap {
		if r := w.ref(s); r == nil || r["additionalProperties"] != false {
			w.t.Errorf("%s: want additionalProperties: false, so unknown keys are caught", path)
		}
	}
	for _, k := range keys(fields) {
		if p, ok := props[k]; ok {
			w.value(fields[k].typ, p, path+"."+k)
		}
	}
}

// The summary schema has exactly the keys results.Summary writes, requires
// exactly those written always, and gives them the JSON types they have.
func TestSummarySchemaMatchesSummaryTypes(t *testing.T) {
	root := rawDoc(t, schema.Summary)
	w := summaryWalker{doc{t: t, root: root}}
	w.object(reflect.TypeOf(results.Summary{}), root, "summary")
}

// The closed sets of values in the schemas are the ones in the code.
func TestEnumsMatchTheCode(t *testing.T) {
	p := doc{t: t, root: rawDoc(t, schema.Plan)}
	s := doc{t: t, root: rawDoc(t, schema.Summary)}
	at := func(d doc, path ...string) map[string]any {
		var cur any = d.root
		for _, k := range path {
			cur = cur.(map[string]any)[k]
		}
		return cur.(map[string]any)
	}
	enum := func(m map[string]any) []string {
		var out []string
		if c, ok := m["const"].(string); ok {
			out = append(out, c)
		}
		l, _ := m["enum"].([]any)
		for _, x := range l {
			out = append(out, x.(string))
		}
		sort.Strings(out)
		return out
	}
	sorted := func(l ...string) []string { sort.Strings(l); return l }

	var errKinds []string
	for k := metrics.ErrKind(1); int(k) < metrics.NumErrKinds; k++ {
		errKinds = append(errKinds, k.String())
	}
	cases := []struct {
		name      string
		got, want []string
	}{
		{"summary format", enum(at(s, "properties", "format")), []string{results.Format}},
		{"summary status", enum(at(s, "properties", "status")),
			sorted(metrics.StatusCompleted, metrics.StatusInterrupted, metrics.StatusFailed, metrics.StatusRunning, metrics.StatusKilled, metrics.StatusDegraded)},
		{"operation kind", enum(at(s, "$defs", "operation", "properties", "kind")),
			sorted(string(metrics.KindStep), string(metrics.KindTransaction), string(metrics.KindScenario))},
		{"error kinds", enum(at(s, "$defs", "errors", "properties", "by_kind", "propertyNames")), sorted(errKinds...)},
		{"data mode", enum(at(p, "$defs", "dataSource", "properties", "mode")),
			sorted(string(dataset.PerVU), string(dataset.Sequential), string(dataset.Random))},
	}
	for _, c := range cases {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: schema has %v, code has %v", c.name, c.got, c.want)
		}
	}
	for _, m := range []string{"continue", "next_iteration", "stop_vu"} {
		if !slices.Contains(enum(at(p, "$defs", "scenario", "properties", "on_error")), m) {
			t.Errorf("on_error: schema lacks %q", m)
		}
	}
}

// ---------------------------------------------------------------------------
// Plans.

func anyEnv(string) (string, bool) { return "x", true }

// Every shipped plan is valid for both the plan loader and the schema.
func TestShippedPlansValidate(t *testing.T) {
	s := planSchema(t)
	var files []string
	err := filepath.WalkDir("../examples", func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() == "plan.yaml" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../plan/testdata/valid/*.yaml")
	files = append(files, more...)
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(yamlValue(t, src)); err != nil {
			t.Errorf("%s does not match plan.schema.json: %v", f, err)
		}
		if _, err := plan.Parse(src, f, plan.Options{LookupEnv: anyEnv}); err != nil {
			t.Errorf("%s: the plan loader rejects it, so it proves nothing about the schema: %v", f, err)
		}
	}
}

// Plans whose problems are beyond a schema: references to variables, files
// and the like, which only the plan loader can see.
var semanticOnly = map[string]bool{
	"undefined_variable.yaml":       true,
	"threshold_operation.yaml":      true, // names an operation that does not exist
	"threshold_dropped.yaml":        true, // dropped of a closed-model scenario, of a step
	"threshold_dropped_closed.yaml": true, // dropped in a plan without an open model
	"event_loop.yaml":               true, // steps the event loop cannot run, elsewhere in the plan
	"duplicate_names.yaml":          true, // two steps of one flow with one name
	"malformed_step_url.yaml":       true, // a URL that does not parse
	"grpc_import.yaml":              true, // a .proto file that imports one that is missing
	"not_regular.yaml":              true, // files that are devices, directories
	"session_headers.yaml":          true, // auth beside an Authorization header written elsewhere
	"bounds.yaml":                   true, // expressions that would make too much text
}

// The plan loader's invalid test plans are invalid for the schema too,
// unless their problem is one a schema cannot see.
func TestInvalidPlansFailTheSchema(t *testing.T) {
	s := planSchema(t)
	files, _ := filepath.Glob("../plan/testdata/invalid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no invalid plans found")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if yaml.Unmarshal(src, &v) != nil {
			continue // not YAML: nothing for a schema to say
		}
		err = s.Validate(jsonCompatible(v))
		switch name := filepath.Base(f); {
		case semanticOnly[name] && err != nil:
			t.Errorf("%s: listed as beyond the schema, but the schema rejects it: %v", name, err)
		case !semanticOnly[name] && err == nil:
			t.Errorf("%s: the plan loader rejects it but the schema accepts it; tighten the schema, or list it in semanticOnly", name)
		}
	}
}

const planHead = "target: http://127.0.0.1:1\n"

// scenarioPlan wraps scenario fields and a flow into a whole plan.
func scenarioPlan(fields, flow string) string {
	return planHead + "scenarios:\n  - name: s\n" + indent(fields, "    ") + "    flow:\n" + indent(flow, "      ")
}

func flowPlan(flow string) string { return scenarioPlan("vus: 1\niterations: 1\n", flow) }

func indent(s, by string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(by + l + "\n")
	}
	return b.String()
}

// The schema and the plan loader agree on the shapes of a plan. The few
// known differences are listed with the side each takes.
func TestSchemaAgreesWithPlanLoader(t *testing.T) {
	s := planSchema(t)
	cases := []struct {
		name string
		src  string
		// schemaOK and loaderOK say whether each accepts the plan.
		schemaOK, loaderOK bool
	}{
		// Accepted by both.
		{"minimal", flowPlan("- url: /a\n"), true, true},
		{"absolute url without target", "scenarios:\n  - {vus: 1, iterations: 1, flow: [{url: 'http://127.0.0.1:1/a'}]}\n", true, true},
		{"every top-level key", `name: p
description: d
target: http://127.0.0.1:1
headers: {Accept: application/json, X-N: 3}
vars: {users: [1, 2], flag: true, n: 1.5, s: x}
data:
  v: {values: [a, 1, true], mode: random}
  one: {values: solo}
  r: {range: {from: 1, to: 9, step: 2, format: "id-%04d"}, mode: per-vu}
  r2: {range: {to: 3}}
http: {timeout: 5s, body_limit: 1MiB, keep_alive: false, max_conns_per_host: 10, insecure_skip_verify: true}
interval: 1m30s
setup:
  - {name: make, method: POST, url: /m, repeat: {count: 3}}
  - {name: each, method: PUT, url: "/m/${item}", repeat: {for_each: v}}
  - {name: sized, url: /m, repeat: {count: "${users}"}}
teardown: [{method: DELETE, url: /m}]
scenarios:
  - name: s
    vus: ${users}
    total_iterations: 10
    duration: [10s, 1m]
    ramp_up: 0
    think: {min: 100ms, max: 1.5s}
    on_error: stop_vu
    flow:
      - name: create
        method: PATCH
        url: /a/${v}
        headers: {Content-Type: application/json}
        query: {q: "${r}", n: 1}
        json: {a: [1, {b: null}], c: "${vu}"}
        timeout: 250ms
        body_limit: 64KiB
        extract:
          id: $.id
          loc: {header: Location}
          tok: {regex: 'token=(\w+)', default: none}
          deep: {json: items.0.id}
        check: {status: 201, body_contains: ok, json: {$.ok: true, $.n: 3, $.s: x}}
        think: 1s
      - transaction: t
        think: 2s
        steps:
          - {url: /b, method: PROPFIND, body: "x=${id}", check: {status: [200, 204], body_contains: [a, b]}}
      - think: .5s
`, true, true},
		{"redirects, cookies and auth", planHead + "http: {redirects: 3, cookies: per_iteration, auth: {type: digest, user: u, password: '${env.P}'}}\n" +
			flowPlan("- {url: /a, redirects: 0, auth: none}\n- {url: /b, auth: {type: basic, user: x}}\n")[len(planHead):], true, true},
		{"sweep vus and iterations", scenarioPlan("vus: [1, 2]\niterations: [3, 4]\n", "- url: /a\n"), true, true},

		// Rejected by both.
		{"zero interval", planHead + "interval: 0\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"zero timeout", planHead + "http: {timeout: 0s}\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"zero step timeout", flowPlan("- {url: /a, timeout: 0.0ms}\n"), false, false},
		{"zero ramp segment", scenarioPlan("ramp_vus: [{target: 2, duration: 0s}]\n", "- url: /a\n"), false, false},
		{"no scenarios", planHead, false, false},
		{"empty scenarios", planHead + "scenarios: []\n", false, false},
		{"unknown top-level key", "targt: x\n" + flowPlan("- url: /a\n"), false, false},
		{"unknown step key", flowPlan("- {url: /a, methd: GET}\n"), false, false},
		{"body_limit 0", planHead + "http: {body_limit: 0}\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"body_limit without a unit of bytes", planHead + "http: {body_limit: 4M}\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"unknown http key", planHead + "http: {timout: 1s}\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"missing vus", scenarioPlan("iterations: 1\n", "- url: /a\n"), false, false},
		{"vus 0", scenarioPlan("vus: 0\niterations: 1\n", "- url: /a\n"), false, false},
		{"vus empty list", scenarioPlan("vus: []\niterations: 1\n", "- url: /a\n"), false, false},
		{"vus mapping", scenarioPlan("vus: {n: 1}\niterations: 1\n", "- url: /a\n"), false, false},
		{"iterations and total", scenarioPlan("vus: 1\niterations: 1\ntotal_iterations: 2\n", "- url: /a\n"), false, false},
		{"no end", scenarioPlan("vus: 1\n", "- url: /a\n"), false, false},
		{"duration without unit", scenarioPlan("vus: 1\nduration: 10\n", "- url: /a\n"), false, false},
		{"bad on_error", scenarioPlan("vus: 1\niterations: 1\non_error: stop\n", "- url: /a\n"), false, false},
		{"empty flow", scenarioPlan("vus: 1\niterations: 1\n", "[]\n"), false, false},
		{"url and transaction", flowPlan("- {transaction: t, url: /a, steps: [{url: /b}]}\n"), false, false},
		{"transaction without steps", flowPlan("- transaction: t\n"), false, false},
		{"steps without transaction: a block", flowPlan("- {name: x, steps: [{url: /b}]}\n"), true, true},
		{"logic in setup and teardown", `setup:
  - {name: list, url: /list, extract: {ids: {json: "$.ids[*]", match: all}}}
  - name: each
    loop: {over: ids, as: id, index: i}
    steps: [{name: item, url: "/i/${id}"}]
  - if: response.ok
    steps: [{name: ok, url: /ok}]
    else: [{name: ko, url: /ko}]
  - choose: [{weight: 1, steps: [{name: a, url: /a}]}, {weight: 1}]
  - {set: {next: int(i) + 1}}
  - transaction: t
    steps: [{name: make, url: /m, repeat: {count: 2}, once: true}]
teardown:
  - name: poll
    loop: {while: 'json("$.state") != "done"', max: 5}
    steps: [{name: job, url: "/job/${next}"}]
` + flowPlan("- url: /a\n"), true, true},
		{"use and steps", flowPlan("- {use: f, steps: [{url: /b}]}\n"), false, false},
		{"step with nothing to do", flowPlan("- name: x\n"), false, false},
		{"body and json", flowPlan("- {url: /a, body: x, json: {a: 1}}\n"), false, false},
		{"lower-case method", flowPlan("- {url: /a, method: get}\n"), false, false},
		{"status out of range", flowPlan("- {url: /a, check: {status: 700}}\n"), false, false},
		{"status as text", flowPlan("- {url: /a, check: {status: ok}}\n"), false, false},
		{"unknown check key", flowPlan("- {url: /a, check: {code: 200}}\n"), false, false},
		{"check json value a list", flowPlan("- {url: /a, check: {json: {$.a: [1]}}}\n"), false, false},
		{"bad think", flowPlan("- url: /a\n  think: fast\n"), false, false},
		{"think with unknown key", flowPlan("- think: {min: 1s, avg: 2s}\n"), false, false},
		{"interval without unit", "interval: 10\n" + flowPlan("- url: /a\n"), false, false},
		{"headers as list", "headers: [a, b]\n" + flowPlan("- url: /a\n"), false, false},
		{"extract without $", flowPlan("- {url: /a, extract: {id: id}}\n"), false, false},
		{"extract two sources", flowPlan("- {url: /a, extract: {id: {json: $.id, header: X}}}\n"), false, false},
		{"extract no source", flowPlan("- {url: /a, extract: {id: {default: x}}}\n"), false, false},
		{"extract bad name", flowPlan("- {url: /a, extract: {1id: $.id}}\n"), false, false},
		{"extract list, match all", flowPlan("- {url: /a, extract: {id: {json: \"$.a[?@.b=='x'].id\", match: all}, r: {regex: 'sid=(\\w+)', from: headers, group: 1, match: 2}, c: {css: a.next, attribute: href, match: last}, x: {xpath: '//t', match: random}, b: {between: [l, r]}}}\n- url: /b/${id_1}/${id_count}\n"), true, true},
		{"check that", flowPlan("- {url: /a, check: {that: [{json: $.id, exists: true}, {header: X, contains: j}, {body: true, not_contains: E}, {status: true, one_of: [200, 204]}, {duration: true, lt: 500ms}, {size: true, between: [1, 10], not: true, message: m}]}}\n"), true, true},
		{"assertion without operator", flowPlan("- {url: /a, check: {that: [{json: $.id}]}}\n"), false, false},
		{"assertion with two subjects", flowPlan("- {url: /a, check: {that: [{json: $.id, body: true, exists: true}]}}\n"), false, false},
		{"assertion body false", flowPlan("- {url: /a, check: {that: [{body: false, contains: x}]}}\n"), false, false},
		{"between of one", flowPlan("- {url: /a, extract: {b: {between: [l]}}}\n"), false, false},
		{"match 0", flowPlan("- {url: /a, extract: {b: {json: $.a, match: 0}}}\n"), false, false},
		{"from cookies", flowPlan("- {url: /a, extract: {b: {regex: x, from: cookies}}}\n"), false, false},
		{"variable bad name", "vars: {1x: 1}\n" + flowPlan("- url: /a\n"), false, false},
		{"variable empty list", "vars: {x: []}\n" + flowPlan("- url: /a\n"), false, false},
		{"variable mapping", "vars: {x: {a: 1}}\n" + flowPlan("- url: /a\n"), false, false},
		{"data two sources", "data: {d: {values: [a], glob: 'x-[1-2]'}}\n" + flowPlan("- url: /a\n"), false, false},
		{"data no source", "data: {d: {mode: random}}\n" + flowPlan("- url: /a\n"), false, false},
		{"data bad mode", "data: {d: {values: [a], mode: round-robin}}\n" + flowPlan("- url: /a\n"), false, false},
		{"range from text", "data: {d: {range: {from: a, to: 3}}}\n" + flowPlan("- url: /a\n"), false, false},
		{"repeat count and for_each", "data: {d: {values: [a]}}\nsetup: [{url: /a, repeat: {count: 1, for_each: d}}]\n" + flowPlan("- url: /a\n"), false, false},
		{"repeat empty", "setup: [{url: /a, repeat: {}}]\n" + flowPlan("- url: /a\n"), false, false},
		{"negative redirects", flowPlan("- {url: /a, redirects: -1}\n"), false, false},
		{"unknown cookies mode", planHead + "http: {cookies: session}\n" + flowPlan("- url: /a\n")[len(planHead):], false, false},
		{"auth without type", flowPlan("- {url: /a, auth: {user: u}}\n"), false, false},
		{"auth of an unknown type", flowPlan("- {url: /a, auth: {type: ntlm, user: u}}\n"), false, false},
		{"auth as a word other than none", flowPlan("- {url: /a, auth: basic}\n"), false, false},
		{"repeat count list", "setup: [{url: /a, repeat: {count: [1, 2]}}]\n" + flowPlan("- url: /a\n"), false, false},
		{"repeat of a block", "setup: [{steps: [{url: /a}], repeat: {count: 2}}]\n" + flowPlan("- url: /a\n"), false, false},
		{"repeat and loop", "setup: [{url: /a, loop: {count: 2}, repeat: {count: 2}}]\n" + flowPlan("- url: /a\n"), false, false},

		// Known differences: the loader reads any scalar as text, and YAML
		// 1.1 booleans; the schema asks for the clearer form.
		{"quoted number for vus", scenarioPlan("vus: '2'\niterations: 1\n", "- url: /a\n"), false, true},
		{"yes for a boolean", planHead + "http: {keep_alive: yes}\n" + flowPlan("- url: /a\n")[len(planHead):], false, true},
		{"number as a name", scenarioPlan("vus: 1\niterations: 1\n", "- {name: 42, url: /a}\n"), false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v any
			if err := yaml.Unmarshal([]byte(c.src), &v); err != nil {
				t.Fatalf("test plan is not YAML: %v\n%s", err, c.src)
			}
			serr := s.Validate(jsonCompatible(v))
			_, lerr := plan.Parse([]byte(c.src), "case.yaml", plan.Options{LookupEnv: anyEnv})
			if (serr == nil) != c.schemaOK {
				t.Errorf("schema: accepted=%v, want %v: %v\n%s", serr == nil, c.schemaOK, serr, c.src)
			}
			if (lerr == nil) != c.loaderOK {
				t.Errorf("plan loader: accepted=%v, want %v: %v\n%s", lerr == nil, c.loaderOK, lerr, c.src)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// summary.json.

func summaryRun() *metrics.Run {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ops := []metrics.Op{
		{Name: "GET item", Kind: metrics.KindStep, Scenario: "browse"},
		{Name: "browse", Kind: metrics.KindScenario, Scenario: "browse"},
	}
	step, iter := metrics.NewStats(), metrics.NewStats()
	for _, ms := range []int{3, 5, 8, 13} {
		step.Add(time.Duration(ms)*time.Millisecond, time.Duration(ms)*time.Millisecond, metrics.OK, 256)
		iter.Add(time.Duration(ms+1)*time.Millisecond, time.Duration(ms+1)*time.Millisecond, metrics.OK, 0)
	}
	step.Add(30*time.Millisecond, 30*time.Millisecond, metrics.HTTP5xx, 64)
	iter.Add(31*time.Millisecond, 31*time.Millisecond, metrics.HTTP5xx, 0)
	stage := &metrics.Phase{
		Index: 1, Name: "users=2", Values: []metrics.KV{{Name: "users", Value: "2"}},
		Start: t0, End: t0.Add(2 * time.Second), Ops: ops, Totals: []*metrics.Stats{step, iter},
		Load: []metrics.Load{{Scenario: "browse", VUs: 2, Iterations: 5, RampUpS: 0.5}},
	}
	return &metrics.Run{
		ID: "20261122-100000-shop", PlanName: "shop", PlanFile: "plan.yaml", PlanSource: []byte("name: shop\n"),
		Vars:      []metrics.Var{{Name: "users", Values: []string{"2", "4"}, Swept: true}, {Name: "ds", Values: []string{"perf"}}},
		Overrides: []metrics.KV{{Name: "ds", Value: "perf"}},
		Interval:  time.Second, Start: t0.Add(-time.Second), End: t0.Add(3 * time.Second),
		Status: metrics.StatusCompleted, Stages: []*metrics.Phase{stage},
	}
}

func summaryDoc(t *testing.T, s *results.Summary) any {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A summary written by results.Summarize matches the schema, and the schema
// is strict enough to notice a change.
func TestSummaryValidates(t *testing.T) {
	sch := summarySchema(t)
	sum := results.Summarize(summaryRun(), results.HostFacts())
	op := sum.Stages[0].Operations[0]
	if op.Failed == nil || op.Errors.Total != 1 || op.Count != 5 {
		t.Fatalf("the test run should have one failed request of five: %+v", op)
	}
	if err := sch.Validate(summaryDoc(t, sum)); err != nil {
		t.Errorf("summary.json does not match summary.schema.json: %v", err)
	}
	// A long run's verdict, as judge.Longevity makes it.
	slope := 3.5
	withDrift := *sum
	withDrift.Drift = &results.Drift{Degraded: true, Verdict: "degraded: ...", Method: "...", Alpha: 0.01, MinEffect: 0.2, MinErrorRise: 0.01, Tests: 4,
		Series: []results.DriftSeries{
			{Stage: "s", Name: "throughput", Kind: "throughput", Unit: "/s", Values: 20, SpanS: 40, Start: 164, End: 31,
				Trend:  &results.DriftTrend{P: 1e-6, Correction: 1.3, SlopePerHour: &slope},
				Change: &results.DriftChange{AtS: 2, Before: 164, After: 31, P: 1e-5}, P: 1e-5, PAdjusted: 3e-5, Significant: true,
				Verdict: results.DriftDegraded, Sentence: "throughput fell 81%", Points: [][2]float64{{0, 164}, {2, 31}}},
			{Stage: "s", Name: "error ratio", Kind: "errors", Unit: "%", Values: 5, Verdict: results.DriftTooShort, Sentence: "too short", Points: [][2]float64{}},
		}}
	if err := sch.Validate(summaryDoc(t, &withDrift)); err != nil {
		t.Errorf("a summary with a drift verdict does not match summary.schema.json: %v", err)
	}
	// An imported run's origin.
	imported := *sum
	imported.Origin = &results.Origin{Tool: "jmeter", File: "results.jtl", Samples: 5, NotCarried: []string{"each sample's Latency"}}
	if err := sch.Validate(summaryDoc(t, &imported)); err != nil {
		t.Errorf("an imported run's summary does not match summary.schema.json: %v", err)
	}

	// A stage whose load could pass the host's limits, judged.
	run := summaryRun()
	run.Stages[0].Limits = []metrics.HostLimit{
		{Kind: metrics.LimitOpenFiles, Need: 50000, Limit: 19988, Sentence: "stage 1 (s): 50000 sockets ..."},
		{Kind: metrics.LimitLocalPorts, Target: "127.0.0.1:8080", Need: 50000, Limit: 28232, Sentence: "stage 1 (s): 50000 connections to 127.0.0.1:8080 ..."},
	}
	limited := results.Summarize(run, results.HostFacts())
	judge.Generator(limited, 0)
	if err := sch.Validate(summaryDoc(t, limited)); err != nil {
		t.Errorf("a summary with host limits does not match summary.schema.json: %v", err)
	}

	// Changes the schema must notice.
	for name, change := range map[string]func(m map[string]any){
		"unknown key":    func(m map[string]any) { m["extra"] = 1 },
		"missing format": func(m map[string]any) { delete(m, "format") },
		"other format":   func(m map[string]any) { m["format"] = "perflab.summary/v2" },
		"bad time":       func(m map[string]any) { m["start"] = "yesterday" },
		"unknown error kind": func(m map[string]any) {
			op := m["stages"].([]any)[0].(map[string]any)["operations"].([]any)[0].(map[string]any)
			op["errors"].(map[string]any)["by_kind"].(map[string]any)["gremlins"] = json.Number("1")
		},
	} {
		doc := summaryDoc(t, sum).(map[string]any)
		change(doc)
		if sch.Validate(doc) == nil {
			t.Errorf("%s: the schema accepts a changed summary", name)
		}
	}
}

// Summaries perflab wrote before (report's golden file) match the schema.
func TestGoldenSummaryValidates(t *testing.T) {
	sch := summarySchema(t)
	files, _ := filepath.Glob("../report/testdata/summary.json")
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s does not match summary.schema.json: %v", f, err)
		}
	}
}
