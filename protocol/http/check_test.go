package http

import (
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// sender sends one request on an engine: Client.Do (goroutines), and on
// Linux the event loop (checkLoopSender).
type sender struct {
	name string
	send func(t *testing.T, c *Client, r *Request, vars Vars) Result
}

var checkSenders = []sender{{"goroutines", func(_ *testing.T, c *Client, r *Request, vars Vars) Result {
	return c.Do(r, vars, &Scratch{})
}}}

// The bodies the check server answers.
const (
	checkJSON = `{"id":"c0a8","name":"Alice","count":5,"price":"12.5","state":"OPEN","nothing":null,` +
		`"items":[{"id":1,"state":"OPEN"},{"id":2,"state":"CLOSED"},{"id":3,"state":"OPEN"}],` +
		`"note":"` + "an exceptionally long note that goes on and on well past the length a detail shows of a value" + `"}`
	checkHTML = `<html><head><title>Shop</title></head><body><h1> Offers </h1>` +
		`<form><input type="hidden" name="csrf" value="t0k3n"></form>` +
		`<a class="item" href="/i/1">One</a><a class="item next" href="/i/2">Two</a><a class="item">No link</a></body></html>`
	checkXML = `<?xml version="1.0"?><feed><title>Feed</title><item id="a">first</item><item id="b">second</item><item id="c">third</item></feed>`
)

// checkServer answers /json, /html, /xml and /slow (JSON after 30 ms),
// with a session cookie and a token header; it counts the requests.
func checkServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		n.Add(1)
		w.Header().Set("X-Token", "abc")
		w.Header().Set("Set-Cookie", "sid=s3cr3t; Path=/")
		switch r.URL.Path {
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, checkHTML)
		case "/xml":
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, checkXML)
		case "/many": // more matches than an extraction reads
			io.WriteString(w, strings.Repeat("a", plan.MaxMatches+1))
		case "/exact":
			io.WriteString(w, strings.Repeat("a", plan.MaxMatches))
		case "/many.html":
			io.WriteString(w, "<html><body>"+strings.Repeat("<p>x</p>", plan.MaxMatches+1)+"</body></html>")
		case "/many.json":
			io.WriteString(w, "["+strings.Repeat("1,", plan.MaxMatches)+"1]")
		case "/deep.json": // 2900 arrays nested in each other: 4,203,550 levels in all
			io.WriteString(w, strings.Repeat("[", 2900)+strings.Repeat("]", 2900))
		case "/list.html": // 3000 items of one list
			io.WriteString(w, "<html><body><ul>"+strings.Repeat("<li>x</li>", 3000)+"</ul></body></html>")
		case "/nested.html": // each div's text is the innermost's
			io.WriteString(w, strings.Repeat("<div>", 20)+strings.Repeat("t", 100<<10)+strings.Repeat("</div>", 20))
		case "/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"no such item","code":"E404"}`)
			return
		case "/slow":
			time.Sleep(30 * time.Millisecond)
			fallthrough
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, checkJSON)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// checkCase is a step (its url, check and extract as YAML) and what it
// must give: the error kind, a detail that holds want, and variables.
type checkCase struct {
	name   string
	step   string
	kind   metrics.ErrKind
	detail string
	vars   map[string]string
}

// runCheckCases sends each case's step on every engine and compares.
func runCheckCases(t *testing.T, cases []checkCase) {
	runCheckCasesWith(t, Options{KeepAlive: true, Timeout: 5 * time.Second}, cases)
}

