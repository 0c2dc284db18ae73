package engine

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/metrics"
)

// A flow extracts a list (match: all, with its count and items) and the
// last of a filter's matches, then checks fields with assertions: the
// failures, by kind, are those the server's answers call for, counted by
// the server, and what the VUs sent back is what it listed.
func TestExtractListAndCheckFields(t *testing.T) {
	var lists, totalOver, gets, closed, wrong atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/orders" {
			// List n has orders 3n+1 (OPEN), 3n+2 (CLOSED) and 3n+3
			// (OPEN for an even n); its total is 3 for every fourth.
			n := lists.Add(1) - 1
			third, total := "CLOSED", 2
			if n%2 == 0 {
				third = "OPEN"
			}
			if n%4 == 0 {
				total = 3
				totalOver.Add(1)
			}
			fmt.Fprintf(w, `{"total":%d,"orders":[{"id":%d,"state":"OPEN"},{"id":%d,"state":"CLOSED"},{"id":%d,"state":"%s"}]}`,
				total, 3*n+1, 3*n+2, 3*n+3, third)
			return
		}
		// /orders/ID?count=C&last=L: the order, CLOSED by now when its list
		// was a multiple of 3; C and L must be what list n held.
		gets.Add(1)
		id, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/orders/"))
		n := (id - 1) / 3
		count, last := "1", strconv.Itoa(3*n+1)
		if n%2 == 0 {
			count, last = "2", strconv.Itoa(3*n+3)
		}
		if (id-1)%3 != 0 || r.URL.Query().Get("count") != count || r.URL.Query().Get("last") != last {
			wrong.Add(1)
		}
		state := "OPEN"
		if n%3 == 0 {
			state = "CLOSED"
			closed.Add(1)
		}
		fmt.Fprintf(w, `{"id":%d,"state":"%s"}`, id, state)
	}))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
scenarios:
  - name: s
    vus: 2
    iterations: 6
    flow:
      - name: list
        url: /orders
        extract:
          open: {json: "$.orders[?@.state=='OPEN'].id", match: all}
          last: {json: "$.orders[?@.state=='OPEN'].id", match: last}
        check:
          that:
            - {header: Content-Type, contains: json}
            - {json: "$.orders[*].state", one_of: [OPEN, CLOSED]}
            - {json: $.total, lt: 3, message: "a list holds fewer than 3 orders"}
      - name: get
        url: /orders/${open_1}?count=${open_count}&last=${last}
        check:
          that:
            - {json: $.id, equals: "${open_1}"}
            - {json: $.state, equals: OPEN}
            - {size: true, between: [10, 100]}
`, nil)
	r := run(t, p)
	if lists.Load() != 12 || gets.Load() != 12 {
		t.Fatalf("the server answered %d lists and %d gets, want 12 each", lists.Load(), gets.Load())
	}
	if wrong.Load() != 0 {
		t.Errorf("%d gets did not send back what their list held", wrong.Load())
	}
	for name, want := range map[string]int64{"list": totalOver.Load(), "get": closed.Load()} {
		s := op(t, r.Stages[0], name)
		var all int64
		for _, n := range s.Errors {
			all += n
		}
		if s.Count != 12 || s.Errors[metrics.CheckFailed] != want || all != want {
			t.Errorf("%s: count %d, errors %v; want 12 with %d check_failed, as the server sent", name, s.Count, s.Errors, want)
		}
	}
	if totalOver.Load() == 0 || closed.Load() == 0 {
		t.Errorf("the server sent no answer to fail a check: %d totals of 3, %d closed orders", totalOver.Load(), closed.Load())
	}
	// Issue 37: an extraction's time was in no figure (a step's latency
	// ends with its response's last byte). The stage keeps what the VUs
	// spent on the responses of the steps that extract or check: some
	// time, within the stage's two VUs', after responses that took the
	// latencies recorded.
	var lat float64
	for _, name := range []string{"list", "get"} {
		s := op(t, r.Stages[0], name)
		lat += float64(s.OK.Sum+s.Failed.Sum) / 1e9
	}
	if pr := r.Stages[0].Processing; pr == nil || pr.Responses != 24 || math.Abs(pr.LatencyS-lat) > 1e-9 ||
		pr.Seconds <= 0 || pr.Seconds > 2*r.Stages[0].Elapsed().Seconds() {
		t.Errorf("processing %+v: want 24 responses, their latency %v, and some time within the stage", pr, lat)
	}
}

// http.parse_limit reaches the client: a page past it is parsed into no
// tree, and the step's extraction fails, saying so.
func TestParseLimitOfThePlan(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body>%s</body></html>", strings.Repeat("<p>x</p>", 200))
	}))
	defer srv.Close()
	p := load(t, srv.URL, "target: TARGET\nhttp: {parse_limit: 1KiB}\n"+
		"scenarios: [{name: s, vus: 1, iterations: 2, flow: [{name: page, url: /, extract: {p: {css: p}}}]}]\n", nil)
	s := op(t, run(t, p).Stages[0], "page")
	if ms := s.Messages.List(); s.Count != 2 || s.Errors[metrics.ExtractFailed] != 2 || len(ms) != 1 ||
		!strings.Contains(ms[0].Message, "past the 1 KiB that css parses (http.parse_limit)") {
		t.Errorf("count %d, errors %v, messages %+v; want 2 failed past the parse limit", s.Count, s.Errors, ms)
	}
}
