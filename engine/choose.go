package engine

import (
	"runtime"

	"github.com/perflab/perflab/plan"
)

// Engines a scenario runs on.
const (
	EngineLoop       = "event_loop" // VUs as state machines on epoll loops (loop.go)
	EngineGoroutines = "goroutines" // a goroutine per VU (executor.go, worker.go)
)

// chooseEngine picks the engine of scenario s in a stage with variables
// vars: the event loop, the cheaper (bench/README.md), wherever it can run
// the scenario, unless the plan says http.event_loop: false; else
// goroutines, and why. A plan that says http.event_loop: true was refused
// at load time (plan.Validate) where the loop cannot run it.
func chooseEngine(p *plan.Plan, s *scenario, vars map[string]string) (engine, why string) {
	if el := p.HTTP.EventLoop; el != nil && !*el {
		return EngineGoroutines, "http.event_loop: false"
	}
	if runtime.GOOS != "linux" {
		return EngineGoroutines, "the event loop needs Linux (epoll)"
	}
	if p.HTTP.MaxConnsPerHost > 0 {
		return EngineGoroutines, "http.max_conns_per_host: the event loop gives every VU a connection of its own"
	}
	if why := loopCannot(s.nodes, vars); why != "" {
		return EngineGoroutines, why
	}
	return EngineLoop, ""
}

// loopCannot says why the event loop cannot run a flow, or "" if it can.
func loopCannot(nodes []*node, vars map[string]string) (why string) {
	each(nodes, func(n *node) {
		if why == "" {
			why = leafCannot(n, vars)
		}
	})
	return why
}

// leafCannot says why the event loop cannot run a step, or "".
func leafCannot(n *node, vars map[string]string) string {
	switch {
	case n.fn != nil:
		return "step " + n.name + " runs a Go function"
	case n.msg != nil:
		return "step " + n.name + " publishes or awaits messages"
	case n.grpc != nil:
		return "step " + n.name + " calls gRPC"
	case n.ws != nil:
		return "step " + n.name + " uses a WebSocket"
	case n.req != nil:
		switch scheme := n.req.Scheme(vars); {
		case scheme == "http", scheme == "https":
		case scheme == "":
			return "step " + n.name + ": its URL's scheme comes from a VU's values"
		default:
			return "step " + n.name + " sends " + scheme + ", which the event loop does not"
		}
	}
	return ""
}

// engineText names an engine in a sentence.
func engineText(engine string) string {
	if engine == EngineLoop {
		return "event loops"
	}
	return "a goroutine per VU"
}
