// Package web is perflab serve: a read-only web application over the run
// history. It lists the runs, shows each as the HTML report does (updated
// live while the run goes, by server-sent events), compares runs, follows
// a plan's history and a long run's drift. Every asset is embedded: it
// works offline. It only reads the history: no request changes or
// deletes anything.
package web

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/perflab/perflab/report"
	"github.com/perflab/perflab/store"
)

//go:embed assets
var assets embed.FS

// Options configure the application.
type Options struct {
	// Store is the run history it shows.
	Store *store.Store
	// Token, if set, is asked of every request: an Authorization: Bearer
	// header, or ?token= once (it then goes in a cookie).
	Token string
	// Poll is how often a live page's events look for new intervals
	// (default 1 s).
	Poll time.Duration
	// Version is perflab's, shown in the pages.
	Version string
	// Log receives the errors a visitor is not shown (default: none).
	Log *log.Logger
	// Hosts is what a request's Host header may name (AllowedHosts);
	// nil, the loopback names: localhost, 127.0.0.1, ::1.
	Hosts *Hosts
}

// Server is the application, an http.Handler.
type Server struct {
	o     Options
	mux   *http.ServeMux
	cache *cache // finished runs' pages and series
}

// New makes the application.
func New(o Options) *Server {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Hosts == nil {
		o.Hosts = &Hosts{names: loopbackNames}
	}
	s := &Server{o: o, mux: http.NewServeMux(), cache: newCache(128 << 20)}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(either{static, report.Assets()})))
	s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "max-age=86400")
		http.ServeFileFS(w, r, static, "favicon.svg")
	})
	s.mux.HandleFunc("GET /{$}", s.runsPage)
	s.mux.HandleFunc("GET /runs/{id}", s.runPage)
	s.mux.HandleFunc("GET /runs/{id}/events", s.events)
	s.mux.HandleFunc("GET /runs/{id}/drift", s.driftPage)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /history", s.historyPage)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/runs/{id}/series", s.apiSeries)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.fail(w, r, http.StatusMethodNotAllowed, "perflab serve is read-only: it answers GET only")
			return
		}
		s.fail(w, r, http.StatusNotFound, "no such page: "+r.URL.Path)
	})
	return s
}

// either is web's assets, then the report's charts' (uPlot, charts.js):
// the run page draws the report's charts as the HTML report does. It
// holds files only: a directory is not there (http.FileServerFS would
// list it), so /static/ answers 404 as any page that is not there.
type either [2]fs.FS

func (e either) Open(name string) (fs.File, error) {
	f, err := e[0].Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = e[1].Open(name)
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return f, nil
}

// csp lets the pages run only perflab's own scripts (no inline script,
// nothing from elsewhere); the report's inline styles stay allowed.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP checks the token, sets the security headers, and never shows a
// visitor a stack trace.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logf("perflab serve: %s %s: panic: %v", r.Method, r.URL.Path, v)
			s.fail(w, r, http.StatusInternalServerError, "perflab could not make this page; the server's log says why")
		}
	}()
	if !s.o.Hosts.Allows(r.Host) {
		s.fail(w, r, http.StatusMisdirectedRequest, fmt.Sprintf("this perflab serve answers to %s, not to %q: a page of another site may be reading it through its own name (DNS rebinding). If %q is a name you reach it by, start perflab serve with --allowed-host %s (perflab run: --serve-allowed-host)",
			s.o.Hosts, r.Host, r.Host, hostOnly(r.Host)))
		return
	}
	if s.o.Token != "" && !s.authorized(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.fail(w, r, http.StatusMethodNotAllowed, "perflab serve is read-only: it answers GET only")
		return
	}
	s.mux.ServeHTTP(w, r)
}

const tokenCookie = "perflab_token"

// MinTokenLength is the fewest characters a server's token may have: as
// hex, 64 bits, too many to guess by trying over a network (the servers
// do not slow wrong guesses down). $(openssl rand -hex 16) gives 32.
const MinTokenLength = 16

