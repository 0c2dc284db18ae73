package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/perflab/perflab/exporter"
	"github.com/perflab/perflab/store"
	"github.com/perflab/perflab/web"
)

// defaultServe is where perflab serve and run --serve listen by default:
// loopback only.
const defaultServe = "127.0.0.1:5665"

// cmdServe serves the web UI over a run history until interrupted.
func cmdServe(std *stdio, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := storeFlag(fs)
	listen := fs.String("listen", defaultServe, "address to listen on; anything but loopback needs --token or --insecure-public")
	token := fs.String("token", "", "ask every request for this token (Authorization: Bearer, or ?token= once)")
	public := fs.Bool("insecure-public", false, "listen beyond loopback without a token: anyone who reaches the address reads the history")
	var allowed listFlag
	fs.Var(&allowed, "allowed-host", "a name the server is reached by besides the listen address (and localhost on loopback): requests naming another host are refused, against DNS rebinding (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: perflab serve [--store FILE|postgres://...] [--listen 127.0.0.1:5665] [--token TOKEN]

Serves a read-only web UI over the run history: the runs (filtered by plan,
labels and status), each run as its HTML report (updated live while it
goes, also a run made by another machine writing to the same history),
comparisons, a plan's history and a long run's drift. Every asset is
embedded; it works offline. Ctrl-C stops it.

Flags:`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(std, fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return exitUsage
	}
	hosts, err := checkListen(serveFlags, *listen, *token, *public, allowed)
	if err != nil {
		return fail(std, err)
	}
	st, err := openExisting(*path)
	if err != nil {
		return fail(std, err)
	}
	defer st.Close()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(std, err)
	}
	srv := newWebServer(st, *token, hosts, std.err)
	fmt.Fprintf(std.err, "perflab serve: %s (history %s; Ctrl-C stops)\n", web.URL(l.Addr().String(), "/", *token), store.Redact(*path))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close() // live pages hold their event streams open: close them too
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(std, err)
	}
	return exitOK
}

// listenFlags are the names of the flags of one of perflab's servers:
// perflab serve's, perflab run's for its live server, or run's for its
// Prometheus metrics; shows is what anyone who reaches it may read, addr
// an address to give.
type listenFlags struct{ listen, token, public, hosts, shows, addr string }

var (
	serveFlags    = listenFlags{"--listen", "--token", "--insecure-public", "--allowed-host", "the history", defaultServe}
	runServeFlags = listenFlags{"--serve", "--serve-token", "--serve-insecure-public", "--serve-allowed-host", "the history", defaultServe}
	metricsFlags  = listenFlags{"--metrics-listen", "--metrics-token", "--metrics-insecure-public", "--metrics-allowed-host", "the run's live figures", "127.0.0.1:9464"}
)

// checkExposure is the rule of every server of perflab: its address is
// HOST:PORT; beyond loopback it asks for a token, unless told in so many
// words that anyone may read what it shows; a token given, wherever it
// listens, is one (web.CheckToken).
func checkExposure(flags listenFlags, addr, token string, public bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT, such as %s", flags.listen, addr, flags.addr)
	}
	if token != "" {
		if err := web.CheckToken(token); err != nil {
			return fmt.Errorf("%s: %w", flags.token, err)
		}
	}
	if !web.Loopback(addr) && token == "" && !public {
		return fmt.Errorf("%s %s is reachable beyond this machine: give %s TOKEN (such as $(openssl rand -hex 16)), or %s to show %s to anyone who reaches it", flags.listen, addr, flags.token, flags.public, flags.shows)
	}
	return nil
}

// checkListen checks a web server's address and token (checkExposure),
// and says what a request's Host may name (web.AllowedHosts).
func checkListen(flags listenFlags, addr, token string, public bool, allowed []string) (*web.Hosts, error) {
	if err := checkExposure(flags, addr, token, public); err != nil {
		return nil, err
	}
	hosts, err := web.AllowedHosts(addr, allowed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flags.hosts, err)
	}
	return hosts, nil
}

// newWebServer is the HTTP server of the web UI over st.
func newWebServer(st *store.Store, token string, hosts *web.Hosts, errs io.Writer) *http.Server {
	app := web.New(web.Options{Store: st, Token: token, Hosts: hosts, Version: version, Log: log.New(errs, "", 0)})
	return &http.Server{Handler: app, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
}

// serveFlag is run's --serve [ADDR]: alone, the default address.
type serveFlag struct{ addr string }

func (s *serveFlag) String() string   { return s.addr }
func (s *serveFlag) IsBoolFlag() bool { return true }
func (s *serveFlag) Set(v string) error {
	switch v {
	case "true":
		s.addr = defaultServe
	case "false":
		s.addr = ""
	default:
		s.addr = v
	}
	return nil
}

// liveServer serves the web UI beside a run (run --serve), from the
// history the run writes to, until stopped.
type liveServer struct {
	srv   *http.Server
	st    *store.Store
	addr  string
	token string
}

func startLive(addr, storePath, token string, public bool, allowed []string, errs io.Writer) (*liveServer, error) {
	hosts, err := checkListen(runServeFlags, addr, token, public, allowed)
	if err != nil {
		return nil, err
	}
	if storePath == "off" {
		return nil, errors.New("--serve shows the run from the history: --store off has none")
	}
	st, err := store.Open(storePath)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		st.Close()
		return nil, err
	}
	srv := newWebServer(st, token, hosts, errs)
	go srv.Serve(l)
	return &liveServer{srv: srv, st: st, addr: l.Addr().String(), token: token}, nil
}

// URL is the page of run id.
func (s *liveServer) URL(id string) string { return web.URL(s.addr, "/runs/"+id, s.token) }

// stop lets the pages open hear the run's end, then stops.
func (s *liveServer) stop() {
	time.Sleep(1500 * time.Millisecond) // a poll of the events, for the "end"
	s.srv.Close()
	s.st.Close()
}

// metricsServer gives a run's live figures to Prometheus: served at
// /metrics (run --metrics-listen), pushed by remote write
// (--prometheus-remote-write), or both.
type metricsServer struct {
	exp    *exporter.Exporter
	srv    *http.Server
	addr   string
	pusher *exporter.Pusher
	errs   io.Writer
}

// metricsListen is where run --metrics-listen serves /metrics, with its
// token (--metrics-token) or without one beyond loopback
// (--metrics-insecure-public), and the names it is reached by besides
// (--metrics-allowed-host).
type metricsListen struct {
	addr, token string
	public      bool
	allowed     listFlag
}

func startMetrics(listen metricsListen, remoteURL, planName string, labels map[string]string, errs io.Writer) (*metricsServer, error) {
	var hosts *web.Hosts
	if listen.addr != "" {
		var err error
		if hosts, err = checkListen(metricsFlags, listen.addr, listen.token, listen.public, listen.allowed); err != nil {
			return nil, err
		}
	}
	exp := exporter.New(planName, labels)
	reg := prometheus.NewRegistry()
	if err := reg.Register(exp); err != nil {
		return nil, err
	}
	m := &metricsServer{exp: exp, errs: errs}
	if remoteURL != "" {
		u, err := url.Parse(remoteURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--prometheus-remote-write %q: want an http(s) URL, such as http://127.0.0.1:9090/api/v1/write", remoteURL)
		}
		var once sync.Once
		p, err := exporter.NewPusher(remoteURL, reg, 5*time.Second, func(err error) {
			once.Do(func() { fmt.Fprintf(errs, "perflab: %v (the run goes on; its results are in its directory)\n", err) })
		})
		if err != nil {
			return nil, err
		}
		m.pusher = p
	}
	if listen.addr != "" {
		mux := http.NewServeMux()
		metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
			if !hosts.Allows(r.Host) {
				http.Error(w, fmt.Sprintf("this /metrics answers to %s, not to %q: a page of another site may be reading it through its own name (DNS rebinding). If %q is a name you reach it by, give it with --metrics-allowed-host", hosts, r.Host, r.Host), http.StatusMisdirectedRequest)
				return
			}
			if listen.token != "" && !web.HasBearer(r, listen.token) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="perflab"`)
				http.Error(w, "this /metrics asks for its token: Authorization: Bearer TOKEN (Prometheus: authorization: {credentials: TOKEN})", http.StatusUnauthorized)
				return
			}
			metrics.ServeHTTP(w, r)
		})
		l, err := net.Listen("tcp", listen.addr)
		if err != nil {
			return nil, err
		}
		m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		m.addr = l.Addr().String()
		go m.srv.Serve(l)
	}
	if m.pusher != nil {
		m.pusher.Start()
	}
	return m, nil
}

// stop pushes the run's final figures, goes on serving them for linger
// (for a last scrape), then stops.
func (m *metricsServer) stop(linger time.Duration) {
	if m.pusher != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		if err := m.pusher.Stop(ctx); err != nil {
			fmt.Fprintf(m.errs, "perflab: the run's final figures were not pushed: %v\n", err)
		}
		cancel()
	}
	if m.srv != nil {
		time.Sleep(linger)
		m.srv.Close()
	}
}
