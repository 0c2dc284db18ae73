package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// DefaultGrace is how long Close lets requests in progress finish.
const DefaultGrace = 5 * time.Second

// Server serves a Config's routes. Create it with New, then Start it; or use
// it as an http.Handler.
type Server struct {
	listen    string
	routes    []*route
	mux       *http.ServeMux
	log       io.Writer
	seed      uint64
	seeded    bool
	grace     time.Duration
	unmatched atomic.Int64

	mu       sync.Mutex
	state    int // stateNew, stateStarted or stateClosed
	ln       net.Listener
	hs       *http.Server
	done     chan struct{} // closed when the serving goroutine returns
	serveErr error         // written by that goroutine before done closes

	closeOnce sync.Once
	closeErr  error

	// grpc serves the gRPC stubs, if any.
	grpc *grpcSim
}

const (
	stateNew = iota
	stateStarted
	stateClosed
)

// RouteStats is what one route saw.
type RouteStats struct {
	Name, Method, Path string
	// Requests counts every request the route matched, including failed
	// and canceled ones.
	Requests int64
	// InjectedErrors counts the requests answered with the route's
	// injected failure.
	InjectedErrors int64
	// Canceled counts the requests whose client went away during the
	// simulated latency; they got no response.
	Canceled int64
}

// Option configures a Server.
type Option func(*Server)

// WithSeed makes latencies and injected errors reproducible: the n-th request
// to a route draws the same delay and failure decision for the same seed,
// whatever the concurrency. Without it the seed is random.
func WithSeed(seed int64) Option {
	return func(s *Server) { s.seed, s.seeded = uint64(seed), true }
}

// WithLog makes Start write the address and the routes to w, and the HTTP
// server write its errors there (they are discarded otherwise).
func WithLog(w io.Writer) Option { return func(s *Server) { s.log = w } }

// WithGrace sets how long Close waits for requests in progress before
// closing their connections (default DefaultGrace).
func WithGrace(d time.Duration) Option { return func(s *Server) { s.grace = d } }

// New validates cfg (see Config.Validate) and builds a server for it; it
// does not listen until Start. The server keeps no reference to cfg.
func New(cfg *Config, opts ...Option) (*Server, error) {
	if cfg == nil {
		return nil, errors.New("sim: nil config")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{listen: cfg.Listen, mux: http.NewServeMux(), grace: DefaultGrace}
	for _, o := range opts {
		o(s)
	}
	if !s.seeded {
		s.seed = rand.Uint64()
	}
	for _, r := range cfg.Routes {
		rt, err := compileRoute(r)
		if err != nil {
			return nil, err
		}
		rt.seed = mix64(s.seed ^ fnv64(r.pattern()))
		if err := register(s.mux, r.pattern(), rt); err != nil {
			return nil, fmt.Errorf("route %q: %s", r.Name, explain(err))
		}
		s.routes = append(s.routes, rt)
	}
	if err := register(s.mux, "/", http.HandlerFunc(s.notFound)); err != nil {
		return nil, fmt.Errorf("routes: %s", explain(err))
	}
	if cfg.GRPC != nil {
		gs, err := compileGRPC(cfg.GRPC)
		if err != nil {
			return nil, err
		}
		s.grpc = gs
	}
	return s, nil
}

// ServeHTTP serves one request, as the listening server does; it lets tests
// and embedders use the simulator without a listener.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// notFound answers requests that no route matches, including a route's
// path with another method.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.unmatched.Add(1)
	b, _ := json.Marshal(struct {
		Error  string `json:"error"`
		Method string `json:"method"`
		Path   string `json:"path"`
	}{"no simulated route matches", r.Method, r.URL.Path})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusNotFound)
	w.Write(b)
}

// Start listens on the configured address and serves in a goroutine until
// Close. A server starts at most once.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateStarted:
		return errors.New("sim: server already started")
	case stateClosed:
		return errors.New("sim: server closed")
	}
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	errLog := io.Discard
	if s.log != nil {
		errLog = s.log
	}
	if s.grpc != nil {
		if err := s.grpc.start(s.seed); err != nil {
			ln.Close()
			return err
		}
	}
	s.ln = ln
	for _, rt := range s.routes {
		if rt.degraded != nil {
			rt.degradeAt.Store(time.Now().Add(rt.degradeIn).UnixNano())
		}
		rt.stallFrom.Store(time.Now().UnixNano())
		if rt.errWindow {
			rt.errFrom.Store(time.Now().Add(rt.errAfter).UnixNano())
		}
	}
	s.hs = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(errLog, "sim: ", 0),
	}
	s.done = make(chan struct{})
	s.state = stateStarted
	if s.log != nil {
		s.logRoutes()
	}
	go func(hs *http.Server) {
		defer close(s.done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
		}
	}(s.hs)
	return nil
}

