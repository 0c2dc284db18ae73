package grpc_test

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/perflab/perflab/internal/grpctest"
	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/sim"
)

// shopPlan is a plan of every kind of call to the test server: its
// schema is either shop.proto or the server's reflection.
const shopPlan = `name: shop-grpc
grpc:
  target: ${addr}
  %s
  connections: 2
vars:
  addr: "127.0.0.1:1"
  closed: "1"
scenarios:
  - name: shop
    vus: 3
    iterations: 10
    flow:
      - name: get
        grpc:
          service: shop.Shop
          method: GetItem
          message: {id: "i-${vu}-${iteration}", delay_ms: 2}
          metadata: {x-user: "u${vu}"}
        check:
          json: {$.name: "item i-${vu}-${iteration}", $.kind: BOOK, "$.tags[1]": b}
        extract:
          name: {json: $.name}
          item: {header: x-item}
      - name: list
        grpc: {service: shop.Shop, method: ListItems, message: {count: 4}}
        check: {json: {"$[3].name": "item 3"}}
      - name: list unread
        grpc: {service: shop.Shop, method: ListItems, message: {count: 3}}
      - name: cart
        grpc:
          service: shop.Shop
          method: AddToCart
          messages: [{itemId: a, qty: 2}, {item_id: "${item}", qty: 3}]
        check: {json: {$.totalQty: "5", $.lines: "2"}}
      - name: chat
        grpc: {service: shop.Shop, method: Chat, messages: [{text: hi}, {text: "${name}"}]}
        check: {json: {"$[1].text": "re: item i-${vu}-${iteration}"}}
      - name: missing is fine
        grpc: {service: shop.Shop, method: GetItem, message: {id: missing}}
        check: {status: [5]}
      - name: found is not
        grpc: {service: shop.Shop, method: GetItem, message: {id: there}}
        check: {status: [5]}
      - name: boom
        grpc: {service: shop.Shop, method: GetItem, message: {id: boom}}
      - name: wrong check
        grpc: {service: shop.Shop, method: GetItem, message: {id: w}}
        check: {json: {$.name: nope}}
      - name: down
        grpc: {service: shop.Shop, method: GetItem, target: "127.0.0.1:${closed}", deadline: 5s}
`

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// withProto is a directory of the test's own with a copy of shop.proto.
func withProto(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	proto, err := os.ReadFile(filepath.Join(grpctest.Dir(), "shop.proto"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "shop.proto"), proto, 0o644)
	return dir
}

// runPlan writes src beside a copy of shop.proto and runs it.
func runPlan(t *testing.T, src string, set ...plan.Override) (*lab.Result, error) {
	t.Helper()
	dir := withProto(t)
	path := filepath.Join(dir, "plan.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	p, err := plan.Load(path, plan.Options{Set: set})
	if err != nil {
		return nil, err
	}
	return lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: "off", Progress: "none", Stdout: io.Discard, Stderr: io.Discard})
}