// runCheckCasesWith is runCheckCases with a client of opts.
func runCheckCasesWith(t *testing.T, opts Options, cases []checkCase) {
	srv, served := checkServer(t)
	var b strings.Builder
	fmt.Fprintf(&b, "target: %s\nvars: {prefix: Al, want: c0a8}\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [\n", srv.URL)
	for i, c := range cases {
		fmt.Fprintf(&b, "      {name: c%d, %s},\n", i, c.step)
	}
	b.WriteString("    ]}\n")
	p, err := plan.Parse([]byte(b.String()), "checks.yaml", plan.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	c := NewClient(opts)
	sent := int64(0)
	for _, eng := range checkSenders {
		for i, cs := range cases {
			r, err := Compile(p.Target, nil, p.Scenarios[0].Flow[i], 5*time.Second)
			if err != nil {
				t.Fatalf("%s: %v", cs.name, err)
			}
			vars := testenv.Vars{"prefix": "Al", "want": "c0a8"}
			res := eng.send(t, c, r, vars)
			sent++
			if res.Err != cs.kind || !strings.Contains(res.Detail, cs.detail) || cs.detail == "" && res.Detail != "" {
				t.Errorf("%s, %s: %q %q, want %q with %q", eng.name, cs.name, res.Err, res.Detail, cs.kind, cs.detail)
			}
			for k, want := range cs.vars {
				if got, ok := vars[k]; !ok || got != want {
					t.Errorf("%s, %s: ${%s} = %q (set: %v), want %q", eng.name, cs.name, k, got, ok, want)
				}
			}
		}
	}
	if got := served.Load(); got != sent {
		t.Errorf("the server answered %d requests, want %d", got, sent)
	}
}

// Each operator on each subject, passing and failing, on both engines;
// a failure is check_failed with a detail naming the assertion and the
// value seen.
func TestCheckThat(t *testing.T) {
	pass := func(name, that string) checkCase {
		return checkCase{name: name, step: "url: /json, check: {that: [" + that + "]}"}
	}
	fail := func(name, that, detail string) checkCase {
		return checkCase{name: name, step: "url: /json, check: {that: [" + that + "]}", kind: metrics.CheckFailed, detail: detail}
	}
	runCheckCases(t, []checkCase{
		pass("expr", `{expr: 'json("$.count") > 3 && response.status == 200 && header("Content-Type") contains "json"'}`),
		fail("expr false", `{expr: 'json("$.count") > 5'}`, `that[0] expr json("$.count") > 5: got "false"`),
		pass("expr value", `{expr: 'len(json("$.items[?@.state==''OPEN'']"))', equals: 2}`),
		pass("expr variable", `{expr: 'json("$.id") == want'}`),
		fail("expr fails to run", `{expr: 'json("$.name") > 5', not: true}`, `that[0] not expr json("$.name") > 5: json("$.name") > 5: invalid operation: string > int`),
		pass("exists", "{json: $.id, exists: true}"),
		fail("exists missing", "{json: $.nope, exists: true}", "that[0] json $.nope exists true: missing"),
		pass("exists false", "{json: $.nope, exists: false}"),
		pass("absent", "{json: $.nope, absent: true}"),
		fail("absent present", "{json: $.id, absent: true}", `that[0] json $.id absent true: got "c0a8"`),
		pass("null exists", "{json: $.nothing, exists: true, equals: 'null'}"),
		pass("equals", "{json: $.name, equals: Alice}"),
		fail("equals other", "{json: $.name, equals: Bob}", `that[0] json $.name equals Bob: got "Alice"`),
		pass("equals number", "{json: $.count, equals: 5.0}"),
		fail("equals number other", "{json: $.count, equals: 6}", "that[0] json $.count equals 6: got 5"),
		pass("equals placeholder", "{json: $.id, equals: '${want}'}"),
		pass("not_equals", "{json: $.name, not_equals: Bob}"),
		fail("not_equals same", "{json: $.name, not_equals: Alice}", `not_equals Alice: got "Alice"`),
		pass("contains header", "{header: Content-Type, contains: json}"),
		fail("contains header other", "{header: Content-Type, contains: xml}", `that[0] header Content-Type contains xml: got "application/json"`),
		pass("not_contains body", "{body: true, not_contains: Exception}"),
		fail("not_contains body found", "{body: true, not_contains: Alice}", `that[0] body not_contains Alice: got "{\"id\":\"c0a8\",`),
		fail("value cut", "{json: $.note, equals: short}", `... (93 bytes)`),
		pass("matches whole", "{json: $.name, matches: '[A-Z][a-z]+'}"),
		fail("matches part only", "{json: $.name, matches: '[A-Z]'}", `that[0] json $.name matches [A-Z]: got "Alice"`),
		pass("matches placeholder", "{json: $.name, matches: '${prefix}.*'}"),
		pass("not_matches", "{json: $.name, not_matches: '[0-9]+'}"),
		fail("not_matches matched", "{json: $.name, not_matches: '[A-Za-z]+'}", `not_matches [A-Za-z]+: got "Alice"`),
		pass("contains_match", "{json: $.name, contains_match: 'l+'}"),
		fail("contains_match none", "{json: $.name, contains_match: 'z'}", `contains_match z: got "Alice"`),
		pass("gt", "{json: $.count, gt: 3}"),
		fail("lt", "{json: $.count, lt: 5}", "that[0] json $.count lt 5: got 5"),
		pass("le", "{json: $.count, le: 5}"),
		fail("ge", "{json: $.count, ge: 6}", "ge 6: got 5"),
		pass("gt a string number", "{json: $.price, gt: 12}"),
		fail("gt not a number", "{json: $.name, gt: 1}", `that[0] json $.name gt 1: got "Alice", not a number`),
		fail("not a number under not", "{json: $.name, gt: 1, not: true}", `got "Alice", not a number`),
		pass("several operators", "{json: $.count, gt: 1, lt: 10}"),
		fail("several operators one fails", "{json: $.count, gt: 1, lt: 3}", "gt 1 lt 3: got 5"),
		pass("between size", "{size: true, between: [1, 65536]}"),
		fail("between size over", "{size: true, between: [1, 10]}", fmt.Sprintf("that[0] size between [1, 10]: got %d", len(checkJSON))),
		pass("one_of", "{json: $.state, one_of: [OPEN, CLOSED]}"),
		fail("one_of status", "{status: true, one_of: [201, 204]}", "that[0] status one_of [201, 204]: got 200"),
		pass("status equals", "{status: true, equals: 200}"),
		pass("header absent", "{header: X-Nope, absent: true}"),
		fail("header missing", "{header: X-Nope, not_contains: x}", "that[0] header X-Nope not_contains x: missing"),
		pass("any of several", "{json: '$.items[*].state', equals: CLOSED}"),
		fail("none of several", "{json: '$.items[*].state', equals: GONE}", `got "OPEN", "CLOSED", "OPEN" (3 values)`),
		pass("filter", `{json: "$.items[?@.state=='OPEN'].id", one_of: [1, 3]}`),
		pass("recursive descent", "{json: '$..id', equals: 3}"),
		fail("not", "{json: $.count, equals: 5, not: true}", "that[0] not json $.count equals 5: got 5"),
		pass("not other", "{json: $.count, equals: 6, not: true}"),
		pass("not missing", "{json: $.nope, equals: x, not: true}"),
		fail("message", `{json: $.count, equals: 6, message: "count must be 6"}`, "count must be 6 (that[0] json $.count equals 6: got 5)"),
		fail("second fails", "{json: $.id, exists: true}, {json: $.count, equals: 7}", "that[1] json $.count equals 7: got 5"),
		pass("duration", "{duration: true, lt: 1h}"),
		{name: "duration over", step: "url: /slow, check: {that: [{duration: true, lt: 5ms}]}", kind: metrics.CheckFailed, detail: "that[0] duration lt 5ms: got "},
		{name: "extracted first", step: "url: /json, extract: {x: $.id}, check: {that: [{json: $.id, equals: '${x}'}]}", vars: map[string]string{"x": "c0a8"}},
		{name: "status first", step: "url: /json, check: {status: 201, that: [{json: $.id, exists: true}]}", kind: metrics.StatusKind(200), detail: "status 200"},
	})
}

// Each kind of extraction, each match, each source, on both engines.
func TestExtract(t *testing.T) {
	ex := func(name, url, extract string, vars map[string]string) checkCase {
		return checkCase{name: name, step: "url: " + url + ", extract: {" + extract + "}", vars: vars}
	}
	one := func(v string) map[string]string { return map[string]string{"x": v} }
	runCheckCases(t, []checkCase{
		ex("json shorthand", "/json", "x: $.name", one("Alice")),
		ex("json first", "/json", "x: {json: '$.items[*].id'}", one("1")),
		ex("json last", "/json", "x: {json: '$.items[*].id', match: last}", one("3")),
		ex("json N", "/json", "x: {json: '$.items[*].id', match: 2}", one("2")),
		ex("json filter", "/json", `x: {json: "$.items[?@.state=='CLOSED'].id"}`, one("2")),
		ex("json all", "/json", "x: {json: '$.items[*].id', match: all}",
			map[string]string{"x": "[1,2,3]", "x_count": "3", "x_1": "1", "x_2": "2", "x_3": "3"}),
		ex("json all objects", "/json", `x: {json: "$.items[?@.state=='OPEN']", match: all}`,
			map[string]string{"x": `[{"id":1,"state":"OPEN"},{"id":3,"state":"OPEN"}]`, "x_count": "2", "x_2": `{"id":3,"state":"OPEN"}`}),
		ex("json all strings", "/json", "x: {json: '$.items[*].state', match: all}", map[string]string{"x": `["OPEN","CLOSED","OPEN"]`}),
		ex("json all none", "/json", "x: {json: '$.nope[*]', match: all}", map[string]string{"x": "[]", "x_count": "0"}),
		ex("json default", "/json", "x: {json: $.maybe, default: none}", one("none")),
		ex("json null", "/json", "x: $.nothing", one("")),
		{name: "json N beyond", step: "url: /json, extract: {x: {json: '$.items[*].id', match: 5}}", kind: metrics.ExtractFailed, detail: "nothing to extract for x"},
		{name: "json miss", step: "url: /json, extract: {opt: {json: $.maybe}}", kind: metrics.ExtractFailed, detail: "nothing to extract for opt"},
		ex("header", "/json", "x: {header: X-Token}", one("abc")),
		ex("regex", "/json", `x: {regex: '"name":"(\w+)"'}`, one("Alice")),
		ex("regex whole match", "/json", `x: {regex: 'C[A-Z]+'}`, one("CLOSED")),
		ex("regex group", "/json", `x: {regex: '"id":(\d),"state":"(\w+)"', group: 2}`, one("OPEN")),
		ex("regex group 0", "/json", `x: {regex: '"id":(\d)', group: 0}`, one(`"id":1`)),
		ex("regex all", "/json", `x: {regex: '"id":(\d)', match: all}`, map[string]string{"x": `["1","2","3"]`, "x_count": "3", "x_3": "3"}),
		ex("regex headers", "/json", `x: {regex: 'sid=(\w+)', from: headers}`, one("s3cr3t")),
		// Header lines end with LF alone, as JMeter keeps them: .+ takes
		// the value without the wire's CR.
		ex("regex header to the end of its line", "/json", `x: {regex: 'X-Token: (.+)', from: headers}`, one("abc")),
		// A status the step does not accept fails it, and its extractions
		// run all the same, as JMeter's extractors do.
		{name: "extract from an error", step: "url: /missing, extract: {x: $.code, y: {json: $.nope, default: none}}",
			kind: metrics.HTTP4xx, detail: "status 404", vars: map[string]string{"x": "E404", "y": "none"}},
		ex("regex url", "'/json?item=77'", `x: {regex: 'item=(\d+)', from: url}`, one("77")),
		ex("regex url placeholder", "'/json?item=${want}'", `x: {regex: 'item=(\w+)', from: url}`, one("c0a8")),
		ex("regex status", "/json", `x: {regex: '^(\d)', from: status}`, one("2")),
		ex("between", "/html", `x: {between: ['name="csrf" value="', '"']}`, one("t0k3n")),
		ex("between all", "/html", `x: {between: ['href="', '"'], match: all}`, map[string]string{"x_count": "2", "x_2": "/i/2"}),
		ex("between headers", "/json", `x: {between: ['sid=', ';'], from: headers}`, one("s3cr3t")),
		// An empty boundary is the text's start or end, as in JMeter's
		// Boundary Extractor (5.6.3 extracted these three from one body).
		ex("between, from the start", "/json", `x: {between: ['', '","name']}`, one(`{"id":"c0a8`)),
		ex("between, to the end", "/json", `x: {between: ['"note":"', '']}`, one(checkJSON[strings.Index(checkJSON, `"note":"`)+len(`"note":"`):])),
		ex("between, the whole text", "/json", `x: {between: ['', ''], match: all}`, map[string]string{"x_count": "1", "x_1": checkJSON}),
		ex("css attribute", "/html", "x: {css: 'a.next', attribute: href}", one("/i/2")),
		ex("css text", "/html", "x: {css: h1}", one("Offers")),
		ex("css all", "/html", "x: {css: a.item, attribute: href, match: all}", map[string]string{"x": `["/i/1","/i/2"]`, "x_count": "2"}),
		ex("css last text", "/html", "x: {css: a.item, match: last}", one("No link")),
		ex("xpath text", "/xml", "x: {xpath: '//title/text()'}", one("Feed")),
		ex("xpath attributes", "/xml", "x: {xpath: '//item/@id', match: all}", map[string]string{"x": `["a","b","c"]`, "x_count": "3"}),
		ex("xpath N", "/xml", "x: {xpath: '//item', match: 2}", one("second")),
		ex("xpath count", "/xml", "x: {xpath: 'count(//item)'}", one("3")),
		ex("xpath html", "/html", "x: {xpath: '//title'}", one("Shop")),
		{name: "xpath not xml", step: "url: /json, extract: {x: {xpath: '//a'}}", kind: metrics.ExtractFailed, detail: "nothing to extract for x"},
		{name: "css miss", step: "url: /html, extract: {x: {css: table}}", kind: metrics.ExtractFailed, detail: "nothing to extract for x"},
	})
}

// match: random picks among the matches, each in time.
func TestExtractRandom(t *testing.T) {
	srv, _ := checkServer(t)
	r, err := Compile(text(srv.URL), nil, &plan.Step{Name: "r", Method: "GET", URL: text("/json"),
		Extract: []*plan.Extract{{Name: "x", JSON: "$.items[*].id", Match: "random"}}}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{KeepAlive: true})
	seen := map[string]int{}
	for range 60 {
		vars := testenv.Vars{}
		if res := c.Do(r, vars, &Scratch{}); res.Err != metrics.OK {
			t.Fatal(res.Detail)
		}
		seen[vars["x"]]++
	}
	// Each of 3 values missing from 60 draws: 3 * (2/3)^60, about 1e-10.
	if len(seen) != 3 || seen["1"] == 0 || seen["2"] == 0 || seen["3"] == 0 {
		t.Errorf("random picks %v, want each of 1, 2, 3", seen)
	}
}

// A shorter list after a longer one empties the NAME_i it no longer has.
func TestExtractAllEmptiesStaleItems(t *testing.T) {
	srv, _ := checkServer(t)
	r, err := Compile(text(srv.URL), nil, &plan.Step{Name: "r", Method: "GET", URL: text("/json"),
		Extract: []*plan.Extract{{Name: "x", JSON: "$.items[?@.state=='OPEN'].id", Match: "all"}}}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	vars := testenv.Vars{"x_count": "4", "x_3": "old", "x_4": "old"}
	if res := NewClient(Options{}).Do(r, vars, &Scratch{}); res.Err != metrics.OK {
		t.Fatal(res.Detail)
	}
	if vars["x_count"] != "2" || vars["x_1"] != "1" || vars["x_2"] != "3" || vars["x_3"] != "" || vars["x_4"] != "" {
		t.Errorf("vars = %v", vars)
	}
}