func (s *Server) logRoutes() {
	fmt.Fprintf(s.log, "sim: serving %d routes on http://%s\n", len(s.routes), s.ln.Addr())
	tw := tabwriter.NewWriter(s.log, 0, 0, 2, ' ', 0)
	for _, rt := range s.routes {
		errs := ""
		switch {
		case rt.errRatio > 0:
			errs = fmt.Sprintf("errors %g%% -> %d", rt.errRatio*100, rt.errStatus)
		case rt.errEvery > 0:
			errs = fmt.Sprintf("errors every %d -> %d", rt.errEvery, rt.errStatus)
		}
		if errs != "" && rt.errWindow {
			errs += fmt.Sprintf(" from %v", rt.errAfter)
			if rt.errFor > 0 {
				errs += fmt.Sprintf(" for %v", rt.errFor)
			}
		}
		fmt.Fprintf(tw, "sim:   %s\t%s\t%d\tlatency %s\t%s\t(%s)\n",
			rt.method, rt.path, rt.status, rt.latency, errs, rt.name)
	}
	if s.grpc != nil {
		fmt.Fprintf(tw, "sim: serving %d gRPC methods on %s (with server reflection)\n", len(s.grpc.methods), s.grpc.ln.Addr())
		for _, m := range s.grpc.methods {
			errs := ""
			if m.errRatio > 0 {
				errs = fmt.Sprintf("errors %g%% -> %s", m.errRatio*100, m.code)
			}
			fmt.Fprintf(tw, "sim:   GRPC\t%s\tlatency %s\t%s\t(%s)\n", m.path, m.latency, errs, m.name)
		}
	}
	tw.Flush()
}

// GRPCAddr is the address the gRPC stubs listen on ("" without them);
// before Start it is the configured address.
func (s *Server) GRPCAddr() string {
	if s.grpc == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grpc.ln == nil {
		return s.grpc.listen
	}
	return s.grpc.ln.Addr().String()
}

// Addr is the address the server listens on, with the port actually bound;
// before Start it is the configured address.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return s.listen
	}
	return s.ln.Addr().String()
}

// URL is "http://" + Addr().
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close stops the server gracefully: it stops accepting, lets requests in
// progress finish for up to the grace period, then closes what remains, and
// waits for the serving goroutine. It may be called more than once, and
// before Start.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Server) shutdown() error {
	s.mu.Lock()
	was := s.state
	s.state = stateClosed
	s.mu.Unlock()
	if was != stateStarted {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.grace)
	defer cancel()
	if s.grpc != nil {
		s.grpc.stop(ctx)
	}
	err := s.hs.Shutdown(ctx)
	if err != nil {
		s.hs.Close() // the grace period ran out: cut the remaining connections
	}
	<-s.done
	if s.serveErr != nil {
		return fmt.Errorf("sim: %w", s.serveErr)
	}
	if err != nil {
		return fmt.Errorf("sim: closing: %w", err)
	}
	return nil
}

// Stats reports each route's counters, in configuration order. It may be
// called at any time; each counter is read atomically.
func (s *Server) Stats() []RouteStats {
	out := make([]RouteStats, len(s.routes))
	for i, rt := range s.routes {
		out[i] = RouteStats{
			Name:           rt.name,
			Method:         rt.method,
			Path:           rt.path,
			Requests:       rt.requests.Load(),
			InjectedErrors: rt.injected.Load(),
			Canceled:       rt.canceled.Load(),
		}
	}
	if s.grpc != nil {
		for _, m := range s.grpc.methods {
			out = append(out, RouteStats{Name: m.name, Method: m.method, Path: m.path,
				Requests: m.requests.Load(), InjectedErrors: m.injected.Load(), Canceled: m.canceled.Load()})
		}
	}
	return out
}

// Unmatched is the number of requests no route matched (answered 404).
func (s *Server) Unmatched() int64 { return s.unmatched.Load() }
