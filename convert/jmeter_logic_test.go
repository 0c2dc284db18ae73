package convert_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perflab/perflab/convert"
)

// module is a Module Controller naming the element at path.
func module(name string, path ...string) string {
	var items strings.Builder
	for _, p := range path {
		items.WriteString(sp("n", p))
	}
	return el("ModuleController", name, `<collectionProp name="ModuleController.node_path">`+items.String()+`</collectionProp>`)
}

// A Module Controller runs the element its path names where it stands: a
// Test Fragment (disabled, as fragments often are: JMeter takes it
// anyway), the last of two of one name, a controller that also runs where
// it is, the WorkBench's of an old plan. Each is a fragment the flow uses,
// whose steps are one operation wherever they run; a module that names
// itself, or nothing, is listed.
func TestConvertModules(t *testing.T) {
	top := off("TestFragmentController", "Login", "", get("old login", "/old")) +
		off("TestFragmentController", "Login", "", get("login", "/login"), el("ConstantTimer", "wait", sp("ConstantTimer.delay", "10"))) +
		el("TestFragmentController", "Unused", "", get("never", "/never")) +
		el("TestFragmentController", "Loop", "", module("myself", "Test Plan", "modules", "Loop"))
	jmx := testPlan("modules", top, 2,
		module("log in", "Test Plan", "modules", "Login"),
		el("GenericController", "shop", "", get("a", "/a")),
		module("shop again", "Test Plan", "modules", "users", "shop"),
		module("log in again", "Test Plan", "modules", "Login"),
		module("lost", "Test Plan", "modules", "Nowhere"),
		module("loop", "Test Plan", "modules", "Loop"),
	)
	jmx = strings.Replace(jmx, "</hashTree></jmeterTestPlan>", el("WorkBench", "WorkBench", "", get("bench", "/bench"))+"</hashTree></jmeterTestPlan>", 1)
	jmx = strings.Replace(jmx, module("lost", "Test Plan", "modules", "Nowhere"), module("lost", "Test Plan", "modules", "Nowhere")+module("bench", "WorkBench", "WorkBench", "bench"), 1)
	res, got := runJMX(t, jmx, nil)
	want := []string{"/login", "/a", "/a", "/login", "/bench"}
	want = append(want, want...)
	if !slices.Equal(paths(got.reqs), want) {
		t.Errorf("the server saw %q, want %q\n%s", paths(got.reqs), want, res.Plan)
	}
	if n := got.ops["login"].Count; n != 4 {
		t.Errorf("login: %d, want 4 (one operation for both uses)", n)
	}
	for _, w := range []string{"fragments:\n  Login:\n    - think: 10ms\n    - name: login", "  shop:\n    - name: a\n", "- use: Login\n", "- use: shop\n", "- use: bench\n"} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	for name, what := range map[string]string{
		"lost":   "its target Test Plan > modules > Nowhere is not in the plan",
		"myself": "holds this Module Controller",
		"Unused": "a Test Fragment no Module or Include Controller uses",
	} {
		if !hasNote(res, name, what) {
			t.Errorf("no note of %s: %q", name, res.Skipped)
		}
	}
	if len(res.Elements.Dropped) > 0 {
		t.Errorf("dropped %q", res.Elements.Dropped)
	}
}

// An Include Controller runs the first enabled Test Fragment of the file
// it names, read from the plan's directory, as a fragment.
func TestConvertInclude(t *testing.T) {
	inc := `<?xml version="1.0" encoding="UTF-8"?><jmeterTestPlan version="1.2"><hashTree>` +
		el("TestPlan", "library", "",
			off("TestFragmentController", "disabled", "", get("no", "/no")),
			el("TestFragmentController", "search", "", get("search", "/search?q=${term}"))) +
		`</hashTree></jmeterTestPlan>`
	jmx := testPlan("include", udv("term", "pens"), 2,
		el("IncludeController", "search library", sp("IncludeController.includepath", "lib/search.jmx")),
		get("a", "/a"),
		el("IncludeController", "missing", sp("IncludeController.includepath", "lib/none.jmx")))
	res, dir := convertJMX(t, jmx)
	if !strings.Contains(strings.Join(res.Skipped, "\n"), "none.jmx cannot be read") {
		t.Errorf("the missing file is not said: %q", res.Skipped)
	}
	// Now with the file beside the plan.
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "lib", "search.jmx"), []byte(inc), 0o644)
	res, err := convert.JMeter(strings.NewReader(jmx), filepath.Join(dir, "plan.jmx"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Plan), "fragments:\n  search:\n    - name: search\n      url: /search?q=${term}") {
		t.Errorf("no fragment search:\n%s", res.Plan)
	}
	_ = dir
}

