package convert_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/convert"
)

// timer is a Uniform Random Timer of delay and range (a Constant Timer
// without range).
func timer(name string, delay, spread string) string {
	if spread == "" {
		return el("ConstantTimer", name, sp("ConstantTimer.delay", delay))
	}
	return el("UniformRandomTimer", name, sp("ConstantTimer.delay", delay)+sp("RandomTimer.range", spread))
}

// Timers wait before each sampler in their scope, their delays summed:
// those of the thread group alone are the scenario's think time (after
// each step: the same waits in the same order); otherwise each sampler
// with a delay has a pause step before it, in its transaction if it is in
// one. A Flow Control Action's pause adds its timers' delay. A Gaussian
// timer keeps its constant delay; a delay perflab cannot read is listed.
func TestConvertTimers(t *testing.T) {
	uniform := testPlan("uniform", "", 1, timer("think", "100", "50"), get("a", "/a"), el("TransactionController", "tx", "", get("b", "/b")))
	res, _ := convertJMX(t, uniform)
	if !strings.Contains(string(res.Plan), "think:\n      min: 100ms\n      max: 150ms\n") || strings.Contains(string(res.Plan), "- think:") {
		t.Errorf("the thread group's timer is not the scenario's think time:\n%s", res.Plan)
	}
	placed := testPlan("placed", "", 1,
		timer("everywhere", "10", ""),
		get("a", "/a", timer("own", "5", "")),
		el("TransactionController", "tx", "", timer("in tx", "20", "30"), get("b", "/b"), get("c", "/c")),
		el("TestAction", "pause", `<intProp name="ActionProcessor.action">1</intProp>`+sp("ActionProcessor.duration", "1000"), timer("before pause", "7", "")),
		get("d", "/d", el("GaussianRandomTimer", "gauss", sp("ConstantTimer.delay", "300")+sp("RandomTimer.range", "100"))),
		get("e", "/e", timer("script", "${__BeanShell(42)}", "")),
	)
	res, got := runJMX(t, placed, nil)
	want := `      - think: 15ms
      - name: a
        url: /a
      - transaction: tx
        steps:
          - think:
              min: 30ms
              max: 60ms
          - name: b
            url: /b
          - think:
              min: 30ms
              max: 60ms
          - name: c
            url: /c
      - think: 1017ms
      - think: 310ms
      - name: d
        url: /d
      - think: 10ms
      - name: e
        url: /e
`
	if !strings.Contains(string(res.Plan), want) {
		t.Errorf("the pauses are not before their samplers:\n%s", res.Plan)
	}
	if !slices.Equal(paths(got.reqs), []string{"/a", "/b", "/c", "/d", "/e"}) {
		t.Errorf("the server saw %q", got.reqs)
	}
	if !hasNote(res, "gauss", "without its deviation (100 ms)") || !hasNote(res, "script", "is not a number of milliseconds") {
		t.Errorf("the Gaussian and script timers are not said: %q", res.Skipped)
	}
}

// Variables come across as JMeter reads them: a User Defined Variable
// made of others is their value; a property is a variable --set gives; a
// CSV Data Set's file named by a variable is found; its columns are
// source.column, but a column an extractor sets too is a variable that a
// set: step gives the row's value as each iteration begins, and the
// extraction replaces, as in JMeter; a variable the plan
// reads before an extractor sets it is the text ${name} until then, as
// JMeter sends it; one that only a script sets is a variable of the plan,
// said, that --set gives.
func TestConvertVariables(t *testing.T) {
	csv := el("CSVDataSet", "items", sp("filename", "${dir}/items.csv")+sp("variableNames", "id,name")+bp("ignoreFirstLine", false)+sp("delimiter", ","))
	headers := el("HeaderManager", "headers", `<collectionProp name="HeaderManager.headers"><elementProp name="" elementType="Header">`+
		sp("Header.name", "X-Item")+sp("Header.value", "${name}")+`</elementProp></collectionProp>`)
	jmx := testPlan("variables", udv("dir", "data", "api", "/v${__P(version,1)}", "items", "${api}/items")+csv+headers, 2,
		get("first", "${items}/${id}?t=${token}"),
		get("login", "/login", el("RegexExtractor", "id", sp("RegexExtractor.refname", "id")+sp("RegexExtractor.regex", `id=(\w+)`)+
			sp("RegexExtractor.template", "$1$")+sp("RegexExtractor.match_number", "1")),
			el("RegexExtractor", "token", sp("RegexExtractor.refname", "token")+sp("RegexExtractor.regex", `t=(\w+)`)+
				sp("RegexExtractor.template", "$1$")+sp("RegexExtractor.match_number", "1"))),
		get("after", "${items}/${id}?s=${fromScript}"),
		el("JSR223Sampler", "sets fromScript", sp("scriptLanguage", "groovy")+sp("script", `vars.put("fromScript", "x" + 1)`)),
	)
	res, dir := convertJMX(t, jmx)
	for _, w := range []string{"csv: data/items.csv", "- set:\n          id: items.id", "url: /v${version}/items/${id}?t=${token:-$${token}}", "url: /v${version}/items/${id}?s=${fromScript}",
		"X-Item: ${items.name}", "fromScript: \"\"", "version: \"1\""} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	if !hasNote(res, "after", `${fromScript}: TestPlan "variables" / ThreadGroup "users" / JSR223Sampler "sets fromScript", not converted, sets it`) {
		t.Errorf("the script's variable is not said: %q", res.Skipped)
	}
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "items.csv"), []byte("7,pen\n8,ink\n"), 0o644)
	jmxPath := filepath.Join(dir, "plan.jmx")
	os.WriteFile(jmxPath, []byte(jmx), 0o644)
	_ = convert.JMeter
	_, got := runJMXIn(t, dir, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/login" {
			w.Write([]byte("id=x9 t=tk"))
		}
	}, "version=2", "fromScript=s")
	want := []string{"GET /v2/items/7?t=%24%7Btoken%7D", "GET /login", "GET /v2/items/x9?s=s", "GET /v2/items/8?t=tk", "GET /login", "GET /v2/items/x9?s=s"}
	if !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q", got.reqs, want)
	}
	if len(got.headers) == 6 && (got.headers[0].Get("X-Item") != "pen" || got.headers[3].Get("X-Item") != "ink") {
		t.Errorf("X-Item: %q, %q", got.headers[0].Get("X-Item"), got.headers[3].Get("X-Item"))
	}
}

