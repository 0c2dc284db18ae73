package http

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// Issue 37: match: all had no cap; on a 3 MiB response of "a", regex 'a'
// took 64 s and 1.24 GB. An extraction reads at most plan.MaxMatches
// matches: match: all, last and random, which read them all, fail past it
// as extract_failed, saying so; first and N stop at the one they take.
func TestExtractReadsAtMostMaxMatches(t *testing.T) {
	over := func(name, url, extract string) checkCase {
		return checkCase{name: name, step: "url: " + url + ", extract: {" + extract + "}", kind: metrics.ExtractFailed,
			detail: "extract x: more than 10000 matches (plan.MaxMatches)"}
	}
	runCheckCases(t, []checkCase{
		over("regex all", "/many", "x: {regex: a, match: all}"),
		over("regex last", "/many", "x: {regex: a, match: last}"),
		over("regex random", "/many", "x: {regex: a, match: random}"),
		over("between all", "/many.html", "x: {between: [<p>, </p>], match: all}"),
		over("css all", "/many.html", "x: {css: p, match: all}"),
		over("xpath all", "/many.html", "x: {xpath: //p, match: all}"),
		over("json all", "/many.json", "x: {json: '$[*]', match: all}"),
		{name: "regex first", step: "url: /many, extract: {x: {regex: a}}", vars: map[string]string{"x": "a"}},
		{name: "regex N", step: "url: /many, extract: {x: {regex: a, match: 10000}}", vars: map[string]string{"x": "a"}},
		{name: "regex all at the limit", step: "url: /exact, extract: {x: {regex: a, match: all}}",
			vars: map[string]string{"x_count": "10000", "x_10000": "a"}},
		{name: "regex last at the limit", step: "url: /exact, extract: {x: {regex: a, match: last}}", vars: map[string]string{"x": "a"}},
	})
}

// The values an extraction sets (and match: all's list of them) are
// plan.MaxExtractBytes at most: an element's text holds its children's,
// so a few nested elements of a big text make it many times over. (Under
// a limit of 1 MiB, so that the case is small.)
func TestExtractSetsAtMostMaxExtractBytes(t *testing.T) {
	defer func(n int) { maxExtractBytes = n }(maxExtractBytes)
	maxExtractBytes = 1 << 20
	runCheckCases(t, []checkCase{
		{name: "css all", step: "url: /nested.html, extract: {x: {css: div, match: all}}", kind: metrics.ExtractFailed,
			detail: "extract x: its values pass 1 MiB (plan.MaxExtractBytes)"},
		{name: "xpath all", step: "url: /nested.html, extract: {x: {xpath: //div, match: all}}", kind: metrics.ExtractFailed,
			detail: "extract x: its values pass 1 MiB (plan.MaxExtractBytes)"},
		{name: "css first", step: "url: /nested.html, extract: {x: {css: div}}"},
		{name: "regex all in the limit", step: "url: /nested.html, extract: {x: {regex: 't+', match: all}}", vars: map[string]string{"x_count": "1"}},
	})
}

// A JSON path with .. reads a body nested at most plan.MaxJSONDescent
// levels in all; past it, an extraction, a json check and a check of that
// say so and fail, a default or not.
func TestDescendantPathOnADeepBody(t *testing.T) {
	const why = "the body's values are nested 4203550 levels deep in all, past the 4194304 that a JSON path with .. reads (plan.MaxJSONDescent)"
	runCheckCases(t, []checkCase{
		{name: "extract", step: "url: /deep.json, extract: {x: {json: '$..x', default: none}}", kind: metrics.ExtractFailed, detail: "extract x: " + why},
		{name: "json check", step: "url: /deep.json, check: {json: {'$..x': ''}}", kind: metrics.CheckFailed, detail: "json $..x: " + why},
		{name: "that", step: "url: /deep.json, check: {that: [{json: '$..x', exists: false}]}", kind: metrics.CheckFailed, detail: why},
	})
}