// A Loop Controller is a loop of its count, never unrolled; a Once Only
// Controller runs in a VU's first iteration, or, inside a loop, in the
// loop's first pass (JMeter's nearest loop); -1 loops until the end.
func TestConvertLoopAndOnce(t *testing.T) {
	jmx := testPlan("loops", "", 2,
		el("OnceOnlyController", "once", "", get("login", "/login")),
		el("LoopController", "three", sp("LoopController.loops", "3"),
			get("a", "/a"),
			el("OnceOnlyController", "first pass", "", get("b", "/b"))),
		el("LoopController", "by variable", sp("LoopController.loops", "${__P(n,2)}"), get("c", "/c")),
	)
	res, got := runJMX(t, jmx, nil)
	want := []string{"/login", "/a", "/b", "/a", "/a", "/c", "/c", "/a", "/b", "/a", "/a", "/c", "/c"}
	if !slices.Equal(paths(got.reqs), want) {
		t.Errorf("the server saw %q, want %q\n%s", paths(got.reqs), want, res.Plan)
	}
	if strings.Count(string(res.Plan), "name: a\n") != 1 || !strings.Contains(string(res.Plan), "count: 3") || !strings.Contains(string(res.Plan), "if: __jm__three__idx == 0") {
		t.Errorf("the loop is not a loop of 3 with the once on its first pass:\n%s", res.Plan)
	}
	_, got = runJMX(t, jmx, nil, "n=4")
	if n := strings.Count(strings.Join(got.reqs, ","), "/c"); n != 8 {
		t.Errorf("--set n=4 made %d requests of /c, want 8", n)
	}
	forever := testPlan("forever", "", 1, el("LoopController", "ever", sp("LoopController.loops", "-1"), get("a", "/a")))
	res, got = runJMX(t, forever, nil)
	if !strings.Contains(string(res.Plan), "while: \"true\"\n          max: 1000") || !hasNote(res, "ever", "loops for ever in a thread group without a duration") || len(got.reqs) != 1000 {
		t.Errorf("a loop for ever in a thread group of iterations: %d requests\n%s", len(got.reqs), res.Plan)
	}
	// What comes after a loop for ever is never reached, as in JMeter,
	// and listed; after one with a Flow Control Action that leaves it,
	// it is.
	after := testPlan("after", "", 1, el("LoopController", "ever", sp("LoopController.loops", "-1"), get("a", "/a")), get("after", "/after"))
	res, got = runJMX(t, after, nil)
	if strings.Contains(string(res.Plan), "/after") || !hasNote(res, "after", `never reached: it comes after the Loop Controller "ever"`) || len(got.reqs) != 1000 {
		t.Errorf("a sampler after a loop for ever: %d requests, %q\n%s", len(got.reqs), paths(got.reqs)[len(got.reqs)-1], res.Plan)
	}
	leaves := testPlan("leaves", "", 1, el("LoopController", "ever", sp("LoopController.loops", "-1"), get("a", "/a"),
		el("TestAction", "leave", sp("ActionProcessor.action", "6"))), get("after", "/after"))
	if res, _ = runJMX(t, leaves, nil); !strings.Contains(string(res.Plan), "/after") {
		t.Errorf("a sampler after a loop that a Flow Control Action leaves is left out:\n%s", res.Plan)
	}
}

// json answers each request with the JSON of its step's path, as JMeter's
// test plans expect.
func jsonBodies(bodies map[string]string) func(w http.ResponseWriter, r *http.Request, n int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, bodies[r.URL.Path])
	}
}

