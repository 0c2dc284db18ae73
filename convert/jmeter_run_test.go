package convert_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// A JMeter test plan written for a test: elements as XML, each followed by
// the hashTree of its children, as JMeter writes them.

// el is an element with its properties and children.
func el(tag, name, props string, kids ...string) string {
	return fmt.Sprintf(`<%s testclass=%q testname=%q>%s</%s><hashTree>%s</hashTree>`, tag, tag, xmlEscape(name), props, tag, strings.Join(kids, ""))
}

// off is el of a disabled element.
func off(tag, name, props string, kids ...string) string {
	return fmt.Sprintf(`<%s testclass=%q testname=%q enabled="false">%s</%s><hashTree>%s</hashTree>`, tag, tag, xmlEscape(name), props, tag, strings.Join(kids, ""))
}

func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sp is a string property, bp a boolean one.
func sp(name, value string) string {
	return fmt.Sprintf(`<stringProp name=%q>%s</stringProp>`, name, xmlEscape(value))
}

func bp(name string, v bool) string { return fmt.Sprintf(`<boolProp name=%q>%v</boolProp>`, name, v) }

// get is an HTTP Request of path (with its query) that follows redirects,
// and its children.
func get(name, path string, kids ...string) string {
	return req(name, "GET", path, "", kids...)
}

// req is an HTTP Request of method and path, with more properties.
func req(name, method, path, props string, kids ...string) string {
	return el("HTTPSamplerProxy", name, sp("HTTPSampler.path", path)+sp("HTTPSampler.method", method)+bp("HTTPSampler.follow_redirects", true)+props, kids...)
}

// args is a sampler's (or HTTP Request Defaults') parameters: name, value
// pairs, encoded by JMeter.
func args(pairs ...string) string {
	var b strings.Builder
	b.WriteString(`<elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments">`)
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, `<elementProp name=%q elementType="HTTPArgument">%s%s%s</elementProp>`, xmlEscape(pairs[i]),
			sp("Argument.name", pairs[i]), sp("Argument.value", pairs[i+1]), bp("HTTPArgument.always_encode", true))
	}
	b.WriteString(`</collectionProp></elementProp>`)
	return b.String()
}

// rawBody is a sampler's body, sent as it is.
func rawBody(body string) string {
	return bp("HTTPSampler.postBodyRaw", true) + `<elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments">` +
		`<elementProp name="" elementType="HTTPArgument">` + sp("Argument.value", body) + `</elementProp></collectionProp></elementProp>`
}

// udv is a User Defined Variables element of name, value pairs.
func udv(pairs ...string) string {
	var b strings.Builder
	b.WriteString(`<collectionProp name="Arguments.arguments">`)
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, `<elementProp name=%q elementType="Argument">%s%s</elementProp>`, xmlEscape(pairs[i]), sp("Argument.name", pairs[i]), sp("Argument.value", pairs[i+1]))
	}
	b.WriteString(`</collectionProp>`)
	return el("Arguments", "User Defined Variables", b.String())
}

// testPlan is a test plan of name: HTTP Request Defaults at 127.0.0.1 on
// the port of the property port (the test's server), the top elements,
// and a thread group of one thread and loops iterations holding body.
func testPlan(name string, top string, loops int, body ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>` +
		el("TestPlan", name, "",
			el("ConfigTestElement", "HTTP Request Defaults", `<elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments"/></elementProp>`+
				sp("HTTPSampler.domain", "127.0.0.1")+sp("HTTPSampler.port", "${__P(port,1)}")+sp("HTTPSampler.protocol", "http")),
			top,
			threadGroup("users", 1, loops, body...)) +
		`</hashTree></jmeterTestPlan>`
}

// threadGroup is a thread group of threads running loops iterations.
func threadGroup(name string, threads, loops int, body ...string) string {
	return group("ThreadGroup", name, threads, loops, body...)
}

// group is a thread group of kind tag (ThreadGroup; SetupThreadGroup, a
// setUp thread group; PostThreadGroup, a tearDown one) of threads running
// loops iterations.
func group(tag, name string, threads, loops int, body ...string) string {
	return el(tag, name, fmt.Sprintf(`<intProp name="ThreadGroup.num_threads">%d</intProp>`, threads)+
		`<elementProp name="ThreadGroup.main_controller" elementType="LoopController">`+sp("LoopController.loops", fmt.Sprint(loops))+`</elementProp>`,
		body...)
}