// Every kind of call, against a server on another implementation
// (Python's grpcio), with the schema from the .proto file and from the
// server's reflection: perflab's counts per method are the server's, the
// checks and extractions see each response's fields (a stream's messages
// as a list), an accepted NOT_FOUND is a success, an INTERNAL is
// grpc_internal and a server that is down connection_refused.
func TestCallsAgainstPythonServer(t *testing.T) {
	srv := grpctest.Start(t)
	for _, schema := range []string{"protos: [shop.proto]", "reflection: true"} {
		t.Run(strings.Fields(schema)[0], func(t *testing.T) {
			before := srv.Counts()
			res, err := runPlan(t, fmt.Sprintf(shopPlan, schema), plan.Override{Name: "addr", Value: srv.Addr}, plan.Override{Name: "closed", Value: closedPort(t)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			after := srv.Counts()
			served := func(m string) int64 { return after[m] - before[m] }
			ops := map[string]results.Operation{}
			for _, op := range res.Summary.Stages[0].Operations {
				ops[op.Name] = op
			}
			for name, want := range map[string]struct {
				count  int64
				errors map[string]int64
			}{
				"get":                  {30, nil},
				"list":                 {30, nil},
				"list unread":          {30, nil},
				"list (first message)": {30, nil},
				"cart":                 {served("AddToCart"), nil},
				"chat":                 {served("Chat"), nil},
				"missing is fine":      {30, nil},
				"boom":                 {30, map[string]int64{"grpc_internal": 30}},
				"down":                 {30, map[string]int64{"connection_refused": 30}},
				"wrong check":          {30, map[string]int64{"check_failed": 30}},
			} {
				op := ops[name]
				var total int64
				for _, n := range want.errors {
					total += n
				}
				if op.Count != want.count || op.Errors.Total != total {
					t.Errorf("%s: %d calls, errors %+v; want %d, %v", name, op.Count, op.Errors, want.count, want.errors)
				}
				for k, n := range want.errors {
					if op.Errors.ByKind[k] != n {
						t.Errorf("%s: errors %+v, want %s %d", name, op.Errors, k, n)
					}
				}
			}
			if served("GetItem") != 150 || served("ListItems") != 60 || served("AddToCart") != 30 || served("Chat") != 30 {
				t.Errorf("the server answered %v", after)
			}
			if l := ops["get"].Latency; l.Min < 2 {
				t.Errorf("get: min %v ms, below the server's 2 ms delay", l.Min)
			}
		})
	}
}

// A server that freezes for 600 ms in an open model: the calls due while
// it was frozen wait, and their latency, from their due time, shows it;
// none is lost.
func TestStallShowsInOpenModel(t *testing.T) {
	srv := grpctest.Start(t)
	res, err := runPlan(t, `name: stall
grpc:
  target: ${addr}
  protos: [shop.proto]
vars:
  addr: "127.0.0.1:1"
scenarios:
  - name: steady
    rate: 40
    duration: 2s
    vus: 40
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {id: x}}
  - name: freeze
    vus: 1
    iterations: 1
    flow:
      - think: 500ms
      - name: stall
        grpc: {service: shop.Shop, method: GetItem, message: {id: stall, delay_ms: 600}}
`, plan.Override{Name: "addr", Value: srv.Addr})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	for _, op := range res.Summary.Stages[0].Operations {
		if op.Name != "get" {
			continue
		}
		t.Logf("get: %d calls, p50 %v ms, p99 %v, max %v ms", op.Count, op.Latency.P50, op.Latency.P99, op.Latency.Max)
		// 80 calls due; those due in the 600 ms freeze waited for its end.
		if op.Count < 78 || op.Count > 81 || op.Errors.Total != 0 || op.Latency.Max < 400 || op.Latency.P50 > 300 {
			t.Errorf("get: %d calls, %d errors, p50 %v ms, max %v ms: want 80, none, the freeze in the max", op.Count, op.Errors.Total, op.Latency.P50, op.Latency.Max)
		}
		return
	}
	t.Fatal("no get operation")
}

// perflab sim's gRPC stubs, with the plan's schema from the stubs'
// reflection: each method's calls are the simulator's count, its injected
// UNAVAILABLEs are grpc_unavailable, a stream's messages are the stub's,
// and a fixed 20 ms latency is the calls' p50 (to the histogram's
// precision, plus what the calls cost).
func TestAgainstSimulator(t *testing.T) {
	srv := startSim(t, `routes: []
grpc:
  protos: [shop.proto]
  methods:
    - method: shop.Shop/GetItem
      response: '{"id": "${request.id}", "name": "item ${request.id}", "tags": ["${metadata.x-user}"]}'
      latency: {fixed: 20ms}
      errors: {ratio: 0.2, code: 14}
    - method: shop.Shop/ListItems
      stream: 3
      response: '{"id": "${index}"}'
    - method: shop.Shop/AddToCart
      response: '{"lines": 1, "totalQty": ${request.qty}}'
`)
	res, err := runPlan(t, `name: sim
grpc: {target: "${addr}", reflection: true}
vars: {addr: "127.0.0.1:1"}
scenarios:
  - name: s
    vus: 4
    iterations: 25
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {id: "i${vu}"}, metadata: {x-user: "u${vu}"}}
        check: {json: {$.name: "item i${vu}", "$.tags[0]": "u${vu}"}}
      - name: list
        grpc: {service: shop.Shop, method: ListItems}
        check: {json: {"$[2].id": "2"}}
      - name: cart
        grpc: {service: shop.Shop, method: AddToCart, messages: [{qty: 1}, {qty: 7}]}
        check: {json: {$.totalQty: "7"}}
`, plan.Override{Name: "addr", Value: srv.GRPCAddr()})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	stats := map[string]sim.RouteStats{}
	for _, st := range srv.Stats() {
		stats[st.Name] = st
	}
	got := map[string]results.Operation{}
	for _, op := range res.Summary.Stages[0].Operations {
		got[op.Name] = op
	}
	get := got["get"]
	if get.Count != 100 || get.Count != stats["shop.Shop/GetItem"].Requests || get.Errors.ByKind["grpc_unavailable"] != stats["shop.Shop/GetItem"].InjectedErrors ||
		get.Errors.Total != get.Errors.ByKind["grpc_unavailable"] || get.Errors.Total == 0 {
		t.Errorf("get: %d calls, errors %+v; the simulator's %+v", get.Count, get.Errors, stats["shop.Shop/GetItem"])
	}
	t.Logf("get: p50 %v ms, p99 %v ms, max %v ms", get.Latency.P50, get.Latency.P99, get.Latency.Max)
	if l := get.Latency; l.P50 < 20 || l.P50 > 30 {
		t.Errorf("get: p50 %v ms, the simulator's latency 20 ms", l.P50)
	}
	for name, m := range map[string]string{"list": "shop.Shop/ListItems", "cart": "shop.Shop/AddToCart"} {
		if op := got[name]; op.Count != 100 || op.Errors.Total != 0 || stats[m].Requests != 100 {
			t.Errorf("%s: %d calls, errors %+v; the simulator's %+v", name, op.Count, op.Errors, stats[m])
		}
	}
}

// Over TLS, trusting the plan's http.ca_file (and, apart, any certificate
// with http.insecure_skip_verify), with the schema from the server's
// reflection: grpc-go's own health service.
func TestTLS(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	ts.StartTLS()
	defer ts.Close()
	srv := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&ts.TLS.Certificates[0])))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	reflection.Register(srv)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Stop()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o644)
	for _, trust := range []string{"ca_file: " + ca, "insecure_skip_verify: true"} {
		res, err := runPlan(t, `name: tls
http: {`+trust+`}
grpc: {target: "`+l.Addr().String()+`", reflection: true, tls: true}
scenarios:
  - name: s
    vus: 2
    iterations: 5
    flow:
      - name: health
        grpc: {service: grpc.health.v1.Health, method: Check}
        check: {json: {$.status: SERVING}}
`)
		if err != nil || res.Err != nil {
			t.Fatal(trust, err, res.Err)
		}
		if op := res.Summary.Stages[0].Operations[0]; op.Count != 10 || op.Errors.Total != 0 {
			t.Errorf("%s: %+v", trust, op)
		}
	}
}