// If Controllers: JMeter's conditions in their usual forms (__jexl3,
// __groovy, JavaScript, a variable with useExpression, the last sample's
// success) become perflab's conditions, checked where JMeter checks them;
// one perflab cannot say is listed with the condition and its steps never
// run.
func TestConvertIf(t *testing.T) {
	ifc := func(name, cond string, useExpr bool, kids ...string) string {
		return el("IfController", name, sp("IfController.condition", cond)+bp("IfController.useExpression", useExpr), kids...)
	}
	jsonEx := func(name, path, def string) string {
		return el("JSONPostProcessor", "x "+name, sp("JSONPostProcessor.referenceNames", name)+sp("JSONPostProcessor.jsonPathExprs", path)+
			sp("JSONPostProcessor.match_numbers", "1")+sp("JSONPostProcessor.defaultValues", def))
	}
	jmx := testPlan("ifs", udv("mode", "fast", "flag", "TRUE"), 1,
		get("state", "/state", jsonEx("state", "$.state", "NOT_FOUND"), jsonEx("count", "$.count", "0"), jsonEx("missing", "$.missing", "NOT_FOUND")),
		ifc("jexl", `${__jexl3("${state}" == "open",)}`, true, get("jexl", "/jexl")),
		ifc("jexl not", `${__jexl3("${state}" != "open" || ${count} > 5)}`, true, get("never", "/never")),
		ifc("groovy", `${__groovy(vars.get("state").equals("open") && vars.get("count").toInteger() >= 3)}`, true, get("groovy", "/groovy")),
		ifc("groovy found", `${__groovy(!"NOT_FOUND".equals(vars.get("missing")))}`, true, get("found", "/found")),
		ifc("js", `"${state}" == "open" && "${mode}" === "fast"`, false, get("js", "/js")),
		ifc("variable", `${flag}`, true, get("variable", "/variable")),
		ifc("last ok", `${JMeterThread.last_sample_ok}`, true, get("ok", "/ok")),
		ifc("indexOf", `${__javaScript("${state}".indexOf("pe") != -1)}`, true, get("index", "/index")),
		ifc("null", `${__groovy(vars.get("unset") == null)}`, true, get("null", "/null")),
		ifc("script", `${__groovy(new File("x").exists())}`, true, get("script", "/script")),
		el("IfController", "each", sp("IfController.condition", `${__jexl3("${state}" == "open")}`)+bp("IfController.useExpression", true)+bp("IfController.evaluateAll", true),
			get("each 1", "/each1", jsonEx("state", "$.next", "x")), get("each 2", "/each2")),
	)
	res, got := runJMX(t, jmx, jsonBodies(map[string]string{"/state": `{"state":"open","count":3}`, "/each1": `{"next":"closed"}`}))
	want := []string{"/state", "/jexl", "/groovy", "/js", "/variable", "/ok", "/index", "/null", "/each1"}
	if !slices.Equal(paths(got.reqs), want) {
		t.Errorf("the server saw %q, want %q\n%s", paths(got.reqs), want, res.Plan)
	}
	for _, w := range []string{
		`if: (state == "open")`, `if: '!("NOT_FOUND" == missing)'`, `if: (state contains "pe")`, `if: '!defined("unset")'`, `if: response.ok`,
		`if: lower(trim(flag)) == "true"`, `if: ((state == "open") && (int(count) >= 3))`,
	} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	if !hasNote(res, "script", `its condition "${__groovy(new File(\"x\").exists())}" is not converted (new File): its steps never run`) {
		t.Errorf("the script's condition is not listed: %q", res.Skipped)
	}
}

