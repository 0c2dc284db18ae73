package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// A stage's load may need more sockets at once than the generator's host
// lets its process open: file descriptors (the open-file limit, less what
// the process has open) and, to one destination address, local ports (a
// connection is a (source, destination) pair of addresses and ports, so
// the port range bounds the connections to each destination ip:port).
// The connections beyond them fail on the generator (generator_limit),
// whatever the target is doing. Before each stage's load, what it may hold
// is set against what the host allows, and each shortfall is said: on
// stderr, and in the stage's generator check.
//
// Go raises the soft open-file limit to one below the hard limit as any
// Go program starts (package syscall's init, since Go 1.19; processes it
// starts get the original back): perflab reads the limit as raised.

// h2Streams is how many calls an HTTP/2 connection carries at once, as
// many servers allow by default (Go's allow 250, nginx 128): the shared
// client opens another connection when they are all in use.
const h2Streams = 100

// sockets is the most sockets a stage's load may hold open at once: in
// all, and to each destination (host:port) that the stage's variables
// tell.
type sockets struct {
	total int
	to    map[string]int
	// parts say where the total comes from: "browse: 50000".
	parts []string
}

func (ss *sockets) add(part string, n int) {
	if n > 0 {
		ss.total += n
		ss.parts = append(ss.parts, fmt.Sprintf("%s: %d", part, n))
	}
}

// toAddr counts n connections to addr ("": a destination only the VUs
// know, which the port check leaves out).
func (ss *sockets) toAddr(addr string, n int) {
	if addr != "" {
		ss.to[addr] += n
	}
}

// flowTargets are what a flow's steps connect to, as far as a stage's
// variables tell it: HTTP destinations, WebSocket URLs (a VU keeps a
// connection per URL) with their destinations, gRPC targets with theirs.
type flowTargets struct {
	http map[string]bool
	ws   map[string]string
	grpc map[string]string
}

func (f *flowTargets) walk(nodes []*node, vars map[string]string) {
	each(nodes, func(n *node) {
		switch {
		case n.req != nil:
			f.http[n.req.Address(vars)] = true
		case n.ws != nil:
			f.ws[n.ws.step.URL()] = n.ws.step.Address(vars)
		case n.grpc != nil:
			target, addr := n.grpc.call.Target(vars)
			if target == "" { // a VU's values choose it: a pool of its own
				target = "\x00" + n.name
			}
			f.grpc[target] = addr
		}
	})
}

// stageSockets is the most sockets a stage's scenarios (compiled, their
// engines chosen) may hold at once:
//   - on the event loop, a connection per VU (to one destination at a
//     time);
//   - on goroutines with http.connections: per-vu, a connection per VU to
//     each destination;
//   - on goroutines with the shared pool, per destination a connection
//     per VU calling it (HTTP/2: per 100 of them), at most
//     http.max_conns_per_host;
//   - a WebSocket connection per VU and URL;
//   - grpc.connections per gRPC target, shared by all.
//
// The buses' connections are opened before setup: they are among the
// descriptors the process has open (hostLimits.inUse).
func stageSockets(p *plan.Plan, scens []*scenario, vars map[string]string) sockets {
	ss := sockets{to: map[string]int{}}
	pooled := map[string]int{} // the shared pool: VUs calling each destination
	var pooledOrder []string
	grpc := map[string]string{}
	for _, s := range scens {
		vus := s.Peak()
		f := flowTargets{http: map[string]bool{}, ws: map[string]string{}, grpc: grpc}
		f.walk(s.nodes, vars)
		n := 0
		switch {
		case len(f.http) == 0:
		case s.engine == EngineLoop:
			n += vus
			for a := range f.http {
				ss.toAddr(a, vus)
			}
		case p.HTTP.Connections == "per-vu":
			n += vus * len(f.http)
			for a := range f.http {
				ss.toAddr(a, vus)
			}
		default:
			for a := range f.http {
				if _, ok := pooled[a]; !ok {
					pooledOrder = append(pooledOrder, a)
				}
				pooled[a] += vus
			}
		}
		n += vus * len(f.ws)
		for _, a := range f.ws {
			ss.toAddr(a, vus)
		}
		ss.add(s.sc.Name, n)
	}
	shared := 0
	slices.Sort(pooledOrder)
	for _, a := range pooledOrder {
		n := pooled[a]
		if p.HTTP.Version == "2" {
			n = (n + h2Streams - 1) / h2Streams
		}
		if m := p.HTTP.MaxConnsPerHost; m > 0 {
			n = min(n, m)
		}
		shared += n
		ss.toAddr(a, n)
	}
	ss.add("the shared HTTP connections", shared)
	if len(grpc) > 0 {
		conns := p.GRPC.Connections
		for _, a := range grpc {
			ss.toAddr(a, conns)
		}
		ss.add("gRPC", conns*len(grpc))
	}
	return ss
}

// hostLimits are what the generator's host lets its process open; a
// zero is a limit unknown (off Linux), which is not checked.
type hostLimits struct {
	// files is the soft open-file limit (RLIMIT_NOFILE) as Go raised it,
	// hardFiles the hard one; inUse the descriptors the process had open
	// before the load (its files, the buses' connections, ...).
	files, hardFiles, inUse int
	// portLo and portHi are the local port range
	// (net.ipv4.ip_local_port_range, for IPv6 too).
	portLo, portHi int
}

// checkLimits is what a stage's sockets need beyond what the host
// allows, each with a sentence that says what to do.
func checkLimits(st plan.Stage, ss sockets, h hostLimits) []metrics.HostLimit {
	var out []metrics.HostLimit
	where := fmt.Sprintf("stage %d (%s)", st.Index, st.Name())
	if free := h.files - h.inUse; h.files > 0 && ss.total > free {
		out = append(out, metrics.HostLimit{Kind: metrics.LimitOpenFiles, Need: ss.total, Limit: free,
			Sentence: fmt.Sprintf("%s: the load may hold %d sockets open at once (%s), more than the %d file descriptors this process may still open "+
				"(open-file limit %d, hard limit %d, %d in use): the connections beyond them will fail as generator_limit, the generator's failure, not the target's; "+
				"raise the hard limit (ulimit -Hn as root, nofile in /etc/security/limits.conf, LimitNOFILE= for a systemd service: perflab raises its own soft limit to it), "+
				"or spread the VUs over more processes (perflab run --workers N)",
				where, ss.total, strings.Join(ss.parts, "; "), free, h.files, h.hardFiles, h.inUse)})
	}
	if h.portHi <= 0 {
		return out
	}
	ports := h.portHi - h.portLo + 1
	var dests []string
	for a, n := range ss.to {
		if n > ports {
			dests = append(dests, a)
		}
	}
	slices.Sort(dests)
	for _, a := range dests {
		out = append(out, metrics.HostLimit{Kind: metrics.LimitLocalPorts, Target: a, Need: ss.to[a], Limit: ports,
			Sentence: fmt.Sprintf("%s: the load may hold %d connections at once to %s, more than the %d local ports this host has for one destination "+
				"(net.ipv4.ip_local_port_range %d-%d): the connections beyond them will fail as generator_limit, the generator's failure, not the target's; "+
				`widen the range (sysctl -w net.ipv4.ip_local_port_range="1024 65535"), or spread the VUs over more machines (a distributed run: perflab run --segment I/N on each)`,
				where, ss.to[a], a, ports, h.portLo, h.portHi)})
	}
	return out
}
