package convert_test

import (
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
	"github.com/perflab/perflab/internal/jmetertest"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
)

// recorder is a server that keeps each request's method, path, body and
// content type, answering as the JMeter test plan expects.
type recorder struct {
	mu      sync.Mutex
	reqs    []string
	headers []http.Header
}

func (s *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, fmt.Sprintf("%s %s %q %s", r.Method, r.URL.RequestURI(), b, r.Header.Get("Content-Type")))
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	fmt.Fprint(w, `{"stock":true}`)
}

func (s *recorder) sorted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.reqs)
	slices.Sort(out)
	return out
}

// The JMeter test plan, converted, makes the requests JMeter made: the
// same methods, paths, bodies and content types, as many of each, at a
// server that records them. What was not converted is said.
func TestConvertedPlanMakesJMetersRequests(t *testing.T) {
	jmx := filepath.Join(jmetertest.Project(), "src", "test", "jmeter", "plan.jmx")
	byJMeter := &recorder{}
	a := httptest.NewServer(byJMeter)
	defer a.Close()
	jmetertest.Run(t, a.URL, "plan.jmx", "csv")

	f, err := os.Open(jmx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := convert.JMeter(f, jmx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 1 || !strings.Contains(string(res.Plan), "# Not converted") || !strings.Contains(res.Skipped[0], `the property target.port has no default`) ||
		!strings.Contains(string(res.Plan), "once: true") {
		t.Errorf("skipped %q\n%s", res.Skipped, res.Plan)
	}
	byPerflab := &recorder{}
	b := httptest.NewServer(byPerflab)
	defer b.Close()
	runConverted(t, res.Plan, plan.Options{Set: []plan.Override{{Name: "target_port", Value: b.URL[strings.LastIndex(b.URL, ":")+1:]}}})
	want, got := byJMeter.sorted(), byPerflab.sorted()
	if len(want) != 300 || !slices.Equal(got, want) {
		t.Errorf("JMeter made %d requests, the converted plan %d; first differing: %s", len(want), len(got), firstDiff(want, got))
	}
}

// runConverted loads a converted plan as perflab run does and runs it.
func runConverted(t *testing.T, src []byte, o plan.Options) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, o)
	if err != nil {
		t.Fatalf("the converted plan does not load: %v\n%s", err, src)
	}
	if _, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q against %q", a[i], b[i])
		}
	}
	return "none (lengths differ)"
}

// Each element the converter knows becomes its part of the plan, which
// loads; each it does not know, or that is disabled, is listed with its
// path; JMeter's functions become perflab's placeholders where perflab has
// them.
func TestConvertElements(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "elements.jmx"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := convert.JMeter(strings.NewReader(string(src)), "elements.jmx")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	os.WriteFile(path, res.Plan, 0o644)
	os.WriteFile(filepath.Join(dir, "patrons.csv"), []byte("barcode,id\n1,a\n"), 0o644)
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Plan)
	}
	if len(p.Scenarios) != 1 || p.Scenarios[0].Name != "check-out" || len(p.Setup) != 1 || len(p.Teardown) != 1 {
		t.Errorf("scenarios %d, setup %d, teardown %d", len(p.Scenarios), len(p.Setup), len(p.Teardown))
	}
	for _, want := range []string{
		"target: http://${host}:${port}", "port: \"9130\"", "tenant: diku", "X-Okapi-Tenant: ${tenant}", "csv: patrons.csv",
		"vus: ${users}", "duration: 600s", "ramp_up: 30s", "min: 1000ms", "max: 3000ms", "on_error: next_iteration",
		"transaction: check-out", "url: /users?query=barcode==${raw:patrons.barcode}", "X-Okapi-Token: ${token}",
		"userId:\n                json: $.users[0].id\n                match: random\n                default: \"\"", "status: [200]",
		`"at":"${timestamp_ms}"`, `"n":"${random_1}"`, "- set:\n              random_1: 1 + int(random() * 9)\n", "regex: '\"okapiToken\":\"([^\"]+)\"'", "method: DELETE",
		"Content-Type: text/plain; charset=UTF-8", "cookies: \"off\"",
	} {
		if !strings.Contains(string(res.Plan), want) {
			t.Errorf("the plan lacks %q:\n%s", want, res.Plan)
		}
	}
	if strings.Contains(string(res.Plan), "/old") {
		t.Errorf("a disabled sampler is in the plan:\n%s", res.Plan)
	}
	want := []string{
		`ResultCollector "View Results Tree": a listener`,
	}
	if len(res.Skipped) != len(want) {
		t.Fatalf("skipped %q", res.Skipped)
	}
	for i, w := range want {
		if !strings.Contains(res.Skipped[i], w) || !strings.HasPrefix(res.Skipped[i], `TestPlan "circulation" / `) || !strings.Contains(string(res.Plan), "#   "+res.Skipped[i]) {
			t.Errorf("skipped[%d] %q, want %q, in the plan's comments too", i, res.Skipped[i], w)
		}
	}
}