// MinTokenDistinct is the fewest different characters a token may have:
// it refuses a character or a short pattern repeated (aaaa..., abab...,
// 1234 1234 ...), which a random token of MinTokenLength characters has
// less than one chance in a million to be.
const MinTokenDistinct = 5

// CheckToken says why token cannot be a server's token (Options.Token,
// the metrics' token), nil if it can: at least MinTokenLength characters
// of at least MinTokenDistinct different ones, each a letter, a digit or
// one of - . _ ~ + / = (RFC 6750's token characters: it travels as it is
// in an Authorization header, a cookie and a URL, where any other would
// be changed or refused). A message never repeats the token: at most the
// one character refused.
func CheckToken(token string) error {
	distinct := map[rune]bool{}
	for _, c := range token {
		if c >= utf8.RuneSelf || !unicode.IsLetter(c) && !unicode.IsDigit(c) && !strings.ContainsRune("-._~+/=", c) {
			return fmt.Errorf("the token holds %q: a token is letters, digits and - . _ ~ + / = (it travels as it is in an Authorization header, a cookie and a URL)", c)
		}
		distinct[c] = true
	}
	if len(token) < MinTokenLength {
		return fmt.Errorf("a token of %d characters: a token is %d characters at least, too many to guess by trying (such as $(openssl rand -hex 16))", len(token), MinTokenLength)
	}
	if len(distinct) < MinTokenDistinct {
		return fmt.Errorf("a token of %d characters has %d different: a token has %d different characters at least, a random one (such as $(openssl rand -hex 16))", len(token), len(distinct), MinTokenDistinct)
	}
	return nil
}

// HasBearer reports whether r carries token as Authorization: Bearer
// TOKEN, compared in constant time.
func HasBearer(r *http.Request, token string) bool {
	a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && sameToken(a, token)
}

func sameToken(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// authorized checks the request's token: a Bearer header, the cookie, or
// ?token= (which sets the cookie and comes back without it in the URL).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	ok := func(t string) bool { return sameToken(t, s.o.Token) }
	if HasBearer(r, s.o.Token) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && ok(c.Value) {
		return true
	}
	if t := r.URL.Query().Get("token"); t != "" && ok(t) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		q := r.URL.Query()
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return false
	}
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer realm="perflab"`)
	s.fail(w, r, http.StatusUnauthorized, "this perflab serve asks for its token: open the URL it printed (with ?token=...), or send Authorization: Bearer TOKEN")
	return false
}

func (s *Server) logf(format string, a ...any) {
	if s.o.Log != nil {
		s.o.Log.Printf(format, a...)
	}
}

// fail writes an error page (or JSON for the API) with its status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	page(w, "error", layout{Title: http.StatusText(status), Version: s.o.Version}, struct {
		Status int
		Text   string
		Msg    string
	}{status, http.StatusText(status), msg})
}

// storeFailed is the page of a history that cannot be read.
func (s *Server) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.fail(w, r, http.StatusNotFound, err.Error())
		return
	}
	s.logf("perflab serve: %s: %v", r.URL.Path, err)
	s.fail(w, r, http.StatusServiceUnavailable, "the run history cannot be read: "+err.Error())
}

// Loopback reports whether addr (host:port) listens on loopback only.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the address a browser opens for a listener's address, with the
// token when there is one.
func URL(addr, path, token string) string {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	u := url.URL{Scheme: "http", Host: addr, Path: path}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return u.String()
}

// layout is what every page's frame shows.
type layout struct {
	Title   string
	Version string
	Nav     string // the current section: runs, compare, history
	// Styles and Scripts are the page's own, beside app.css (a page with
	// the report's charts: chartStyles, chartScripts).
	Styles, Scripts []string
}

// page renders a named page of pages.html in the layout.
func page(w http.ResponseWriter, name string, l layout, data any) {
	if err := pages.ExecuteTemplate(w, name, struct {
		L layout
		D any
	}{l, data}); err != nil {
		fmt.Fprintf(w, "<p>perflab: %s</p>", template.HTMLEscapeString(err.Error()))
	}
}
