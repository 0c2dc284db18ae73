package engine

import (
	"github.com/perflab/perflab/metrics"
	phttp "github.com/perflab/perflab/protocol/http"
)

// Suffixes of the operations beside an HTTP step's own: the responses its
// requests followed to their final one (phttp.Hop), each a request the
// server counted, so that perflab counts each one too. The step's own
// operation times the whole exchange, from its first request to its final
// response, as a user sees "the request" (and JMeter's parent sample).
const (
	// RedirectHop names the redirects a step's requests followed.
	RedirectHop = " (redirect)"
	// AuthHop names the digest challenges (401) a step's requests answered.
	AuthHop = " (auth)"
)

// hopOps are the operation ids of a step's hops; 0 where the step has none
// (an id 0 is the first step's own).
type hopOps struct{ redirect, auth int }

// newHopOps lays out the hop operations a request can have beside op, its
// own: redirects where it follows any, challenges where it answers them.
// A stage drops those that recorded nothing (dropIdleHops): a report lists
// "NAME (redirect)" only where a redirect was followed.
func newHopOps(l *layout, req *phttp.Request, op metrics.Op) hopOps {
	var h hopOps
	if req.Redirects() > 0 {
		h.redirect = l.id(metrics.Op{Name: op.Name + RedirectHop, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction})
	}
	if req.Challenged() {
		h.auth = l.id(metrics.Op{Name: op.Name + AuthHop, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction})
	}
	return h
}

// hops records the hops of a step's result, each with its own latency; in
// an open model the first is timed from the iteration's due time, as the
// step's own operation is (call it before latency).
func (w *worker) hops(n *node, res phttp.Result) {
	for i, h := range res.Hops {
		op := n.hops.redirect
		if h.Auth {
			op = n.hops.auth
		}
		lat := h.Latency
		if i == 0 && !w.due.IsZero() {
			lat += h.Start.Sub(w.due)
		}
		w.rec.Record(w.shard, op, lat, h.Latency, metrics.OK, h.Bytes)
	}
}

// phaseHops records the hops of a setup or teardown step (of operation
// op) in ph, laying out their operations as they first happen.
func phaseHops(ph *metrics.Phase, lay *layout, op metrics.Op, res phttp.Result) {
	for _, h := range res.Hops {
		suffix := RedirectHop
		if h.Auth {
			suffix = AuthHop
		}
		op := lay.id(metrics.Op{Name: op.Name + suffix, Kind: op.Kind, Scenario: op.Scenario, Transaction: op.Transaction})
		for len(ph.Totals) < len(lay.ops) {
			ph.Totals = append(ph.Totals, metrics.NewStats())
		}
		ph.Ops = lay.ops
		ph.Totals[op].Add(h.Latency, h.Latency, metrics.OK, h.Bytes)
	}
}

// dropIdleHops drops from a finished stage the hop operations of its
// scenarios that recorded nothing.
func dropIdleHops(ph *metrics.Phase, scens []*scenario) {
	idle := map[int]bool{}
	for _, s := range scens {
		each(s.nodes, func(n *node) {
			for _, op := range []int{n.hops.redirect, n.hops.auth} {
				if op > 0 && op < len(ph.Totals) && ph.Totals[op].Count == 0 {
					idle[op] = true
				}
			}
		})
	}
	if len(idle) == 0 {
		return
	}
	var ops []metrics.Op
	var totals []*metrics.Stats
	for i, op := range ph.Ops {
		if !idle[i] && i < len(ph.Totals) {
			ops, totals = append(ops, op), append(totals, ph.Totals[i])
		}
	}
	ph.Ops, ph.Totals = ops, totals
}
