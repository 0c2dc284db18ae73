package engine

import (
	"context"
	"fmt"

	"github.com/perflab/perflab/plan"
	pgrpc "github.com/perflab/perflab/protocol/grpc"
	"github.com/perflab/perflab/tmpl"
)

// FirstMessage names, after a server-streaming step's name, the operation
// of its time to the first message.
const FirstMessage = " (first message)"

// grpcStep is a compiled gRPC call and the client it goes through.
type grpcStep struct {
	call   *pgrpc.Call
	client *pgrpc.Client
}

func compileGRPC(p *plan.Plan, m *messaging, st *plan.Step) (*grpcStep, error) {
	if m == nil || m.grpc == nil {
		return nil, fmt.Errorf("step %s: the plan's gRPC client is not started", st.Name)
	}
	c, err := pgrpc.Compile(st, p.GRPC.Target, p.GRPC.Timeout.D)
	if err != nil {
		return nil, err
	}
	return &grpcStep{call: c, client: m.grpc}, nil
}

// do makes the call. It is not bound to the load's end: a call in flight
// completes (or meets its deadline), as an HTTP request does.
func (g *grpcStep) do(vars *vars) pgrpc.Result {
	return g.call.Do(context.Background(), g.client, vars)
}

// grpcCall makes a VU's call, counted in flight.
func (w *worker) grpcCall(g *grpcStep) pgrpc.Result {
	if w.inflight != nil {
		w.inflight.add(w.shard, 1)
		defer w.inflight.add(w.shard, -1)
	}
	return g.do(w.vars)
}

// startGRPC makes the plan's gRPC client and, for a plan that asks its
// server, resolves the plan's calls against the descriptors the server
// gives by reflection: a wrong service, method or field is a plan error
// before anything is sent.
func (m *messaging) startGRPC(ctx context.Context, p *plan.Plan, lookup tmpl.Lookup) error {
	g := p.GRPC
	o := pgrpc.Options{Connections: g.Connections, UserAgent: "perflab"}
	if g.TLS {
		o.TLS = tlsConfig(p)
	}
	c := pgrpc.NewClient(o)
	m.grpc = c
	if g.Schema != nil {
		return nil
	}
	if g.Target == nil {
		return fmt.Errorf("grpc.reflection needs grpc.target: the server to ask")
	}
	target, err := g.Target.T.Expand(lookup)
	if err != nil {
		return fmt.Errorf("grpc.target: %w", err)
	}
	conn, err := c.Conn(target)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, g.Timeout.D)
	defer cancel()
	s, err := pgrpc.Reflect(rctx, conn, grpcServices(p))
	if err != nil {
		return fmt.Errorf("grpc %s: %w", target, err)
	}
	g.Schema = s
	return p.ResolveGRPC(s)
}

// grpcServices are the services the plan's steps call.
func grpcServices(p *plan.Plan) []string {
	seen := map[string]bool{}
	var out []string
	p.EachStep(func(st *plan.Step) {
		if st.GRPC != nil && !seen[st.GRPC.Service] {
			seen[st.GRPC.Service] = true
			out = append(out, st.GRPC.Service)
		}
	})
	return out
}
