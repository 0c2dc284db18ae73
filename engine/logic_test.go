package engine

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/metrics"
)

// The flow's logic, run on each engine (engineTests), counted by the
// server: a step once per VU, a loop over the list a response gave (by an
// RFC 9535 filter), a condition with an else, a weighted choice, a while
// loop bounded by max, a counted loop, a fragment used twice.
func TestFlowLogic(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/list" {
			io.WriteString(w, `{"items":[{"id":1,"state":"OPEN"},{"id":2,"state":"CLOSED"},{"id":3,"state":"OPEN"}]}`)
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
fragments:
  audit:
    - {name: audit, url: /audit}
scenarios:
  - name: s
    vus: 4
    iterations: 50
    flow:
      - {name: login, url: /login, once: true}
      - {name: list, url: /list}
      - name: each open item
        loop: {over: 'json("$.items[?@.state==''OPEN''].id")', as: id, index: i}
        steps:
          - {name: item, url: "/item/${id}?i=${i}"}
      - use: audit
      - if: response.status == 200 && iteration % 2 == 0
        steps: [{name: even, url: /even}]
        else: [{name: odd, url: /odd}]
      - choose:
          - {weight: 3, steps: [{name: a, url: /a}]}
          - {weight: 1, steps: [{name: b, url: /b}]}
          - {weight: 0, steps: [{name: never, url: /never}]}
      - name: poll
        loop: {while: iteration >= 0, max: 3}
        steps: [{name: poll, url: /poll}]
      - {name: twice, url: /twice, loop: {count: 2}}
      - use: audit
`, nil)
	r := run(t, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[string]int{"GET /login": 4, "GET /list": 200, "GET /item/1": 200, "GET /item/3": 200, "GET /audit": 400,
		"GET /even": 100, "GET /odd": 100, "GET /poll": 600, "GET /twice": 400}
	for path, n := range want {
		if c.counts[path] != n {
			t.Errorf("%s: the server saw %d, want %d", path, c.counts[path], n)
		}
	}
	a, b := c.counts["GET /a"], c.counts["GET /b"]
	if a+b != 200 || c.counts["GET /never"] != 0 || a < 120 || a > 180 {
		t.Errorf("choose: a %d, b %d, never %d; want 200 in all, about 150 of them a", a, b, c.counts["GET /never"])
	}
	for name, path := range map[string]string{"login": "GET /login", "item": "", "audit": "GET /audit", "poll": "GET /poll", "a": "GET /a"} {
		s := op(t, r.Stages[0], name)
		want := int64(c.counts[path])
		if name == "item" {
			want = int64(c.counts["GET /item/1"] + c.counts["GET /item/3"])
		}
		if s.Count != want || s.ErrorCount() != 0 {
			t.Errorf("%s: perflab counted %d (%v errors), the server %d", name, s.Count, s.Errors, want)
		}
	}
	if it := op(t, r.Stages[0], "s"); it.Count != 200 || it.ErrorCount() != 0 {
		t.Errorf("iterations %d, errors %v", it.Count, it.Errors)
	}
	// No step followed a redirect: none has a redirects' operation, in a
	// loop, a branch or a fragment alike.
	for _, o := range r.Stages[0].Ops {
		if strings.HasSuffix(o.Name, "(redirect)") || strings.HasSuffix(o.Name, "(auth)") {
			t.Errorf("an operation of hops that did not happen: %s", o.Name)
		}
	}
}

// Weights too large to add up (1e308 twice is beyond a float64) still
// split by their ratio: the sum overflowed to +Inf and every pass took the
// last branch. The server counts the branches taken: the weights
// (0, 1e308, 1e308), and two unequal ones.
func TestChooseHugeWeights(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 1
    iterations: 200
    flow:
      - choose:
          - {weight: 0, steps: [{name: a, url: /a}]}
          - {weight: 1e308, steps: [{name: b, url: /b}]}
          - {weight: 1e308, steps: [{name: c, url: /c}]}
      - choose:
          - {weight: 1e308, steps: [{name: d, url: /d}]}
          - {weight: 1.7e308, steps: [{name: e, url: /e}]}
`, nil)
	run(t, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.counts
	// b and c about 100 each; d 1/2.7 of the time (about 74), e about 126.
	if n["GET /a"] != 0 || n["GET /b"]+n["GET /c"] != 200 || n["GET /b"] < 65 || n["GET /b"] > 135 {
		t.Errorf("the server saw a %d, b %d, c %d; want none, about 100 and about 100", n["GET /a"], n["GET /b"], n["GET /c"])
	}
	if n["GET /d"]+n["GET /e"] != 200 || n["GET /d"] < 40 || n["GET /d"] > 110 {
		t.Errorf("the server saw d %d, e %d; want about 74 and about 126", n["GET /d"], n["GET /e"])
	}
}