// convertJMX converts a test plan written at dir/plan.jmx.
func convertJMX(t *testing.T, jmx string) (*convert.Result, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.jmx")
	if err := os.WriteFile(path, []byte(jmx), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := convert.JMeter(strings.NewReader(jmx), path)
	if err != nil {
		t.Fatal(err)
	}
	return res, dir
}

// counter is a server that keeps each request it is sent (METHOD
// /path?query), answering with handle.
type counter struct {
	mu      sync.Mutex
	reqs    []string
	headers []http.Header
	bodies  []string
	handle  func(w http.ResponseWriter, r *http.Request, n int) // n: the requests before this one
}

func (s *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b)) // for handle
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, r.Method+" "+r.URL.RequestURI())
	s.headers = append(s.headers, r.Header.Clone())
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if s.handle != nil {
		s.handle(w, r, n)
	}
}

// ran is what a converted plan did on one engine: the server's requests in
// order, and the run's operations by name.
type ran struct {
	reqs    []string
	headers []http.Header
	bodies  []string
	ops     map[string]metrics.Summary
}

// runJMX converts a test plan and runs it against a server answering with
// handle, once on each engine (event loops, and a goroutine per VU), as a
// user would with --set port=PORT and the values sets gives. It fails
// when the converted plan does not load, or when the engines sent the
// server different requests.
func runJMX(t *testing.T, jmx string, handle func(w http.ResponseWriter, r *http.Request, n int), sets ...string) (*convert.Result, ran) {
	t.Helper()
	return runJMXOn(t, jmx, handle, true, sets...)
}

// runJMXOn is runJMX; same says whether both engines must send the same
// requests (not when the plan picks at random).
func runJMXOn(t *testing.T, jmx string, handle func(w http.ResponseWriter, r *http.Request, n int), same bool, sets ...string) (*convert.Result, ran) {
	t.Helper()
	return runJMXAt(t, t.TempDir(), jmx, handle, same, sets...)
}

// runJMXIn is runJMX with the test plan in dir, beside its data.
func runJMXIn(t *testing.T, dir, jmx string, handle func(w http.ResponseWriter, r *http.Request, n int), sets ...string) (*convert.Result, ran) {
	t.Helper()
	return runJMXAt(t, dir, jmx, handle, true, sets...)
}

func runJMXAt(t *testing.T, dir, jmx string, handle func(w http.ResponseWriter, r *http.Request, n int), same bool, sets ...string) (*convert.Result, ran) {
	t.Helper()
	jmxPath := filepath.Join(dir, "plan.jmx")
	if err := os.WriteFile(jmxPath, []byte(jmx), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := convert.JMeter(strings.NewReader(jmx), jmxPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := &counter{handle: handle}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, res.Plan, 0o644); err != nil {
		t.Fatal(err)
	}
	set := []plan.Override{{Name: "port", Value: ts.URL[strings.LastIndex(ts.URL, ":")+1:]}}
	for _, s := range sets {
		o, err := plan.ParseOverride(s)
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, o)
	}
	var out []ran
	for _, loop := range []bool{true, false} {
		p, err := plan.Load(path, plan.Options{Set: set})
		if err != nil {
			t.Fatalf("the converted plan does not load: %v\n%s", err, res.Plan)
		}
		p.HTTP.EventLoop = &loop
		srv.mu.Lock()
		srv.reqs, srv.headers, srv.bodies = nil, nil, nil
		srv.mu.Unlock()
		r, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		got := ran{ops: map[string]metrics.Summary{}}
		srv.mu.Lock()
		got.reqs, got.headers, got.bodies = slices.Clone(srv.reqs), slices.Clone(srv.headers), slices.Clone(srv.bodies)
		srv.mu.Unlock()
		for _, st := range r.Summary.Stages {
			for _, op := range st.Operations {
				got.ops[op.Name] = op.Summary
			}
		}
		out = append(out, got)
	}
	if same && !slices.Equal(out[0].reqs, out[1].reqs) {
		t.Errorf("the event loop sent %q, the goroutines %q", out[0].reqs, out[1].reqs)
	}

	return res, out[0]
}

// paths are the requests' paths (without their queries).
func paths(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		_, p, _ := strings.Cut(r, " ")
		p, _, _ = strings.Cut(p, "?")
		out = append(out, p)
	}
	return out
}

// hasNote reports whether a note of the result says what, of an element
// named name.
func hasNote(res *convert.Result, name, what string) bool {
	for _, s := range res.Skipped {
		if strings.Contains(s, `"`+name+`"`) && strings.Contains(s, what) {
			return true
		}
	}
	return false
}
