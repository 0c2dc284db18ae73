package convert

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// OpenAPI converts an OpenAPI 3 description (YAML or JSON) into a starting
// plan: a scenario of one VU that calls each operation once, in the
// document's order, with the parameters and request bodies of its
// examples (or values made from their schemas), and checks the documented
// success statuses.
func OpenAPI(r io.Reader, file string) (*Result, error) {
	var root yaml.Node
	if err := yaml.NewDecoder(r).Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not an OpenAPI document (no mapping at the top)", file)
	}
	doc := root.Content[0]
	if v := scalar(get(doc, "openapi")); !strings.HasPrefix(v, "3.") {
		if scalar(get(doc, "swagger")) != "" {
			return nil, fmt.Errorf("%s: a Swagger 2.0 document: perflab converts OpenAPI 3 (convert it first, as swagger2openapi does)", file)
		}
		return nil, fmt.Errorf("%s: no \"openapi: 3.x\": not an OpenAPI 3 document", file)
	}
	o := &openapi{doc: doc, file: file}
	p := o.plan()
	if err := checkSends(p, file, "no operation under paths (get, put, post, delete, options, head, patch, trace)", o.skipped); err != nil {
		return nil, err
	}
	return render(p, o.skipped, nil, fmt.Sprintf("the OpenAPI description %s by perflab convert openapi: each operation once", filepath.Base(file)), "Every operation was converted.", "where")
}

type openapi struct {
	doc     *yaml.Node
	file    string
	skipped []string
}

func (o *openapi) skip(where, what string) { o.skipped = append(o.skipped, where+": "+what) }

// get is a mapping's value of key, nil if none.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// deref follows a local $ref (#/components/...), up to 32 times.
func (o *openapi) deref(n *yaml.Node, where string) *yaml.Node {
	for range 32 {
		ref := scalar(get(n, "$ref"))
		if ref == "" {
			return n
		}
		if !strings.HasPrefix(ref, "#/") {
			o.skip(where, "the reference "+ref+" to another document")
			return nil
		}
		t := o.doc
		for _, part := range strings.Split(ref[2:], "/") {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			if t = get(t, part); t == nil {
				o.skip(where, "the reference "+ref+" leads nowhere")
				return nil
			}
		}
		n = t
	}
	o.skip(where, "references that go round")
	return nil
}

// security sends the credentials of the document's first security
// requirement, from environment variables: an API key in a header, a
// bearer token, basic authentication. Others are listed.
func (o *openapi) security(p *planOut) {
	sec := get(o.doc, "security")
	if sec == nil || len(sec.Content) == 0 || sec.Content[0].Kind != yaml.MappingNode {
		return
	}
	schemes := get(get(o.doc, "components"), "securitySchemes")
	req := sec.Content[0]
	for i := 0; i+1 < len(req.Content); i += 2 {
		name := req.Content[i].Value
		sch := o.deref(get(schemes, name), "security "+name)
		env := strings.ToUpper(badVarChar.ReplaceAllString(name, "_"))
		header, value := "", ""
		switch typ, scheme := scalar(get(sch, "type")), strings.ToLower(scalar(get(sch, "scheme"))); {
		case typ == "apiKey" && scalar(get(sch, "in")) == "header":
			header, value = scalar(get(sch, "name")), "${env."+env+":-}"
		case typ == "http" && scheme == "bearer":
			header, value = "Authorization", "Bearer ${env."+env+":-}"
		case typ == "http" && scheme == "basic":
			header, value = "Authorization", "Basic ${env."+env+":-}"
		default:
			o.skip("security "+name, "authentication of type "+typ+" "+scheme+": add what it needs to the plan's headers")
			continue
		}
		if p.Headers == nil {
			p.Headers = map[string]string{}
		}
		p.Headers[header] = value
		o.skip("security "+name, "the credentials: set "+env+" in the environment (the plan sends "+header+" from it)")
	}
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func (o *openapi) plan() *planOut {
	title := scalar(get(get(o.doc, "info"), "title"))
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(o.file), filepath.Ext(o.file))
	}
	p := &planOut{Name: title, Vars: map[string]string{"base": "http://127.0.0.1:8080"}, Target: "${base}"}
	if servers := get(o.doc, "servers"); servers != nil && len(servers.Content) > 0 {
		s := servers.Content[0]
		u := scalar(get(s, "url"))
		if vars := get(s, "variables"); vars != nil {
			for i := 0; i+1 < len(vars.Content); i += 2 {
				u = strings.ReplaceAll(u, "{"+vars.Content[i].Value+"}", scalar(get(vars.Content[i+1], "default")))
			}
		}
		if pu, err := url.Parse(u); err == nil && pu.Scheme != "" && pu.Host != "" {
			p.Vars["base"] = pu.Scheme + "://" + pu.Host
			p.Target = "${base}" + strings.TrimSuffix(pu.Path, "/")
		} else if strings.HasPrefix(u, "/") {
			p.Target = "${base}" + strings.TrimSuffix(u, "/")
		}
	}
	o.security(p)
	sc := &scenarioOut{Name: "api", VUs: 1, Iterations: 1}
	paths := get(o.doc, "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		o.skip("paths", "none: the plan has no step")
	}
	for i := 0; paths != nil && i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, o.deref(paths.Content[i+1], "paths "+paths.Content[i].Value)
		if item == nil {
			continue
		}
		shared := get(item, "parameters")
		for _, m := range methods {
			if op := get(item, m); op != nil {
				if s := o.operation(strings.ToUpper(m), path, op, shared); s != nil {
					sc.Flow = append(sc.Flow, s)
				}
			}
		}
	}
	if sc.Flow == nil {
		sc.Flow = []*stepOut{}
	}
	p.Scenarios = []*scenarioOut{sc}
	return p
}

