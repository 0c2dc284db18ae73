package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/metrics"
)

// phasePlan is a setup and a teardown with a flow's logic: a loop over a
// list a response gave, an if on an extracted value, a choice, a set:
// whose variable the scenario and teardown read, a transaction holding a
// repeat; teardown polls until the server says done.
const phasePlan = `target: TARGET
setup:
  - {name: login, method: POST, url: /login, extract: {token: $.token}}
  - {name: list, url: /list, extract: {items: {json: "$.items[*]", match: all}, mode: $.mode}}
  - name: each item
    loop: {over: items, as: id, index: i}
    steps:
      - {name: item, url: "/item/${id}?i=${i}"}
  - if: mode == "fast"
    steps: [{name: fast, url: /fast}]
    else: [{name: slow, url: /slow}]
  - choose:
      - {weight: 0, steps: [{name: never, url: /never}]}
      - {weight: 1, steps: [{name: chosen, url: /chosen}]}
  - set: {next: 'token + "-" + mode'}
  - transaction: prepare
    steps:
      - {name: make, method: POST, url: "/make?n=${index}", repeat: {count: 2}}
      - {name: made, url: /made}
scenarios:
  - {name: s, vus: 1, iterations: 2, flow: [{name: load, url: "/load?next=${next}"}]}
teardown:
  - name: wait for the job
    loop: {while: 'json("$.state") != "done"', max: 10}
    steps: [{name: job, url: /job}]
  - {name: cleanup, method: DELETE, url: "/cleanup?next=${next:-none}&t=${token}"}
`

// phaseServer answers phasePlan's requests, logging them in order; the
// item of failItem (if set) fails, and the job is done at its third poll.
func phaseServer(c *counter, failItem string) *httptest.Server {
	var polls atomic.Int64
	return httptest.NewServer(c.handler(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			io.WriteString(w, `{"token":"t-1"}`)
		case "/list":
			io.WriteString(w, `{"items":["a","b","c"],"mode":"fast"}`)
		case "/item/" + failItem:
			w.WriteHeader(500)
		case "/job":
			if polls.Add(1) < 3 {
				io.WriteString(w, `{"state":"running"}`)
				return
			}
			io.WriteString(w, `{"state":"done"}`)
		}
	}))
}

// Setup and teardown run a flow's logic through the cursor, the one
// interpreter of flows, as one VU's one iteration. Phases run in one
// goroutine (the run's), not on the scenarios' engine, so this test is not
// among engineTests: the event loop and goroutines run only the stage
// between. The server sees setup's requests in the flow's order (three
// passes over the list it gave, the branch of the mode it gave, the
// branch of weight 1, the transaction's repeat), the scenario and
// teardown the value set: made, teardown polling until done; setup's
// statistics hold the transaction as an operation of its own.
func TestLogicInSetupAndTeardown(t *testing.T) {
	var c counter
	srv := phaseServer(&c, "")
	defer srv.Close()
	r := run(t, load(t, srv.URL, phasePlan, nil))
	c.mu.Lock()
	got := slices.Clone(c.log)
	c.mu.Unlock()
	want := []string{"POST /login", "GET /list", "GET /item/a?i=0", "GET /item/b?i=1", "GET /item/c?i=2", "GET /fast", "GET /chosen",
		"POST /make?n=0", "POST /make?n=1", "GET /made",
		"GET /load?next=t-1-fast", "GET /load?next=t-1-fast",
		"GET /job", "GET /job", "GET /job", "DELETE /cleanup?next=t-1-fast&t=t-1"}
	if !slices.Equal(got, want) {
		t.Errorf("the server saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	setup := r.Setup[0]
	for name, n := range map[string]int64{"login": 1, "item": 3, "fast": 1, "chosen": 1, "make": 2, "made": 1, "prepare": 1} {
		if s := op(t, setup, name); s.Count != n || s.ErrorCount() != 0 {
			t.Errorf("setup's %s: %d (%v errors), want %d", name, s.Count, s.Errors, n)
		}
	}
	for i, o := range setup.Ops {
		if o.Name == "prepare" && (o.Kind != metrics.KindTransaction || o.Scenario != "setup") {
			t.Errorf("setup's transaction is %+v", o)
		}
		if o.Scenario != "setup" || setup.Totals[i].Unpacked().Count == 0 && o.Name != "never" && o.Name != "slow" {
			t.Errorf("setup's operation %+v", o)
		}
	}
	if s := op(t, r.Teardown[0], "job"); s.Count != 3 {
		t.Errorf("teardown polled %d times, the server 3", s.Count)
	}
	if setup.Error != "" || r.Teardown[0].Error != "" || r.Status != metrics.StatusCompleted {
		t.Errorf("setup %q, teardown %q, run %s", setup.Error, r.Teardown[0].Error, r.Status)
	}
}

// A step that fails inside a loop of setup stops setup there, with the
// error naming the step, and the run with it: no stage runs, teardown
// does, with what setup had set before the failure.
func TestSetupFailsInALoop(t *testing.T) {
	var c counter
	srv := phaseServer(&c, "b")
	defer srv.Close()
	r, err := Run(context.Background(), load(t, srv.URL, phasePlan, nil), Options{RunID: "t", Seed: 1})
	if !errors.Is(err, ErrSetupFailed) || !strings.Contains(err.Error(), `setup step "item": http_5xx`) {
		t.Fatalf("run: %v", err)
	}
	if r.Status != metrics.StatusFailed || len(r.Stages) != 0 || !strings.HasPrefix(r.Setup[0].Error, `setup step "item": http_5xx`) {
		t.Errorf("status %s, %d stages, setup's error %q", r.Status, len(r.Stages), r.Setup[0].Error)
	}
	c.mu.Lock()
	got := slices.Clone(c.log)
	c.mu.Unlock()
	// Setup set no next: teardown takes its default, and the token.
	want := []string{"POST /login", "GET /list", "GET /item/a?i=0", "GET /item/b?i=1", "GET /job", "GET /job", "GET /job", "DELETE /cleanup?next=none&t=t-1"}
	if !slices.Equal(got, want) {
		t.Errorf("the server saw\n%s\nwant first\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := op(t, r.Setup[0], "item"); s.Count != 2 || s.ErrorCount() != 1 {
		t.Errorf("setup's item: %d, %d failed; want 2, 1", s.Count, s.ErrorCount())
	}
}

// An interrupted setup stops at once, in the middle of a loop that would
// go on for a minute, says so, and teardown runs.
func TestSetupInterrupted(t *testing.T) {
	var c counter
	srv := httptest.NewServer(c.handler(nil))
	defer srv.Close()
	p := load(t, srv.URL, `target: TARGET
setup:
  - name: forever
    loop: {count: 6000}
    steps: [{name: tick, url: /tick, think: 10ms}]
scenarios:
  - {name: s, vus: 1, iterations: 1, flow: [{name: load, url: /load}]}
teardown:
  - {name: cleanup, method: DELETE, url: /cleanup}
`, nil)
	r := runInterrupted(t, p, 200*time.Millisecond)
	if r.Status != metrics.StatusInterrupted || r.Setup[0].Error != "interrupted" || len(r.Stages) != 0 {
		t.Errorf("status %s, setup's error %q, %d stages", r.Status, r.Setup[0].Error, len(r.Stages))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.counts["GET /tick"]; n == 0 || int64(n) != op(t, r.Setup[0], "tick").Count || c.counts["GET /load"] != 0 || c.counts["DELETE /cleanup"] != 1 {
		t.Errorf("the server saw %v; setup counted %d ticks", c.counts, op(t, r.Setup[0], "tick").Count)
	}
}
