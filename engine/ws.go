package engine

import (
	"context"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	pws "github.com/perflab/perflab/protocol/ws"
)

// Suffixes of the operations beside a WebSocket step's own.
const (
	// WSConnect names a ws step's openings of its connection.
	WSConnect = " (connect)"
	// WSUnmatched names the messages a ws step's awaits passed over.
	WSUnmatched = " (unmatched)"
)

// wsStep is a compiled WebSocket step and its dialer.
type wsStep struct {
	step      *pws.Step
	dialer    *pws.Dialer
	connectOp int
	// unmatchedOp counts the messages that came before the match.
	unmatchedOp int
}

// newWSDialer is the run's WebSocket dialer: the plan's TLS settings, its
// connect timeout.
func newWSDialer(p *plan.Plan) *pws.Dialer {
	timeout := p.HTTP.ConnectTimeout.D
	if timeout <= 0 {
		timeout = p.HTTP.Timeout.D
	}
	return pws.NewDialer(tlsConfig(p), timeout)
}

// wsDo runs a VU's WebSocket step and records its connect and unmatched
// messages; the step's own result is recorded by leaf.
func (w *worker) wsDo(ctx context.Context, n *node) pws.Result {
	if w.ws == nil {
		w.ws = pws.NewConns(n.ws.dialer)
	}
	if w.inflight != nil {
		w.inflight.add(w.shard, 1)
		defer w.inflight.add(w.shard, -1)
	}
	r := n.ws.step.Do(ctx, w.ws, w.vars)
	if r.Dialed {
		w.rec.Record(w.shard, n.ws.connectOp, r.Connect, r.Connect, r.ConnectErr, 0)
	}
	for range r.Unmatched {
		w.rec.Record(w.shard, n.ws.unmatchedOp, 0, 0, metrics.OK, 0)
	}
	return r
}
