package convert_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// assertion is a Response Assertion of test type typ on field.
func assertion(name, field string, typ int, assume bool, message string, patterns ...string) string {
	var items strings.Builder
	for _, p := range patterns {
		items.WriteString(sp("0", p))
	}
	return el("ResponseAssertion", name, `<collectionProp name="Asserion.test_strings">`+items.String()+`</collectionProp>`+
		sp("Assertion.test_field", field)+fmt.Sprintf(`<intProp name="Assertion.test_type">%d</intProp>`, typ)+
		bp("Assertion.assume_success", assume)+sp("Assertion.custom_message", message))
}

func jsonAssertion(name, path, expected string, validate, regex, null, invert bool) string {
	return el("JSONPathAssertion", name, sp("JSON_PATH", path)+sp("EXPECTED_VALUE", expected)+bp("JSONVALIDATION", validate)+
		bp("EXPECT_NULL", null)+bp("INVERT", invert)+bp("ISREGEX", regex))
}

// Response, JSON, Duration and Size Assertions are checks with JMeter's
// meaning: contains finds a regex, matches matches the whole, equals and
// substring are text; NOT negates each pattern, OR passes on any; a
// status assertion is check.status (Ignore Status lets it accept a 404);
// a JSON assertion passes on any element of an array. Each step fails
// (check_failed, http_4xx) where JMeter's sample fails, and with its
// custom message. An assertion on a variable checks its value, a JSON
// extractor's count of matches too.
func TestConvertAssertions(t *testing.T) {
	const body = `{"stock": true, "count": 5, "name": "abc", "none": null, "items": [{"s": "OPEN"}, {"s": "CLOSED"}]}`
	const (
		data    = "Assertion.response_data"
		code    = "Assertion.response_code"
		headers = "Assertion.response_headers"
	)
	// Assertions on a variable (Assertion.scope variable) check its value:
	// the count of a JSON extractor's matches (match number -1, JMeter's
	// NAME_matchNr), or an extracted value.
	onVariable := func(v string, typ int, pattern string) string {
		a := assertion("v", "Assertion.response_data", typ, false, "", pattern)
		return strings.Replace(a, "</ResponseAssertion>", sp("Assertion.scope", "variable")+sp("Scope.variable", v)+"</ResponseAssertion>", 1)
	}
	json := func(name, path, match string) string {
		return el("JSONPostProcessor", name, sp("JSONPostProcessor.referenceNames", name)+sp("JSONPostProcessor.jsonPathExprs", path)+
			sp("JSONPostProcessor.match_numbers", match))
	}
	states, name := json("states", "$.items[*].s", "-1"), json("name", "$.name", "1")
	cases := []struct {
		name  string
		check string
		fails string // the error kind of a failing step, "" when it passes
	}{
		{"contains", assertion("a", data, 2, false, "", `"stock": *true`), ""},
		{"contains fails", assertion("a", data, 2, false, "out of stock", `"stock": *false`), "check_failed"},
		{"matches whole", assertion("a", data, 1, false, "", `\{.*\}`), ""},
		{"matches a part", assertion("a", data, 1, false, "", `stock`), "check_failed"},
		{"equals", assertion("a", data, 8, false, "", body), ""},
		{"substring is text", assertion("a", data, 16, false, "", `a.c`), "check_failed"},
		{"not contains", assertion("a", data, 6, false, "", "error", "exception"), ""},
		{"not contains fails", assertion("a", data, 6, false, "", "error", "stock"), "check_failed"},
		{"or", assertion("a", data, 34, false, "", "zzz", `sto+ck`), ""},
		{"or substrings", assertion("a", data, 48, false, "", "zzz", `"count": 5`), ""},
		{"header", assertion("a", headers, 16, false, "", "Content-Type: application/json"), ""},
		{"status line", assertion("a", headers, 2, false, "", "HTTP/1.1 200"), ""},
		{"status line other", assertion("a", headers, 2, false, "", "HTTP/1.1 302"), "http_2xx"},
		{"status", assertion("a", code, 8, false, "", "200"), ""},
		{"status pattern", assertion("a", code, 1, false, "", `2\d\d`), ""},
		{"status other", assertion("a", code, 8, false, "", "201"), "http_2xx"},
		{"json exists", jsonAssertion("j", "$.count", "", false, false, false, false), ""},
		{"json missing", jsonAssertion("j", "$.missing", "", false, false, false, false), "check_failed"},
		{"json number", jsonAssertion("j", "$.count", "5", true, false, false, false), ""},
		{"json quoted", jsonAssertion("j", "$.name", `"abc"`, true, false, false, false), ""},
		{"json regex", jsonAssertion("j", "$.name", `a.c`, true, true, false, false), ""},
		{"json regex whole", jsonAssertion("j", "$.name", `a`, true, true, false, false), "check_failed"},
		{"json null", jsonAssertion("j", "$.none", "", true, false, true, false), ""},
		{"json any item", jsonAssertion("j", "$.items[*].s", "CLOSED", true, false, false, false), ""},
		{"json invert", jsonAssertion("j", "$.name", "xyz", true, false, false, true), ""},
		{"json invert missing", jsonAssertion("j", "$.missing", "", false, false, false, true), ""},
		{"duration", el("DurationAssertion", "d", sp("DurationAssertion.duration", "60000")), ""},
		{"size", el("SizeAssertion", "s", sp("SizeAssertion.size", fmt.Sprint(len(body)))+sp("SizeAssertion.operator", "1")+sp("Assertion.test_field", "SizeAssertion.response_data")), ""},
		{"size less", el("SizeAssertion", "s", sp("SizeAssertion.size", "3")+sp("SizeAssertion.operator", "4")+sp("Assertion.test_field", "SizeAssertion.response_data")), "check_failed"},
		{"variable count", states + onVariable("states_matchNr", 8, "2"), ""},
		{"variable count fails", states + onVariable("states_matchNr", 8, "3"), "check_failed"},
		{"variable value", name + onVariable("name", 2, "^a.c$"), ""},
		{"variable not", name + onVariable("name", 6, "x"), ""},
	}
	var samplers []string
	for _, c := range cases {
		samplers = append(samplers, get(c.name, "/item", c.check))
	}
	samplers = append(samplers,
		get("not found, ignored", "/missing", assertion("a", code, 8, true, "", "404")),
		get("not found", "/missing", assertion("a", code, 8, false, "", "404")),
		get("message", "/item", assertion("a", "Assertion.response_message", 2, false, "", "OK")),
	)
	res, got := runJMX(t, testPlan("assertions", "", 1, samplers...), func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	for _, c := range append(cases, struct{ name, check, fails string }{"not found, ignored", "", ""}, struct{ name, check, fails string }{"not found", "", "http_4xx"}) {
		op, ok := got.ops[c.name]
		if !ok || op.Count != 1 {
			t.Errorf("%s: ran %d times, want 1", c.name, op.Count)
			continue
		}
		var kinds []string
		for k := range op.Errors.ByKind {
			kinds = append(kinds, k)
		}
		if strings.Join(kinds, ",") != c.fails {
			t.Errorf("%s: failed with %q, want %q (%v)", c.name, kinds, c.fails, op.Errors.Details)
		}
	}
	if d := got.ops["contains fails"].Errors.Details["check_failed"]; !strings.HasPrefix(d, "out of stock (") {
		t.Errorf("the custom message is not said: %q", d)
	}
	if !hasNote(res, "message", "it checks the response's message") {
		t.Errorf("the assertion on the message is not listed: %q", res.Skipped)
	}
}

// Extractors set what JMeter's set: a regex's template group, from the
// headers, the N-th match or all (NAME_1 ..., NAME_matchNr), its default
// on a miss; a JSON extractor's several names; boundaries, CSS and XPath.
// A miss never fails the step, as in JMeter.
func TestConvertExtractors(t *testing.T) {
	regex := func(ref, re, tmpl, match, def, from string) string {
		return el("RegexExtractor", ref, sp("RegexExtractor.refname", ref)+sp("RegexExtractor.regex", re)+sp("RegexExtractor.template", tmpl)+
			sp("RegexExtractor.match_number", match)+sp("RegexExtractor.default", def)+sp("RegexExtractor.useHeaders", from))
	}
	jmx := testPlan("extractors", "", 1,
		get("page", "/page",
			regex("second", `id=(\d)-(\w)`, "$2$", "2", "", "false"),
			regex("token", `X-Token: (\w+)`, "$1$", "1", "", "true"),
			regex("all", `id=(\d)`, "$1$", "-1", "", "false"),
			regex("none", `zzz(\d)`, "$1$", "1", "nothing", "false"),
			regex("empty", `zzz(\d)`, "$1$", "1", "", "false"),
			el("JSONPostProcessor", "json", sp("JSONPostProcessor.referenceNames", "a;b;c")+sp("JSONPostProcessor.jsonPathExprs", "$.a;$.b[1];$.c")+
				sp("JSONPostProcessor.match_numbers", "1;1;1")+sp("JSONPostProcessor.defaultValues", "x;y;dc")),
		),
		get("html", "/html",
			el("BoundaryExtractor", "csrf", sp("BoundaryExtractor.refname", "csrf")+sp("BoundaryExtractor.lboundary", `name="csrf" value="`)+
				sp("BoundaryExtractor.rboundary", `"`)+sp("BoundaryExtractor.match_number", "1")),
			el("HtmlExtractor", "next", sp("HtmlExtractor.refname", "next")+sp("HtmlExtractor.expr", "a.next")+sp("HtmlExtractor.attribute", "href")+
				sp("HtmlExtractor.match_number", "1")),
			el("XPathExtractor", "title", sp("XPathExtractor.refname", "title")+sp("XPathExtractor.xpathQuery", "//title/text()")+bp("XPathExtractor.tolerant", true)),
		),
		get("use", "/use/${second}/${token}/${all_1}/${all_2}/${all_matchNr}/${none}/e${empty}e/${a}/${b}/${c}/${csrf}/${title}${next}"),
	)
	res, got := runJMX(t, jmx, func(w http.ResponseWriter, r *http.Request, n int) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("X-Token", "t0k")
			fmt.Fprint(w, `{"a": 1, "b": [2, 3], "text": "id=1-a id=2-b"}`)
		case "/html":
			fmt.Fprint(w, `<html><head><title>T</title></head><body><input name="csrf" value="c5"><a class="next" href="n2">next</a></body></html>`)
		}
	})
	want := "GET /use/b/t0k/1/2/2/nothing/ee/1/3/dc/c5/Tn2"
	if len(got.reqs) != 3 || got.reqs[2] != want {
		t.Errorf("the server saw %q, want %s last\n%s", got.reqs, want, res.Plan)
	}
	for name, op := range got.ops {
		if op.Errors.Total > 0 {
			t.Errorf("%s failed: %v", name, op.Errors.Details)
		}
	}
	if !hasNote(res, "empty", "without a default JMeter keeps the variable's value on a miss: perflab empties it") {
		t.Errorf("the regex without a default is not said: %q", res.Skipped)
	}
}