// A condition that fails at run time (a text compared with a number) is
// false, and said once; a loop whose passes run no step ends, and says so
// with the limit's name. A step without a name (a loop or a condition of
// a block of steps) is named by its place in the plan, where it was said
// as "step :". Issue 37: randomString(n) gave 1 MiB for any n beyond, in
// silence; an expression that would make more text than its limit
// (expr.MaxText), where the plan cannot know it beforehand, fails its
// iteration as other, with what it said: counted, and said once.
func TestFlowLogicFailures(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
vars:
  word: abc
  n: "20000000"
scenarios:
  - name: s
    vus: 2
    iterations: 3
    flow:
      - {name: a, url: /a}
      - {name: never, url: /never, if: word > 5}
      - name: spin
        loop: {while: "true"}
        steps: [{name: skipped, url: /skipped, if: "false"}]
      - set: {big: randomString(int(n))}
      - {name: b, url: /b}
      - loop: {while: "true"}
        steps: [{name: skipped too, url: /skipped, if: "false"}]
      - if: word > 6
        steps: [{name: never too, url: /never}]
`, nil)
	var events []string
	var evMu sync.Mutex // the VUs' loops or goroutines say their events at once
	r, err := Run(t.Context(), p, Options{RunID: "test", Seed: 1, OnEvent: func(s string) {
		evMu.Lock()
		defer evMu.Unlock()
		events = append(events, s)
	}})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts["GET /a"] != 6 || c.counts["GET /b"] != 6 || c.counts["GET /never"] != 0 || c.counts["GET /skipped"] != 0 {
		t.Errorf("the server saw %v", c.counts)
	}
	const limit = "randomString would make 20000000 bytes of text: an expression makes at most 16 MiB of text in all"
	it := op(t, r.Stages[0], "s")
	if it.Count != 6 || it.Errors[metrics.Other] != 6 || it.ErrorCount() != 6 {
		t.Errorf("iterations %d, errors %v; want 6 failed as other", it.Count, it.Errors)
	}
	if ms := it.Messages.List(); len(ms) != 1 || ms[0].Count != 6 || !strings.Contains(ms[0].Message, strings.Replace(limit, "20000000", "<n>", 1)) {
		t.Errorf("the iterations' failures said %+v", ms)
	}
	said := fmt.Sprint(events)
	for _, want := range []string{`step never: word > 5: "abc" is not a number (taken as false; said once)`,
		"step spin: the loop ended after 1000 passes in a row that ran no step (engine.MaxEmptyPasses)",
		"the step at " + p.File + ":17:9: the loop ended after 1000 passes in a row that ran no step (engine.MaxEmptyPasses)",
		"the step at " + p.File + `:19:9: word > 6: "abc" is not a number (taken as false; said once)`, limit} {
		if n := strings.Count(said, want); n != 1 {
			t.Errorf("said %d times %q; events: %s", n, want, said)
		}
	}
}

// A set step gives variables the values of expressions, in order, on each
// engine: the server sees the values the expressions make.
func TestSetVariables(t *testing.T) {
	var c counter
	var query atomic.Value
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/count":
			io.WriteString(w, `{"n": 4, "items": ["a", "b"]}`)
		case "/page/4":
			query.Store(r.URL.Query().Encode())
		}
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 1
    iterations: 3
    flow:
      - {name: count, url: /count}
      - set:
          next: json("$.n") + iteration
          half: next / 2
          label: '"p-" + string(iteration)'
          list: json("$.items")
          ok: response.status == 200
      - {name: page, url: "/page/${next}?half=${half}&l=${label}&list=${list}&ok=${ok}"}
`, nil)
	run(t, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts["GET /page/4"] != 1 || c.counts["GET /page/5"] != 1 || c.counts["GET /page/6"] != 1 {
		t.Errorf("the server saw %v", c.counts)
	}
	if q, _ := query.Load().(string); q != `half=2&l=p-0&list=%5B%22a%22%2C%22b%22%5D&ok=true` {
		t.Errorf("the first iteration's values: %s", q)
	}
}