// While Controllers: a blank condition runs the body, then again while
// its last sample succeeds; a condition reading what the body extracts is
// checked after the first pass (the body a fragment used twice); LAST
// checks the last sample before the first pass too.
func TestConvertWhile(t *testing.T) {
	while := func(name, cond string, kids ...string) string {
		return el("WhileController", name, sp("WhileController.condition", cond), kids...)
	}
	jmx := testPlan("whiles", "", 1,
		while("until it fails", "", get("poll", "/poll")),
		while("until done", `${__jexl3("${status}" != "done")}`,
			get("job", "/job", el("JSONPostProcessor", "status", sp("JSONPostProcessor.referenceNames", "status")+sp("JSONPostProcessor.jsonPathExprs", "$.status")))),
		get("fails", "/fails"),
		while("last", "LAST", get("never", "/never")),
	)
	res, got := runJMX(t, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		switch {
		case r.URL.Path == "/poll" && n >= 2, r.URL.Path == "/fails":
			w.WriteHeader(500)
		case r.URL.Path == "/job" && n >= 5:
			fmt.Fprint(w, `{"status":"done"}`)
		case r.URL.Path == "/job":
			fmt.Fprint(w, `{"status":"pending"}`)
		}
	})
	want := []string{"/poll", "/poll", "/poll", "/job", "/job", "/job", "/fails"}
	if !slices.Equal(paths(got.reqs), want) {
		t.Errorf("the server saw %q, want %q\n%s", paths(got.reqs), want, res.Plan)
	}
	for _, w := range []string{"- use: until it fails\n      - use: until it fails\n        loop:\n          while: response.ok", `while: (status != "done")`, "- loop:\n          while: response.ok\n        steps:\n          - name: never"} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
}

// A ForEach Controller goes over the values an extractor with match
// number -1 found (a list in perflab), its output variable each item.
func TestConvertForEach(t *testing.T) {
	jmx := testPlan("foreach", udv("color_1", "red", "color_2", "green"), 1,
		get("list", "/list", el("RegexExtractor", "ids", sp("RegexExtractor.refname", "id")+sp("RegexExtractor.regex", `"id":(\d+)`)+
			sp("RegexExtractor.template", "$1$")+sp("RegexExtractor.match_number", "-1"))),
		el("ForeachController", "each id", sp("ForeachController.inputVal", "id")+sp("ForeachController.returnVal", "one")+bp("ForeachController.useSeparator", true),
			get("item", "/items/${one}?n=${__jm__each id__idx}")),
		el("ForeachController", "each color", sp("ForeachController.inputVal", "color")+sp("ForeachController.returnVal", "c")+bp("ForeachController.useSeparator", true),
			get("color", "/colors/${c}")),
		get("count", "/count/${id_matchNr}"),
	)
	res, got := runJMX(t, jmx, jsonBodies(map[string]string{"/list": `[{"id":7},{"id":9},{"id":11}]`}))
	want := []string{"GET /list", "GET /items/7?n=0", "GET /items/9?n=1", "GET /items/11?n=2", "GET /colors/red", "GET /colors/green", "GET /count/3"}
	if !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q\n%s", got.reqs, want, res.Plan)
	}
}

// A Random Controller runs one child per pass, each as likely; a
// Throughput Controller in percent mode runs its steps in that share of
// the passes (a weighted choice: JMeter's is exact, perflab's random), in
// count mode per thread 1 once; a Switch Controller picks its child by
// number or name, else default; a Random Order Controller runs its
// children in order, said.
func TestConvertChoices(t *testing.T) {
	tc := func(name string, pct string, kids ...string) string {
		return el("ThroughputController", name, `<intProp name="ThroughputController.style">1</intProp>`+bp("ThroughputController.perThread", true)+
			`<FloatProperty><name>ThroughputController.percentThroughput</name><value>`+pct+`</value></FloatProperty>`, kids...)
	}
	sw := func(name, value string) string {
		return el("SwitchController", name, sp("SwitchController.value", value),
			get("zero "+name, "/"+name+"/0"), el("GenericController", "two", "", get("named "+name, "/"+name+"/two")),
			el("GenericController", "default", "", get("default "+name, "/"+name+"/default")))
	}
	jmx := testPlan("choices", udv("pick", "two", "other", "nothing"), 200,
		el("RandomController", "one of", "", get("r1", "/r1"), get("r2", "/r2"), get("r3", "/r3")),
		tc("a quarter", "25.0", get("quarter", "/quarter")),
		el("ThroughputController", "one", `<intProp name="ThroughputController.style">0</intProp>`+bp("ThroughputController.perThread", true)+
			`<intProp name="ThroughputController.maxThroughput">1</intProp>`, get("first", "/first")),
		sw("s1", "1"), sw("s2", "${pick}"), sw("s3", "${other}"), sw("s4", "7"),
	)
	res, got := runJMXOn(t, jmx, nil, false)
	n := map[string]int{}
	for _, p := range paths(got.reqs) {
		n[p]++
	}
	if n["/r1"]+n["/r2"]+n["/r3"] != 200 || n["/r1"] < 30 || n["/r2"] < 30 || n["/r3"] < 30 {
		t.Errorf("random: %v", n)
	}
	if n["/quarter"] < 20 || n["/quarter"] > 90 || n["/first"] != 1 {
		t.Errorf("throughput: %v", n)
	}
	for p, want := range map[string]int{"/s1/two": 200, "/s2/two": 200, "/s3/default": 200, "/s4/0": 200, "/s1/0": 0, "/s2/0": 0, "/s3/0": 0} {
		if n[p] != want {
			t.Errorf("switch: %s %d times, want %d: %v\n%s", p, n[p], want, n, res.Plan)
		}
	}
	if !strings.Contains(string(res.Plan), "weight: 25") || !strings.Contains(string(res.Plan), "weight: 75") {
		t.Errorf("the throughput controller's weights:\n%s", res.Plan)
	}
}