// With reflection, a wrong method or field is the same plan error, with
// its place, when the run starts: before any call is sent.
func TestReflectionPlanErrors(t *testing.T) {
	srv := grpctest.Start(t)
	before := srv.Counts()
	res, err := runPlan(t, `name: wrong
grpc: {target: "${addr}", reflection: true}
vars: {addr: "127.0.0.1:1"}
scenarios:
  - name: s
    vus: 1
    iterations: 1
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {idd: x}}
      - name: list
        grpc: {service: shop.Shop, method: ListItem}
`, plan.Override{Name: "addr", Value: srv.Addr})
	if err == nil {
		err = res.Err
	}
	for _, want := range []string{
		`plan.yaml:10:63: step get: message shop.GetItemRequest has no field idd (fields: id, delayMs) (did you mean "id"?)`,
		`plan.yaml:12:15: step list: service shop.Shop has no method ListItem`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %s", err, want)
		}
	}
	after := srv.Counts()
	for m, n := range after {
		if m != "Counts" && n != before[m] {
			t.Errorf("the server answered %s %d times", m, n-before[m])
		}
	}
}

// A bidirectional call of 300 messages of 1 KB, each answered as it
// comes by perflab sim (on grpc-go): more than a stream's first window
// both ways. The call sends while it receives, as a server that answers
// each message before it reads the next may need; it gets every answer.
func TestBidiLongStream(t *testing.T) {
	srv := startSim(t, `routes: []
grpc:
  protos: [shop.proto]
  methods:
    - method: shop.Shop/Chat
      response: '{"text": "re: ${request.text}"}'
`)
	notes := make([]string, 300)
	for i := range notes {
		notes[i] = fmt.Sprintf("{text: n%d-%s}", i, strings.Repeat("x", 1024))
	}
	res, err := runPlan(t, `name: bidi
grpc: {target: "${addr}", protos: [shop.proto]}
vars: {addr: "127.0.0.1:1"}
scenarios:
  - name: s
    vus: 2
    iterations: 2
    flow:
      - name: chat
        grpc: {service: shop.Shop, method: Chat, deadline: 20s, messages: [`+strings.Join(notes, ", ")+`]}
        check: {json: {"$[299].text": "re: n299-`+strings.Repeat("x", 1024)+`"}}
`, plan.Override{Name: "addr", Value: srv.GRPCAddr()})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if op := res.Summary.Stages[0].Operations[0]; op.Count != 4 || op.Errors.Total != 0 {
		t.Errorf("chat: %d calls, errors %+v", op.Count, op.Errors)
	}
}

// startSim starts perflab sim with stubs (beside a copy of shop.proto),
// seeded, for the test's time.
func startSim(t *testing.T, stubs string) *sim.Server {
	t.Helper()
	path := filepath.Join(withProto(t), "stubs.yaml")
	os.WriteFile(path, []byte(stubs), 0o644)
	cfg, err := sim.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.New(cfg, sim.WithSeed(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// countingListener counts the connections it accepted.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// The VUs share grpc.connections connections to a target (reflection's
// question too): 6 VUs over 3 connections open 3, and the calls go over
// all of them (a connection opens on its first call).
func TestConnectionsAreShared(t *testing.T) {
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	go srv.Serve(cl)
	defer srv.Stop()
	res, err := runPlan(t, `name: pool
grpc: {target: "`+l.Addr().String()+`", reflection: true, connections: 3}
scenarios:
  - name: s
    vus: 6
    iterations: 20
    flow:
      - name: health
        grpc: {service: grpc.health.v1.Health, method: Check}
`)
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	if op := res.Summary.Stages[0].Operations[0]; op.Count != 120 || op.Errors.Total != 0 {
		t.Errorf("health: %+v", op)
	}
	if n := cl.n.Load(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}
