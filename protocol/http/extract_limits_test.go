package http

import (
	"testing"

	"github.com/perflab/perflab/metrics"
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
