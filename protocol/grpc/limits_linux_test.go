//go:build linux

package grpc_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	pgrpc "github.com/perflab/perflab/protocol/grpc"
)

// Out of file descriptors, a gRPC call whose connection cannot be opened
// fails as generator_limit (grpc-go keeps the dialer's error as text
// only: "transport: Error while dialing: ... too many open files"), not
// as grpc_unavailable: the generator's own limit. With descriptors
// again, the same call through a new client reaches perflab sim's stub. The test runs in a
// process of its own, whose descriptors it uses up.
func TestOutOfDescriptorsIsGeneratorLimit(t *testing.T) {
	if !testenv.InChild(t) {
		return
	}
	srv := startSim(t, `routes: []
grpc:
  protos: [shop.proto]
  methods:
    - method: shop.Shop/GetItem
      response: '{"id": "${request.id}"}'
`)
	call := getItem(t, srv.GRPCAddr())
	c := pgrpc.NewClient(pgrpc.Options{Connections: 1})
	defer c.Close()
	release := testenv.ExhaustFiles(t)
	res := call.Do(t.Context(), c, testenv.Vars{})
	release()
	if res.Err != metrics.GeneratorLimit {
		t.Errorf("out of descriptors: %s (%s), want %s", res.Err, res.Detail, metrics.GeneratorLimit)
	}
	// c's connection waits out gRPC's reconnect backoff (its calls fail
	// fast with the dialer's last error meanwhile): a new client connects
	// at once.
	fresh := pgrpc.NewClient(pgrpc.Options{Connections: 1})
	defer fresh.Close()
	if res := call.Do(t.Context(), fresh, testenv.Vars{}); res.Err != metrics.OK {
		t.Errorf("descriptors released: %s (%s)", res.Err, res.Detail)
	}
}

// A server's own UNAVAILABLE that says the server ran out of descriptors
// is the target's failure: grpc_unavailable, not generator_limit.
func TestTargetOutOfDescriptorsIsNotGeneratorLimit(t *testing.T) {
	srv := startSim(t, `routes: []
grpc:
  protos: [shop.proto]
  methods:
    - method: shop.Shop/GetItem
      errors: {ratio: 1, code: 14, message: "open /var/lib/shop/items.db: too many open files"}
`)
	c := pgrpc.NewClient(pgrpc.Options{Connections: 1})
	defer c.Close()
	if res := getItem(t, srv.GRPCAddr()).Do(t.Context(), c, testenv.Vars{}); res.Err != metrics.GRPCUnavailable {
		t.Errorf("%s (%s), want %s", res.Err, res.Detail, metrics.GRPCUnavailable)
	}
}

// getItem is a call of shop.Shop/GetItem to addr, compiled from a plan
// beside a copy of shop.proto.
func getItem(t *testing.T, addr string) *pgrpc.Call {
	t.Helper()
	path := filepath.Join(withProto(t), "plan.yaml")
	os.WriteFile(path, []byte(`name: limits
grpc: {target: "`+addr+`", protos: [shop.proto]}
scenarios:
  - name: s
    vus: 1
    iterations: 1
    flow:
      - name: get
        grpc: {service: shop.Shop, method: GetItem, message: {id: a}}
`), 0o644)
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call, err := pgrpc.Compile(p.Scenarios[0].Flow[0], p.GRPC.Target, p.GRPC.Timeout.D)
	if err != nil {
		t.Fatal(err)
	}
	return call
}

// The target a call dials and its host:port, as a stage's variables tell
// them: gRPC's target names, its default port, a unix socket (no port).
func TestCallTarget(t *testing.T) {
	for _, c := range []struct{ target, want, addr string }{
		{"127.0.0.1:50051", "127.0.0.1:50051", "127.0.0.1:50051"},
		{"shop.example", "shop.example", "shop.example:443"},
		{"dns:///shop.example:50051", "dns:///shop.example:50051", "shop.example:50051"},
		{"dns://8.8.8.8/shop.example:50051", "dns://8.8.8.8/shop.example:50051", "shop.example:50051"},
		{"[::1]:50051", "[::1]:50051", "[::1]:50051"},
		{"unix:///run/shop.sock", "unix:///run/shop.sock", ""},
	} {
		got, addr := getItem(t, c.target).Target(map[string]string{})
		if got != c.want || addr != c.addr {
			t.Errorf("%s: target %q, address %q; want %q, %q", c.target, got, addr, c.want, c.addr)
		}
	}
}