func (o *openapi) operation(method, path string, op, shared *yaml.Node) *stepOut {
	where := method + " " + path
	s := &stepOut{Name: where}
	if id := scalar(get(op, "operationId")); id != "" {
		s.Name = id
	}
	if method != "GET" {
		s.Method = method
	}
	var params []*yaml.Node
	for _, list := range []*yaml.Node{shared, get(op, "parameters")} {
		if list != nil {
			params = append(params, list.Content...)
		}
	}
	u := path
	for _, pn := range params {
		pn = o.deref(pn, where)
		if pn == nil {
			continue
		}
		name, in := scalar(get(pn, "name")), scalar(get(pn, "in"))
		required := scalar(get(pn, "required")) == "true"
		if !required && in != "path" {
			continue
		}
		v := o.example(pn, o.deref(get(pn, "schema"), where), where, 0)
		text := fmt.Sprint(v)
		switch in {
		case "path":
			u = strings.ReplaceAll(u, "{"+name+"}", url.PathEscape(text))
		case "query":
			if s.Query == nil {
				s.Query = map[string]string{}
			}
			s.Query[name] = text
		case "header":
			if s.Headers == nil {
				s.Headers = map[string]string{}
			}
			s.Headers[name] = text
		default:
			o.skip(where, "the "+in+" parameter "+name)
		}
	}
	s.URL = u
	if body := o.deref(get(op, "requestBody"), where); body != nil {
		content := get(body, "content")
		switch {
		case get(content, "application/json") != nil:
			mt := get(content, "application/json")
			s.JSON = o.example(mt, o.deref(get(mt, "schema"), where), where, 0)
		case content != nil && len(content.Content) > 0:
			o.skip(where, "a request body of "+content.Content[0].Value+" (only application/json is made)")
		}
	}
	var codes []int
	if rs := get(op, "responses"); rs != nil {
		for i := 0; i+1 < len(rs.Content); i += 2 {
			if c, err := strconv.Atoi(rs.Content[i].Value); err == nil && c >= 200 && c < 300 {
				codes = append(codes, c)
			}
		}
	}
	sort.Ints(codes)
	switch len(codes) {
	case 0:
	case 1:
		s.Check = map[string]any{"status": codes[0]}
	default:
		s.Check = map[string]any{"status": codes}
	}
	return s
}

// example is a value for a parameter, media type or schema: its example,
// its first example, the schema's example, default or first enum value, or
// one made from the schema's type.
func (o *openapi) example(n, schema *yaml.Node, where string, depth int) any {
	for _, from := range []*yaml.Node{get(n, "example"), firstExample(n), get(schema, "example"), get(schema, "default")} {
		if from != nil {
			var v any
			if from.Decode(&v) == nil {
				return v
			}
		}
	}
	if e := get(schema, "enum"); e != nil && len(e.Content) > 0 {
		var v any
		if e.Content[0].Decode(&v) == nil {
			return v
		}
	}
	if schema == nil || depth > 8 {
		return "x"
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		if list := get(schema, k); list != nil && len(list.Content) > 0 {
			if k == "allOf" {
				out := map[string]any{}
				for _, part := range list.Content {
					if m, ok := o.example(nil, o.deref(part, where), where, depth+1).(map[string]any); ok {
						for key, v := range m {
							out[key] = v
						}
					}
				}
				return out
			}
			return o.example(nil, o.deref(list.Content[0], where), where, depth+1)
		}
	}
	switch typ := scalar(get(schema, "type")); {
	case typ == "object" || get(schema, "properties") != nil:
		out := map[string]any{}
		props := get(schema, "properties")
		for i := 0; props != nil && i+1 < len(props.Content); i += 2 {
			out[props.Content[i].Value] = o.example(nil, o.deref(props.Content[i+1], where), where, depth+1)
		}
		return out
	case typ == "array":
		return []any{o.example(nil, o.deref(get(schema, "items"), where), where, depth+1)}
	case typ == "integer" || typ == "number":
		return 1
	case typ == "boolean":
		return true
	}
	switch scalar(get(schema, "format")) {
	case "uuid":
		return "00000000-0000-4000-8000-000000000001"
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "date":
		return "2026-01-01"
	case "email":
		return "user@example.com"
	}
	return "x"
}

// firstExample is the value of a media type's or parameter's first named
// example.
func firstExample(n *yaml.Node) *yaml.Node {
	ex := get(n, "examples")
	if ex == nil || ex.Kind != yaml.MappingNode || len(ex.Content) < 2 {
		return nil
	}
	return get(ex.Content[1], "value")
}