// A while loop's condition may read what its body extracts: a poll until
// the answer says done, the variable reset before (a VU's variables
// outlive its iterations, as a JMeter thread's do).
func TestPollUntilDone(t *testing.T) {
	var c counter
	var n atomic.Int64
	srv := httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			io.WriteString(w, `{"state":"done"}`)
			return
		}
		io.WriteString(w, `{"state":"running"}`)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 1
    iterations: 2
    flow:
      - set: {state: '""'}                # a VU's variables outlive its iterations
      - name: poll
        url: /job
        extract: {state: $.state}
        loop: {while: 'state != "done"', max: 10}
`, nil)
	r := run(t, p)
	if got := op(t, r.Stages[0], "poll").Count; got != 6 || c.total() != 6 {
		t.Errorf("perflab polled %d times, the server saw %d; want 6 (3 an iteration)", got, c.total())
	}
}

// A loop's rows give each pass a new row of a data source, where a VU
// otherwise takes one row an iteration.
func TestLoopRows(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
data:
  items: {values: [a, b, c, d, e, f]}
scenarios:
  - name: s
    vus: 1
    iterations: 2
    flow:
      - {name: first, url: "/first/${items}"}
      - name: each
        loop: {count: 2, rows: [items]}
        steps: [{name: item, url: "/item/${items}"}]
`, nil)
	run(t, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	// Iteration 1: a (first), b, c (each pass its row); iteration 2: d, e, f.
	for _, path := range []string{"GET /first/a", "GET /item/b", "GET /item/c", "GET /first/d", "GET /item/e", "GET /item/f"} {
		if c.counts[path] != 1 {
			t.Errorf("%s: %d; the server saw %v", path, c.counts[path], c.counts)
		}
	}
}

// Consecutive scenarios run one after another, in the plan's order, each
// from the end of the one before: the server sees every request of the
// first before any of the second; a scenario of a duration has it from its
// own start.
func TestConsecutiveScenarios(t *testing.T) {
	var mu sync.Mutex
	var order []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.URL.Path)
		mu.Unlock()
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
consecutive: true
scenarios:
  - {name: first, vus: 3, iterations: 4, flow: [{name: a, url: /a}]}
  - {name: timed, vus: 2, duration: 300ms, flow: [{name: b, url: /b, think: 10ms}]}
  - {name: paced, rate: 50, duration: 200ms, vus: 2, flow: [{name: c, url: /c}]}
`, nil)
	r := run(t, p)
	mu.Lock()
	defer mu.Unlock()
	last := map[string]int{}
	first := map[string]int{}
	for i, path := range order {
		if _, ok := first[path]; !ok {
			first[path] = i
		}
		last[path] = i
	}
	if len(order) == 0 || last["/a"] > first["/b"] || last["/b"] > first["/c"] {
		t.Errorf("the scenarios overlapped: %v", order)
	}
	if n := op(t, r.Stages[0], "a").Count; n != 12 || len(order) != int(n+op(t, r.Stages[0], "b").Count+op(t, r.Stages[0], "c").Count) {
		t.Errorf("a %d; the server saw %d requests", n, len(order))
	}
	// Each timed scenario had its own span: 300 ms and 200 ms of requests,
	// not cut short by the ones before.
	if b := op(t, r.Stages[0], "b").Count; b < 5 {
		t.Errorf("the timed scenario sent %d requests in its 300 ms", b)
	}
	if c := op(t, r.Stages[0], "c").Count; c < 5 || c > 11 {
		t.Errorf("the paced scenario sent %d requests, want about 10", c)
	}
}