func TestConvertRefusesOtherFiles(t *testing.T) {
	for src, want := range map[string]string{
		"":                     "x.jmx: EOF",
		"<html><body/></html>": "<html> where a JMeter test plan has <jmeterTestPlan><hashTree>",
		"<jmeterTestPlan><hashTree><ThreadGroup/><hashTree/></hashTree></jmeterTestPlan>": "no TestPlan element",
		"<jmeterTestPlan><hashTree>": "x.jmx: XML syntax error",
	} {
		if _, err := convert.JMeter(strings.NewReader(src), "x.jmx"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// Thread groups that throughput timers pace become arrival rates: a
// Constant Throughput Timer's samples a minute (per thread, or for the
// group), a Precise Throughput Timer's samples a period, a Throughput
// Shaping Timer's rows as a ramp, each over the steps of an iteration. A
// timer nested in a controller is listed; a CSV Data Set's variables name
// the columns of a file without a header line. The plan runs at a
// recording server and makes the requests its rates make.
func TestConvertThroughputTimers(t *testing.T) {
	res, err := convert.JMeter(mustOpen(t, filepath.Join("testdata", "throughput.jmx")), "throughput.jmx")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"columns: [sku, qty]", "url: /items/${items.sku}",
		"name: constant\n    vus: 4\n    rate: 4\n    max_vus: 4\n    duration: 2s\n",
		"name: precise\n    vus: 2\n    rate: 3\n    max_vus: 2\n    duration: 2s\n",
		"name: shaped\n    vus: 5\n    start_rate: 2\n    ramp_rate:\n      - target: 10\n        duration: 1s\n      - target: 10\n        duration: 1s\n    max_vus: 5\n",
	} {
		if !strings.Contains(string(res.Plan), want) {
			t.Errorf("the plan lacks %q:\n%s", want, res.Plan)
		}
	}
	if len(res.Skipped) != 3 || !strings.HasPrefix(res.Skipped[0], "names no host") ||
		!strings.Contains(res.Skipped[1], `ConstantThroughputTimer "nested": a throughput timer inside a controller`) ||
		!strings.Contains(res.Skipped[2], `ramp-up "1" s`) {
		t.Errorf("skipped %q", res.Skipped)
	}
	rec := &recorder{}
	ts := httptest.NewServer(rec)
	defer ts.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "items.csv"), []byte("a1,2\nb2,3\n"), 0o644)
	path := filepath.Join(dir, "plan.yaml")
	os.WriteFile(path, []byte(strings.Replace(string(res.Plan), "name: paced\n", "name: paced\ntarget: "+ts.URL+"\n", 1)), 0o644)
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Plan)
	}
	if _, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, r := range rec.sorted() {
		f := strings.Fields(r)
		n[f[0]+" "+strings.SplitN(f[1], "?", 2)[0]]++
	}
	// 4 iterations a second for 2 s; 3 a second for 2 s; 2 rising to 10 a
	// second over 1 s, then 10 for 1 s: 6 + 10. An iteration due at the
	// very end may or may not start.
	for path, want := range map[string]int{"GET /items/a1": 4, "GET /items/b2": 4, "POST /cart": 8, "GET /list": 6 + 16} {
		if got := n[path]; got < want-1 || got > want+1 {
			t.Errorf("%s: %d requests, want %d (±1): %v", path, got, want, n)
		}
	}
}

func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A sampler that follows redirects (Follow Redirects, Redirect
// Automatically) is a step that follows them, as perflab's steps do by
// default; one that does not takes the 3xx as it is (redirects: 0), as
// JMeter does: the server sees JMeter's requests.
func TestConvertRedirects(t *testing.T) {
	sampler := func(name, path, follow string) string {
		return `<HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="` + name + `"><stringProp name="HTTPSampler.path">` + path +
			`</stringProp><boolProp name="HTTPSampler.follow_redirects">` + follow + `</boolProp></HTTPSamplerProxy><hashTree/>`
	}
	jmx := `<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>
  <TestPlan testclass="TestPlan" testname="redirects"/>
  <hashTree>
    <ThreadGroup testclass="ThreadGroup" testname="g">
      <intProp name="ThreadGroup.num_threads">1</intProp>
      <elementProp name="ThreadGroup.main_controller" elementType="LoopController"><stringProp name="LoopController.loops">1</stringProp></elementProp>
    </ThreadGroup>
    <hashTree>` + sampler("follows", "/a", "true") + sampler("stays", "/b", "false") + `</hashTree>
  </hashTree>
</hashTree></jmeterTestPlan>`
	res, err := convert.JMeter(strings.NewReader(jmx), "redirects.jmx")
	if err != nil || len(res.Skipped) != 1 || !strings.HasPrefix(res.Skipped[0], "names no host") || strings.Count(string(res.Plan), "redirects: 0") != 1 {
		t.Fatalf("%v %q\n%s", err, res.Skipped, res.Plan)
	}
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		if r.URL.Path != "/done" {
			http.Redirect(w, r, "/done", http.StatusFound)
		}
	}))
	defer srv.Close()
	src := strings.Replace(string(res.Plan), "scenarios:", "target: "+srv.URL+"\nscenarios:", 1)
	runConverted(t, []byte(src), plan.Options{})
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "/a,/done,/b" {
		t.Errorf("the server saw %v, want /a,/done,/b", got)
	}
}