// An Ultimate Thread Group's rows start and stop threads together: the
// scenario's VUs follow their sum, a start of no duration taking 1 ms.
func TestConvertUltimateThreadGroup(t *testing.T) {
	row := func(v ...string) string {
		var b strings.Builder
		b.WriteString(`<collectionProp name="row">`)
		for _, x := range v {
			b.WriteString(sp("0", x))
		}
		b.WriteString(`</collectionProp>`)
		return b.String()
	}
	jmx := testPlan("ultimate", el("kg.apc.jmeter.threads.UltimateThreadGroup", "waves",
		`<collectionProp name="ultimatethreadgroupdata">`+row("10", "0", "10", "20", "5")+row("5", "15", "0", "10", "0")+`</collectionProp>`+
			`<elementProp name="ThreadGroup.main_controller" elementType="LoopController">`+sp("LoopController.loops", "-1")+`</elementProp>`,
		get("a", "/a")), 1)
	res, _ := convertJMX(t, jmx)
	want := `  - name: waves
    vus: 0
    ramp_vus:
      - target: 10
        duration: 10000ms
      - target: 10
        duration: 5000ms
      - target: 15
        duration: 1ms
      - target: 15
        duration: 10000ms
      - target: 10
        duration: 1ms
      - target: 10
        duration: 4998ms
      - target: 0
        duration: 5000ms
`
	if !strings.Contains(string(res.Plan), want) {
		t.Errorf("the plan lacks\n%s\n%s", want, res.Plan)
	}
}

// A Test Fragment inside a thread group runs where it stands, as a Simple
// Controller, besides where a Module Controller names it. A variable is
// read by flow order, the fragments used before included: one a
// controller's extractor set earlier is that value in a later controller
// (used there and by a module), not a CSV column of its name. One that
// may not be set where it is read (extracted only in an If that did not
// run) is sent as JMeter sends it, the text ${picked}.
func TestConvertFragmentsInPlaceAndFlowOrder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "points.csv"), []byte("csv-1\ncsv-2\n"), 0o644)
	csv := el("CSVDataSet", "points", sp("filename", "points.csv")+sp("variableNames", "sp")+bp("ignoreFirstLine", false)+sp("delimiter", ","))
	jmx := testPlan("fragments", udv("flag", "no")+csv, 2,
		module("log in", "Test Plan", "fragments", "users", "Login"),
		el("IfController", "never", sp("IfController.condition", `${__jexl3("${flag}" == "yes")}`)+bp("IfController.useExpression", true),
			get("pick", "/pick", regex("picked", `p=(\w+)`, "1"))),
		get("read", "/read?p=${picked}"),
		el("TransactionController", "Check-In", "", get("points", "/points", regex("sp", `sp=([\w-]+)`, "1"))),
		module("check out", "Test Plan", "fragments", "users", "Check-Out"),
		el("TransactionController", "Check-Out", "", get("use point", "/use?sp=${sp}")),
		el("TestFragmentController", "Login", "", get("login", "/login")),
	)
	res, got := runJMXIn(t, dir, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/points" {
			w.Write([]byte("sp=p-9"))
		}
	})
	once := []string{"GET /login", "GET /read?p=%24%7Bpicked%7D", "GET /points", "GET /use?sp=p-9", "GET /use?sp=p-9", "GET /login"}
	if want := append(once, once...); !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q\n%s", got.reqs, want, res.Plan)
	}
	for op, n := range map[string]int64{"login": 4, "use point": 4} {
		if got.ops[op].Count != n {
			t.Errorf("%s: %d, want %d (one operation for both uses)", op, got.ops[op].Count, n)
		}
	}
	if !strings.Contains(string(res.Plan), "url: /read?p=${picked:-$${picked}}") || strings.Contains(string(res.Plan), "Login: a Test Fragment no") {
		t.Errorf("the plan:\n%s\n%q", res.Plan, res.Skipped)
	}
}

