package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/grpctest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	pgrpc "github.com/perflab/perflab/protocol/grpc"
)

// sockets compiles a plan's first stage as a run does (engines chosen)
// and counts the most sockets its load may hold at once.
func stageOf(t *testing.T, body string) (plan.Stage, sockets) {
	t.Helper()
	proto, err := os.ReadFile(filepath.Join(grpctest.Dir(), "shop.proto"))
	if err != nil {
		t.Fatal(err)
	}
	p := load(t, "http://127.0.0.1:8080", body, map[string]string{"shop.proto": string(proto), "hosts.csv": "host\n10.0.0.1:80\n"})
	m := &messaging{}
	if p.HasWS() {
		m.ws = newWSDialer(p)
	}
	if p.GRPC != nil {
		m.grpc = pgrpc.NewClient(pgrpc.Options{Connections: p.GRPC.Connections})
	}
	st := p.Stages()[0]
	vars := p.VarsFor(st)
	scens, _, err := compileStage(p, m, nil, vars, plan.Segment{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scens {
		s.engine, s.why = chooseEngine(p, s, vars)
	}
	return st, stageSockets(p, scens, vars)
}

// The sockets a stage's load may hold at once, by engine and protocol,
// across its concurrent scenarios, in all and to each destination.
func TestStageSockets(t *testing.T) {
	for _, c := range []struct {
		name, body string
		total      int
		to         map[string]int
	}{{
		name: "event loop: a connection per VU, to one destination at a time",
		body: `target: TARGET
http: {event_loop: true}
scenarios:
  - {name: a, vus: 300, iterations: 1, flow: [{name: x, url: /x}, {name: y, url: "http://127.0.0.1:9090/y"}]}
  - {name: b, rate: 100, vus: 10, max_vus: 200, duration: 1s, flow: [{name: x, url: /x}]}
`,
		total: 500, to: map[string]int{"127.0.0.1:8080": 500, "127.0.0.1:9090": 300},
	}, {
		name: "goroutines, the shared pool: per destination a connection per VU calling it, at most max_conns_per_host",
		body: `target: TARGET
http: {event_loop: false, max_conns_per_host: 400}
scenarios:
  - {name: a, vus: 300, iterations: 1, flow: [{name: x, url: /x}, {name: y, url: "https://api.example/y"}]}
  - {name: b, vus: 200, iterations: 1, flow: [{name: x, url: /x}]}
`,
		total: 700, to: map[string]int{"127.0.0.1:8080": 400, "api.example:443": 300},
	}, {
		name: "per-vu connections: a connection per VU to each destination",
		body: `target: TARGET
http: {connections: per-vu, event_loop: false}
scenarios:
  - {name: a, vus: 300, iterations: 1, flow: [{name: x, url: /x}, {name: y, url: "http://127.0.0.1:9090/y"}]}
`,
		total: 600, to: map[string]int{"127.0.0.1:8080": 300, "127.0.0.1:9090": 300},
	}, {
		name: "HTTP/2 on goroutines: a connection per 100 calls in flight",
		body: `target: TARGET
http: {version: "2", event_loop: false}
scenarios:
  - {name: a, vus: 250, iterations: 1, flow: [{name: x, url: /x}]}
`,
		total: 3, to: map[string]int{"127.0.0.1:8080": 3},
	}, {
		name: "HTTP/2 on the event loop: a connection per VU, as HTTP/1.1",
		body: `target: TARGET
http: {version: "2"}
scenarios:
  - {name: a, vus: 250, iterations: 1, flow: [{name: x, url: /x}]}
`,
		total: 250, to: map[string]int{"127.0.0.1:8080": 250},
	}, {
		name: "a destination only the VUs know counts in all, not to a destination",
		body: `target: TARGET
http: {event_loop: false}
data: {hosts: {csv: hosts.csv}}
scenarios:
  - {name: a, vus: 50, iterations: 1, flow: [{name: x, url: "http://${hosts.host}/x"}]}
`,
		total: 50, to: map[string]int{},
	}, {
		name: "WebSocket: a connection per VU and URL; gRPC: grpc.connections per target, shared",
		body: `target: TARGET
grpc: {target: "127.0.0.1:50051", protos: [shop.proto], connections: 4}
scenarios:
  - name: a
    vus: 100
    iterations: 1
    flow:
      - {name: feed, ws: {url: "ws://127.0.0.1:8081/feed", send: hi}}
      - {name: chat, ws: {url: "ws://127.0.0.1:8081/chat", send: hi}}
      - {name: get, grpc: {service: shop.Shop, method: GetItem, message: {id: a}}}
      - {name: other, grpc: {service: shop.Shop, method: GetItem, message: {id: a}, target: "dns:///127.0.0.1:50052"}}
  - name: b
    vus: 10
    iterations: 1
    flow:
      - {name: get, grpc: {service: shop.Shop, method: GetItem, message: {id: a}}}
`,
		total: 208, to: map[string]int{"127.0.0.1:8081": 200, "127.0.0.1:50051": 4, "127.0.0.1:50052": 4},
	}} {
		t.Run(c.name, func(t *testing.T) {
			_, ss := stageOf(t, c.body)
			if ss.total != c.total || len(ss.to) != len(c.to) {
				t.Fatalf("%d sockets (%s), to %v; want %d, to %v", ss.total, strings.Join(ss.parts, "; "), ss.to, c.total, c.to)
			}
			for a, n := range c.to {
				if ss.to[a] != n {
					t.Errorf("to %s: %d, want %d (all: %v)", a, ss.to[a], n, ss.to)
				}
			}
		})
	}
}

// A stage's sockets beyond the descriptors the process may still open,
// or beyond the local ports to one destination, are each a limit with
// the figures and what to do; within them, none.
func TestCheckLimits(t *testing.T) {
	st, ss := stageOf(t, `target: TARGET
http: {event_loop: true}
scenarios:
  - {name: browse, vus: 50000, duration: 1s, flow: [{name: x, url: /x}]}
`)
	host := hostLimits{files: 20000, hardFiles: 20000, inUse: 12, portLo: 32768, portHi: 60999}
	ls := checkLimits(st, ss, host)
	if len(ls) != 2 {
		t.Fatalf("%d limits, want open_files and local_ports: %+v", len(ls), ls)
	}
	files, ports := ls[0], ls[1]
	if files.Kind != metrics.LimitOpenFiles || files.Need != 50000 || files.Limit != 19988 {
		t.Errorf("open files: %+v, want 50000 needed, 19988 free", files)
	}
	for _, want := range []string{"stage 1 (all)", "50000 sockets", "browse: 50000", "19988 file descriptors", "open-file limit 20000", "12 in use", "generator_limit", "ulimit -Hn", "--workers"} {
		if !strings.Contains(files.Sentence, want) {
			t.Errorf("%q does not say %q", files.Sentence, want)
		}
	}
	if ports.Kind != metrics.LimitLocalPorts || ports.Target != "127.0.0.1:8080" || ports.Need != 50000 || ports.Limit != 28232 {
		t.Errorf("local ports: %+v, want 50000 to 127.0.0.1:8080 over 28232", ports)
	}
	for _, want := range []string{"127.0.0.1:8080", "28232 local ports", "32768-60999", "generator_limit", "ip_local_port_range", "more machines"} {
		if !strings.Contains(ports.Sentence, want) {
			t.Errorf("%q does not say %q", ports.Sentence, want)
		}
	}
	host.files, host.hardFiles, host.portLo = 1<<20, 1<<20, 1024
	host.portHi = 65535
	if ls := checkLimits(st, ss, host); len(ls) != 0 {
		t.Errorf("within the limits: %+v", ls)
	}
	if ls := checkLimits(st, ss, hostLimits{}); len(ls) != 0 {
		t.Errorf("limits unknown: %+v", ls)
	}
}