// The functions JMeter computes each time a sampler reads them, a random
// string, a random number and the time, are set: steps just before the
// step that reads them, a variable per call: two calls in one body give
// two values, and each pass of a loop new ones, on both engines; in setup
// as in a scenario.
func TestConvertFunctionsComputedEachTime(t *testing.T) {
	body := `{"s":"${__RandomString(12,ab)}","pair":"${__RandomString(16)}-${__RandomString(16)}","day":"${__time(yyyy-MM-dd'T'HH)}",` +
		`"r":"${__Random(3,4)}","sec":"${__time(/1000)}","ms":"${__time(,stamp)}"}`
	setup := group("SetupThreadGroup", "before", 1, 1, get("first", "/first?s=${__RandomString(3,x)}"))
	jmx := testPlan("functions", setup, 2,
		el("LoopController", "twice", sp("LoopController.loops", "2"), req("post", "POST", "/f", rawBody(body))),
		get("read", "/r?stamp=${stamp}"))
	var mu sync.Mutex
	var bodies, stamps []string
	res, _ := runJMXOn(t, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/r":
			stamps = append(stamps, r.URL.Query().Get("stamp"))
			return
		case "/first":
			if r.URL.RawQuery != "s=xxx" {
				t.Errorf("setup sent %s", r.URL.RequestURI())
			}
			return
		}
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
	}, false)
	for _, w := range []string{"- set:\n              randomString_2: randomString(12, \"ab\")\n              randomString_3: randomString(16)\n              randomString_4: randomString(16)\n",
		"stamp: now().UnixMilli()", `"day":"${time_1}"`, "/r?stamp=${stamp}",
		"setup:\n  - set:\n      randomString_1: randomString(3, \"x\")\n  - name: first\n    url: /first?s=${randomString_1}\n"} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	shape := regexp.MustCompile(`^\{"s":"[ab]{12}","pair":"([A-Za-z0-9]{16})-([A-Za-z0-9]{16})","day":"` + time.Now().Format("2006-01-02") + `T\d\d","r":"[34]","sec":"(\d{10})","ms":"(\d{13})"\}$`)
	if len(bodies) != 2*2*2 || len(stamps) != 2*2 {
		t.Fatalf("the server read %d bodies and %d stamps, want 8 and 4 (2 engines, 2 iterations, 2 passes)", len(bodies), len(stamps))
	}
	seen := map[string]bool{}
	for i, b := range bodies {
		m := shape.FindStringSubmatch(b)
		if m == nil {
			t.Errorf("body %d: %s", i, b)
			continue
		}
		if m[1] == m[2] || seen[m[1]] {
			t.Errorf("body %d: the random strings %s and %s were drawn before", i, m[1], m[2])
		}
		seen[m[1]], seen[m[2]] = true, true
		if ms, sec := m[4], m[3]; ms[:9] != sec[:9] && ms[:8] != sec[:8] {
			t.Errorf("body %d: %s ms and %s s are not the same time", i, ms, sec)
		}
		if i%2 == 1 && i/2 < len(stamps) && stamps[i/2] != m[4] {
			t.Errorf("the named variable stamp is %s after the loop, want the last pass's %s", stamps[i/2], m[4])
		}
	}
}