// A CSV Data Set inside a loop (or in a Simple or Transaction Controller
// inside it) gives each pass of the loop a new line, read or not, as
// JMeter reads one as the controller around it starts a pass; one outside
// any loop gives a line an iteration. The line a pass takes is taken
// whether the pass reads it or not (JMeter's check-in passes take the
// check-out's user).
func TestConvertRowsOfALoop(t *testing.T) {
	dir := t.TempDir()
	// Their delimiters are JMeter's: a semicolon, a tab (written \t), a
	// comma; fields beyond the variables named are ignored.
	os.WriteFile(filepath.Join(dir, "users.csv"), []byte("u1;x\nu2;x;y\nu3\nu4\nu5\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "items.csv"), []byte("i1\tx\ni2\ni3\ni4\ni5\ni6\ni7\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "stores.csv"), []byte("s1\ns2\ns3\n"), 0o644)
	csv := func(name, file, col, delim string) string {
		return el("CSVDataSet", name, sp("filename", file)+sp("variableNames", col)+bp("ignoreFirstLine", false)+sp("delimiter", delim))
	}
	jmx := testPlan("rows", csv("stores", "stores.csv", "store", ","), 2,
		get("store", "/store?s=${store}"),
		el("LoopController", "passes", sp("LoopController.loops", "3"),
			csv("users", "users.csv", "user", ";"),
			el("GenericController", "items", "", csv("items", "items.csv", "item", `\t`)),
			el("IfController", "odd passes", sp("IfController.condition", `${__jexl3(${__jm__passes__idx} != 1)}`)+bp("IfController.useExpression", true),
				get("user", "/user?u=${user}")),
			get("item", "/item?i=${item}"),
		),
	)
	res, got := runJMXIn(t, dir, jmx, nil)
	want := []string{
		"GET /store?s=s1", "GET /user?u=u1", "GET /item?i=i1", "GET /item?i=i2", "GET /user?u=u3", "GET /item?i=i3",
		"GET /store?s=s2", "GET /user?u=u4", "GET /item?i=i4", "GET /item?i=i5", "GET /user?u=u1", "GET /item?i=i6",
	}
	if !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw\n%q, want\n%q\n%s", got.reqs, want, res.Plan)
	}
	for _, w := range []string{"rows: [users, items]", "delimiter: ;\n", `delimiter: \t` + "\n"} {
		if !strings.Contains(string(res.Plan), w) {
			t.Errorf("the plan lacks %q:\n%s", w, res.Plan)
		}
	}
	if len(res.Skipped) != 0 {
		t.Errorf("listed %q", res.Skipped)
	}
}

// Run Thread Groups consecutively is a plan whose scenarios run one after
// another: every request of the first thread group's threads before the
// second's.
func TestConvertConsecutiveThreadGroups(t *testing.T) {
	for _, serial := range []bool{true, false} {
		jmx := `<?xml version="1.0" encoding="UTF-8"?><jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>` +
			el("TestPlan", "serial", bp("TestPlan.serialize_threadgroups", serial),
				el("ConfigTestElement", "HTTP Request Defaults", `<elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments"/></elementProp>`+
					sp("HTTPSampler.domain", "127.0.0.1")+sp("HTTPSampler.port", "${__P(port,1)}")+sp("HTTPSampler.protocol", "http")),
				threadGroup("first", 2, 3, get("a", "/a"), get("b", "/b")),
				threadGroup("second", 2, 3, get("c", "/c"))) +
			`</hashTree></jmeterTestPlan>`
		res, got := runJMXOn(t, jmx, nil, false)
		if len(got.reqs) != 18 {
			t.Fatalf("serialize %v: %d requests, want 18: %q", serial, len(got.reqs), got.reqs)
		}
		if has := strings.Contains(string(res.Plan), "consecutive: true"); has != serial {
			t.Errorf("serialize %v: the plan says consecutive: %v\n%s", serial, has, res.Plan)
		}
		if !serial {
			continue
		}
		for i, r := range got.reqs {
			if first := r != "GET /c"; first != (i < 12) {
				t.Errorf("request %d is %s: want the first thread group's 12, then the second's 6: %q", i+1, r, got.reqs)
				break
			}
		}
	}
}

