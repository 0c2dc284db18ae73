package ws_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/perflab/perflab/internal/wstest"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
)

func run(t *testing.T, src string, set ...plan.Override) *results.Summary {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	p, err := plan.Load(path, plan.Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	res, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: io.Discard})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	return res.Summary
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func ops(s *results.Summary) map[string]results.Operation {
	out := map[string]results.Operation{}
	for _, ph := range s.Stages {
		for _, op := range ph.Operations {
			out[op.Name] = op
		}
	}
	return out
}

type want struct {
	count  int64
	errors map[string]int64
}

func check(t *testing.T, got map[string]results.Operation, wants map[string]want) {
	t.Helper()
	for name, w := range wants {
		op := got[name]
		var total int64
		for _, n := range w.errors {
			total += n
		}
		if op.Count != w.count || op.Errors.Total != total {
			t.Errorf("%s: %d, errors %+v; want %d, %v", name, op.Count, op.Errors, w.count, w.errors)
			continue
		}
		for k, n := range w.errors {
			if op.Errors.ByKind[k] != n {
				t.Errorf("%s: errors %+v, want %s %d", name, op.Errors, k, n)
			}
		}
	}
}

// VUs that each keep a connection to a server on another implementation
// (Python's websockets): its handshake's header and subprotocol reach the
// server; a reply is awaited by the id the VU sent, past a message for
// someone else (unmatched), the message sent as binary; an await with no message times out; a server
// that closes mid-await is connection_reset, and the next iteration opens
// a new connection; a closed port is connection_refused. The server's own
// counts of connections and messages are perflab's.
func TestEchoAgainstPythonServer(t *testing.T) {
	srv := wstest.Start(t, 10)
	s := run(t, `name: ws
vars: {base: "ws://127.0.0.1:1", closed: "1"}
scenarios:
  - name: chat
    vus: 5
    iterations: 10
    flow:
      - name: ping
        ws:
          url: "${base}/echo"
          headers: {x-user: "u${vu}"}
          subprotocols: [chat]
          json: {id: "p-${vu}-${iteration}", delay_ms: 5}
          await: {match: json.id, equals: "p-${vu}-${iteration}", timeout: 5s}
        check: {json: {$.subprotocol: chat, $.user: "u${vu}"}}
        extract: {echoed: {json: $.echo.id}}
      - name: noisy
        ws:
          url: "${base}/echo"
          json: {id: "${echoed}-n", op: noise}
          binary: true
          await: {match: json.id, equals: "p-${vu}-${iteration}-n"}
      - name: silent
        ws: {url: "${base}/echo", await: {match: json.id, equals: never, timeout: 50ms}}
  - name: closing
    vus: 2
    iterations: 3
    flow:
      - name: hang up
        ws: {url: "${base}/echo", json: {op: close}, await: {timeout: 5s}}
      - name: refused
        ws: {url: "ws://127.0.0.1:${closed}/x", send: hi}
`, plan.Override{Name: "base", Value: srv.URL}, plan.Override{Name: "closed", Value: closedPort(t)})
	got := ops(s)
	check(t, got, map[string]want{
		"ping":              {50, nil},
		"ping (connect)":    {5, nil},
		"noisy":             {50, nil},
		"noisy (unmatched)": {50, nil},
		"silent":            {50, map[string]int64{"timeout": 50}},
		"hang up":           {6, map[string]int64{"connection_reset": 6}},
		"hang up (connect)": {6, nil},
		"refused":           {6, map[string]int64{"connection_refused": 6}},
		"refused (connect)": {6, map[string]int64{"connection_refused": 6}},
	})
	if l := got["ping"].Latency; l.Min < 5 {
		t.Errorf("ping: min %v ms, below the server's 5 ms delay", l.Min)
	}
	c := srv.Counts()
	if c["connections"] != 11 || c["received"] != 106 || c["sent"] != 150 {
		t.Errorf("the server counted %v; want 11 connections, 106 messages received, 150 sent", c)
	}
}

// VUs subscribed to a broadcast await its messages: every await gets
// one, none fails, and each VU opens its connection once; the server sent
// at least the messages awaited.
func TestBroadcast(t *testing.T) {
	srv := wstest.Start(t, 50)
	s := run(t, `name: feed
vars: {base: "ws://127.0.0.1:1"}
scenarios:
  - name: subscribers
    vus: 20
    iterations: 10
    flow:
      - name: tick
        ws: {url: "${base}/feed", await: {timeout: 5s}}
        check: {body_contains: seq}
`, plan.Override{Name: "base", Value: srv.URL})
	check(t, ops(s), map[string]want{"tick": {200, nil}, "tick (connect)": {20, nil}, "tick (unmatched)": {0, nil}})
	if c := srv.Counts(); c["connections"] != 20 || c["sent"] < 200 {
		t.Errorf("the server counted %v", c)
	}
}

// A reply that comes after its await timed out does not answer the next
// step's send: it came before that send, and is passed over (unmatched).
func TestLateReplyIsNotTheNextAnswer(t *testing.T) {
	srv := wstest.Start(t, 10)
	s := run(t, `name: late
vars: {base: "ws://127.0.0.1:1"}
scenarios:
  - name: s
    vus: 1
    iterations: 3
    flow:
      - name: slow
        ws: {url: "${base}/echo", json: {id: a, delay_ms: 150}, await: {timeout: 50ms}}
        think: 300ms
      - name: quick
        ws: {url: "${base}/echo", json: {id: b}, await: {timeout: 5s}}
        check: {json: {$.id: b}}
`, plan.Override{Name: "base", Value: srv.URL})
	check(t, ops(s), map[string]want{
		"slow":              {3, map[string]int64{"timeout": 3}},
		"quick":             {3, nil},
		"quick (unmatched)": {3, nil},
	})
}
