package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/tmpl"
)

// Server serves a Config's routes.
type Server struct {
	cfg    *Config
	mux    *http.ServeMux
	routes []*routeState
	log    io.Writer
	seed   uint64
	seq    atomic.Uint64

	srv       *http.Server
	ln        net.Listener
	wg        sync.WaitGroup
	unmatched atomic.Int64
}

type routeState struct {
	*Route
	requests atomic.Int64
	injected atomic.Int64
}

// RouteStats is what one route saw.
type RouteStats struct {
	Name, Method, Path string
	Requests           int64
	InjectedErrors     int64
}

// Option configures a Server.
type Option func(*Server)

// WithSeed makes latencies and injected errors reproducible.
func WithSeed(seed uint64) Option { return func(s *Server) { s.seed = seed } }

// WithLog writes a startup line per route to w.
func WithLog(w io.Writer) Option { return func(s *Server) { s.log = w } }

// New builds a server; it does not listen until Start.
func New(cfg *Config, opts ...Option) (s *Server, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s = &Server{cfg: cfg, mux: http.NewServeMux(), seed: uint64(time.Now().UnixNano())}
	for _, o := range opts {
		o(s)
	}
	defer func() {
		// ServeMux panics on conflicting patterns; report it as an error.
		if p := recover(); p != nil {
			s, err = nil, fmt.Errorf("routes conflict: %v", p)
		}
	}()
	for _, r := range cfg.Routes {
		rs := &routeState{Route: r}
		s.routes = append(s.routes, rs)
		s.mux.HandleFunc(r.Method+" "+r.Path, s.handler(rs))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.unmatched.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"no simulated route for %s %s"}`, r.Method, strconv.Quote(r.URL.Path))
	})
	return s, nil
}

// rngPool hands each request a generator without a shared lock.
func (s *Server) rng() *rand.Rand {
	n := s.seq.Add(1)
	return rand.New(rand.NewPCG(s.seed, n))
}

func (s *Server) handler(rs *routeState) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		count := rs.requests.Add(1)
		rng := s.rng()
		if d := rs.Latency.Sample(rng); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if e := rs.Errors; e != nil && e.Ratio > 0 && rng.Float64() < e.Ratio {
			rs.injected.Add(1)
			w.WriteHeader(e.Status)
			io.WriteString(w, e.Body)
			return
		}
		var reqBody string
		if rs.readBody {
			b, _ := io.ReadAll(r.Body)
			reqBody = string(b)
		}
		for k, v := range rs.Headers {
			w.Header().Set(k, v)
		}
		out, _ := rs.body.Expand(tmpl.LookupFunc(func(name string) (string, bool) {
			switch {
			case name == "method":
				return r.Method, true
			case name == "path":
				return r.URL.Path, true
			case name == "body":
				return reqBody, true
			case name == "route":
				return rs.Name, true
			case name == "count":
				return strconv.FormatInt(count, 10), true
			case len(name) > 5 && name[:5] == "path.":
				v := r.PathValue(name[5:])
				return v, v != ""
			case len(name) > 6 && name[:6] == "query.":
				return r.URL.Query().Get(name[6:]), true
			case len(name) > 7 && name[:7] == "header.":
				return r.Header.Get(name[7:]), true
			}
			return "", false
		}))
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.WriteHeader(rs.Status)
		io.WriteString(w, out)
	}
}

// ServeHTTP serves a request directly, without a listener (for tests and
// embedding).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Start listens on the configured loopback address and serves in the
// background until Close.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	if s.log != nil {
		for _, r := range s.routes {
			fmt.Fprintf(s.log, "sim: %-6s %s -> %d (%s)\n", r.Method, r.Path, r.Status, r.Name)
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && s.log != nil {
			fmt.Fprintf(s.log, "sim: %v\n", err)
		}
	}()
	return nil
}

// Addr is the address actually bound.
func (s *Server) Addr() string {
	if s.ln == nil {
		return s.cfg.Listen
	}
	return s.ln.Addr().String()
}

// URL is http://Addr.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close stops serving, letting requests in progress finish for up to 5s.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	s.wg.Wait()
	return err
}

// Stats reports each route's counts in configuration order.
func (s *Server) Stats() []RouteStats {
	out := make([]RouteStats, len(s.routes))
	for i, r := range s.routes {
		out[i] = RouteStats{Name: r.Name, Method: r.Method, Path: r.Path, Requests: r.requests.Load(), InjectedErrors: r.injected.Load()}
	}
	return out
}

// Unmatched is the number of requests no route matched.
func (s *Server) Unmatched() int64 { return s.unmatched.Load() }