// A setUp thread group's controllers convert as a thread group's do, for
// perflab's setup runs a flow's logic: a Loop Controller of two samplers
// is a loop (its pass JMeter's __jm__NAME__idx), If Controllers are ifs on
// what setup extracted; a tearDown thread group's Loop Controller of one
// sampler is a loop too. The server sees JMeter's order: setUp's, the
// thread group's, tearDown's.
func TestConvertSetupLogic(t *testing.T) {
	ifc := func(name, cond string, kids ...string) string {
		return el("IfController", name, sp("IfController.condition", cond)+bp("IfController.useExpression", true), kids...)
	}
	setup := group("SetupThreadGroup", "before", 1, 1,
		get("state", "/state", el("JSONPostProcessor", "x state", sp("JSONPostProcessor.referenceNames", "state")+sp("JSONPostProcessor.jsonPathExprs", "$.state")+
			sp("JSONPostProcessor.match_numbers", "1")+sp("JSONPostProcessor.defaultValues", "NOT_FOUND"))),
		el("LoopController", "twice", sp("LoopController.loops", "2"),
			get("a", "/a?i=${__jm__twice__idx}"), get("b", "/b")),
		ifc("if ready", `${__jexl3("${state}" == "ready")}`, get("ready", "/ready?s=${state}")),
		ifc("if closed", `${__jexl3("${state}" == "closed")}`, get("closed", "/closed")))
	teardown := group("PostThreadGroup", "after", 1, 1,
		el("LoopController", "clean twice", sp("LoopController.loops", "2"), get("cleanup", "/cleanup")))
	jmx := testPlan("setup logic", setup+teardown, 1, get("main", "/main"))
	res, got := runJMX(t, jmx, jsonBodies(map[string]string{"/state": `{"state":"ready"}`}))
	want := []string{"GET /state", "GET /a?i=0", "GET /b", "GET /a?i=1", "GET /b", "GET /ready?s=ready", "GET /main", "GET /cleanup", "GET /cleanup"}
	if !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q\n%s", got.reqs, want, res.Plan)
	}
	plan := string(res.Plan)
	setupPart, _, _ := strings.Cut(plan[strings.Index(plan, "\nsetup:\n"):], "\nscenarios:\n")
	for _, w := range []string{"- loop:\n      count: 2\n      index: __jm__twice__idx\n", "- name: ready\n    if: (state == \"ready\")\n", "- name: closed\n    if: (state == \"closed\")\n"} {
		if !strings.Contains(setupPart, w) {
			t.Errorf("setup lacks %q:\n%s", w, plan)
		}
	}
	if !strings.Contains(plan, "teardown:\n  - loop:\n      count: 2\n") {
		t.Errorf("teardown has no loop:\n%s", plan)
	}
	if hasNote(res, "twice", "setUp") || strings.Contains(strings.Join(res.Skipped, "\n"), "logic in a setUp") {
		t.Errorf("setup's logic is listed: %q", res.Skipped)
	}
	// Setup has no duration to end a loop for ever: it is bounded, said.
	forever := testPlan("forever", group("SetupThreadGroup", "before", 1, 1, el("LoopController", "ever", sp("LoopController.loops", "-1"), get("a", "/a"))), 1, get("main", "/main"))
	res, _ = convertJMX(t, forever)
	if !strings.Contains(string(res.Plan), "setup:\n  - loop:\n      while: \"true\"\n      max: 1000\n") || !hasNote(res, "ever", "setup and teardown have no duration") {
		t.Errorf("a loop for ever in setup: %q\n%s", res.Skipped, res.Plan)
	}
}