// Issue 37: xpath took 5.1 GB for a 100 MB HTML body. A body over
// http.parse_limit is parsed into no tree: css, xpath and the JSON paths
// that would parse it fail, saying so, default or not; a JSON path of
// names and indexes, which parses nothing, reads it. (Under a limit of
// 16 KiB, so that the case is small.)
func TestParseLimit(t *testing.T) {
	const past = "past the 16 KiB that "
	runCheckCasesWith(t, Options{KeepAlive: true, Timeout: 5 * time.Second, ParseLimit: 16 << 10}, []checkCase{
		{name: "css", step: "url: /many.html, extract: {x: {css: p, default: none}}", kind: metrics.ExtractFailed,
			detail: "extract x: the body is 80034 bytes, " + past + "css parses (http.parse_limit)"},
		{name: "xpath", step: "url: /many.html, extract: {x: {xpath: //p}}", kind: metrics.ExtractFailed,
			detail: "extract x: the body is 80034 bytes, " + past + "xpath parses"},
		{name: "json tree", step: "url: /many.json, extract: {x: {json: '$[*]'}}", kind: metrics.ExtractFailed,
			detail: "extract x: the body is 20003 bytes, " + past + "a JSON path with filters, wildcards or .. parses"},
		{name: "json check", step: "url: /many.json, check: {json: {'$[?@ > 1]': 2}}", kind: metrics.CheckFailed,
			detail: "json $[?@ > 1]: the body is 20003 bytes, " + past},
		{name: "json of that", step: "url: /many.json, check: {that: [{json: '$[*]', exists: true}]}", kind: metrics.CheckFailed,
			detail: "the body is 20003 bytes, " + past},
		{name: "json fast", step: "url: /many.json, extract: {x: {json: '$[3]'}}", vars: map[string]string{"x": "1"}},
		{name: "regex", step: "url: /many.html, extract: {x: {regex: '<(p)>'}}", vars: map[string]string{"x": "p"}},
		{name: "css under the limit", step: "url: /html, extract: {x: {css: h1}}", vars: map[string]string{"x": "Offers"}},
	})
}

// The process parses as many bodies into trees at once as parses lets
// (Go's cores; one here), whatever the VUs: each waits its turn.
func TestParsesAtOnceAreBounded(t *testing.T) {
	defer func(p chan struct{}) { parses = p }(parses)
	parses = make(chan struct{}, 1)
	peakParsing.Store(0)
	srv, _ := checkServer(t)
	r, err := Compile(text(srv.URL), nil, &plan.Step{Name: "r", Method: "GET", URL: text("/many.html"),
		Extract: []*plan.Extract{{Name: "x", CSS: "p"}, {Name: "y", XPath: "//p", Match: "2"}}}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{KeepAlive: true})
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 4 {
		wg.Go(func() {
			for range 3 {
				vars := testenv.Vars{}
				if res := c.Do(r, vars, &Scratch{}); res.Err != metrics.OK || vars["x"] != "x" || vars["y"] != "x" {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 || peakParsing.Load() != 1 || parsing.Load() != 0 || len(parses) != 0 {
		t.Errorf("%d of 12 failed; %d parses at once at most, %d under way after, %d turns held; want none failed, 1, 0, 0",
			failed.Load(), peakParsing.Load(), parsing.Load(), len(parses))
	}
}

// Issue 37: //li[last()] over a 3 MB page ran for minutes: last() counts
// the list again for each item. An xpath evaluation moves across the
// document maxXPathSteps times at most (a smaller limit here, so that
// the case is quick); past it, it fails, saying so.
func TestXPathStepsBounded(t *testing.T) {
	defer func(n int) { maxXPathSteps = n }(maxXPathSteps)
	maxXPathSteps = 100000
	runCheckCases(t, []checkCase{
		{name: "quadratic", step: "url: /list.html, extract: {x: {xpath: '//li[last()]', default: none}}", kind: metrics.ExtractFailed,
			detail: "extract x: xpath //li[last()] moved across the document more than 100000 times (plan.MaxXPathSteps)"},
		{name: "count", step: "url: /list.html, extract: {x: {xpath: 'count(//li[position() = last()])'}}", kind: metrics.ExtractFailed,
			detail: "more than 100000 times"},
		// each div's value is the 100 KB text below it
		{name: "text", step: "url: /nested.html, extract: {x: {xpath: 'count(//div[contains(., \"z\")])'}}", kind: metrics.ExtractFailed,
			detail: "more than 100000 times"},
		{name: "linear", step: "url: /list.html, extract: {x: {xpath: '//li[1]'}}", vars: map[string]string{"x": "x"}},
		{name: "all", step: "url: /list.html, extract: {n: {xpath: 'count(//li)'}}", vars: map[string]string{"n": "3000"}},
	})
}
