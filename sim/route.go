package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/tmpl"
)

// route is a Route compiled for serving: defaults applied, the body
// template parsed and its variables resolved, headers canonicalised.
type route struct {
	name, method, path string

	status    int
	headers   []header
	body      *tmpl.Template
	static    []byte   // the body, when the template has no variables
	staticLen []string // the static body's Content-Length; nil if the status has no body
	vars      map[string]variable
	readBody  bool // the body template uses ${body}

	latency *Latency
	random  bool // latency or error injection needs random numbers
	seed    uint64
	// degraded replaces latency from degradeAt (unix ns, set by Start),
	// gradually over degradeOver when it is positive.
	degraded    *Latency
	degradeIn   time.Duration
	degradeOver time.Duration
	degradeAt   atomic.Int64
	degradeFor  time.Duration // back to latency at degradeAt + degradeFor
	// stallEvery and stallFor freeze the route at the end of every period
	// from stallFrom (unix ns, set by Start).
	stallEvery, stallFor time.Duration
	stallFrom            atomic.Int64

	errRatio  float64
	errStatus int
	errBody   []byte
	errLen    []string
	// errEvery fails every errEvery-th request; errFrom (unix ns, set by
	// Start) to errFrom + errFor bounds the failures when errWindow.
	errEvery  int64
	errWindow bool
	errAfter  time.Duration
	errFor    time.Duration
	errFrom   atomic.Int64

	requests atomic.Int64
	injected atomic.Int64
	canceled atomic.Int64
}

type header struct {
	key  string
	vals []string // shared by every response: cap == len so appends copy
}

// variable is how one ${name} of a body template is resolved per request.
type variable struct {
	kind varKind
	arg  string // the path wildcard, query key or canonical header key
	// absentUndefined makes an absent query or header value undefined, so
	// that a ${name:-fallback} applies; it is set when every use of the
	// name has a fallback. Otherwise an absent value expands to "".
	absentUndefined bool
}

type varKind uint8

const (
	varMethod varKind = iota
	varPath
	varBody
	varRoute
	varCount
	varPathValue
	varQuery
	varHeader
)

const varHelp = "path.NAME, query.NAME, header.NAME, method, path, body, route or count"

func (r *Route) pattern() string { return r.Method + " " + r.Path }

// label names r in errors: route "name", with its pattern when the name is
// not the pattern.
func (r *Route) label() string {
	if r.Name == r.pattern() {
		return fmt.Sprintf("route %q", r.Name)
	}
	return fmt.Sprintf("route %q (%s)", r.Name, r.pattern())
}

// compileRoute applies r's defaults and checks and compiles it.
func compileRoute(r *Route) (*route, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	r.Method = strings.ToUpper(r.Method)
	if r.Name == "" {
		r.Name = r.Method + " " + r.Path
	}
	if r.Status == 0 {
		r.Status = http.StatusOK
	}
	if r.Errors != nil && r.Errors.Status == 0 {
		r.Errors.Status = http.StatusInternalServerError
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("route %q: %s", r.Name, fmt.Sprintf(format, args...))
	}
	if !isToken(r.Method) {
		return nil, fail("method %q is not an HTTP method", r.Method)
	}
	if !strings.HasPrefix(r.Path, "/") {
		return nil, fail("path %q must start with /", r.Path)
	}
	if err := checkStatus(r.Status, r.Body); err != nil {
		return nil, fail("%v", err)
	}
	rt := &route{
		name:    r.Name,
		method:  r.Method,
		path:    r.Path,
		status:  r.Status,
		latency: r.Latency.clone(),
	}
	for k, v := range r.Headers {
		if !isToken(k) {
			return nil, fail("header %q is not a valid header name", k)
		}
		if !validHeaderValue(v) {
			return nil, fail("header %s: value %q has control characters", k, v)
		}
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if ck == "Content-Length" || ck == "Transfer-Encoding" {
			return nil, fail("header %s is set by the simulator", ck)
		}
		rt.headers = append(rt.headers, header{key: ck, vals: []string{v}[:1:1]})
	}
	if err := rt.compileBody(r.Body); err != nil {
		return nil, fail("body: %v", err)
	}
	if err := r.Latency.Validate(); err != nil {
		return nil, fail("%v", err)
	}
	if e := r.Errors; e != nil {
		if !(e.Ratio >= 0 && e.Ratio <= 1) {
			return nil, fail("errors: ratio %v is not between 0 and 1", e.Ratio)
		}
		if err := checkStatus(e.Status, e.Body); err != nil {
			return nil, fail("errors: %v", err)
		}
		if e.Every < 0 || e.Every > 0 && e.Ratio > 0 {
			return nil, fail("errors: give ratio or every (a positive count), not both")
		}
		if e.After < 0 || e.For < 0 {
			return nil, fail("errors: after and for are durations, not negative")
		}
		rt.errRatio, rt.errStatus, rt.errBody = e.Ratio, e.Status, []byte(e.Body)
		rt.errEvery, rt.errWindow = int64(e.Every), e.After > 0 || e.For > 0
		rt.errAfter, rt.errFor = time.Duration(e.After), time.Duration(e.For)
		rt.errLen = contentLength(e.Status, len(e.Body))
	}
	if d := r.Degrade; d != nil {
		if d.After <= 0 && d.Over <= 0 || d.Latency == nil {
			return nil, fail("degrade: give after or over (positive durations) and latency")
		}
		if err := d.Latency.Validate(); err != nil {
			return nil, fail("degrade: %v", err)
		}
		if d.For < 0 || d.For > 0 && d.For <= d.Over {
			return nil, fail("degrade: for must be longer than over")
		}
		rt.degraded, rt.degradeIn, rt.degradeOver = d.Latency.clone(), time.Duration(d.After), time.Duration(d.Over)
		rt.degradeFor = time.Duration(d.For)
	}
	if st := r.Stall; st != nil {
		if st.Every <= 0 || st.For <= 0 || st.For >= st.Every {
			return nil, fail("stall: give every and for, positive durations, for shorter than every")
		}
		rt.stallEvery, rt.stallFor = time.Duration(st.Every), time.Duration(st.For)
	}
	rt.random = rt.latency.random() || rt.degraded.random() || rt.errRatio > 0
	return rt, nil
}

func checkStatus(status int, body string) error {
	if status < 200 || status > 599 {
		return fmt.Errorf("status %d is not an HTTP status from 200 to 599", status)
	}
	if !bodyAllowed(status) && body != "" {
		return fmt.Errorf("status %d cannot have a body", status)
	}
	return nil
}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}

// contentLength is the shared Content-Length header value for a body of n
// bytes, or nil when the status has no body.
func contentLength(status, n int) []string {
	if !bodyAllowed(status) {
		return nil
	}
	return []string{strconv.Itoa(n)}[:1:1]
}

func (rt *route) compileBody(body string) error {
	t, err := tmpl.Parse(body)
	if err != nil {
		return err
	}
	rt.body = t
	if t.IsLiteral() {
		s, _ := t.Expand(nil) // no lookups; "$${" becomes "${"
		rt.static = []byte(s)
		rt.staticLen = contentLength(rt.status, len(rt.static))
		return nil
	}
	params := pathWildcards(rt.path)
	rt.vars = make(map[string]variable)
	allFallback := make(map[string]bool)
	for _, ref := range t.Refs() {
		name := ref.Name
		if seen, ok := allFallback[name]; ok {
			allFallback[name] = seen && ref.HasFallback
			continue
		}
		allFallback[name] = ref.HasFallback
		var v variable
		switch {
		case name == "method":
			v.kind = varMethod
		case name == "path":
			v.kind = varPath
		case name == "body":
			v.kind = varBody
			rt.readBody = true
		case name == "route":
			v.kind = varRoute
		case name == "count":
			v.kind = varCount
		case strings.HasPrefix(name, "path."):
			v.kind, v.arg = varPathValue, name[len("path."):]
			if !params[v.arg] {
				return fmt.Errorf("undefined variable ${%s}: path %q has no {%s} wildcard", name, rt.path, v.arg)
			}
		case strings.HasPrefix(name, "query."):
			v.kind, v.arg = varQuery, name[len("query."):]
		case strings.HasPrefix(name, "header."):
			v.kind, v.arg = varHeader, textproto.CanonicalMIMEHeaderKey(name[len("header."):])
		default:
			return fmt.Errorf("undefined variable ${%s} (use %s)", name, varHelp)
		}
		rt.vars[name] = v
	}
	for name, v := range rt.vars {
		if v.kind == varQuery || v.kind == varHeader {
			v.absentUndefined = allFallback[name]
			rt.vars[name] = v
		}
	}
	return nil
}

// pathWildcards returns the wildcard names of a ServeMux path pattern:
// {name} and {name...}, but not {$}.
func pathWildcards(path string) map[string]bool {
	names := make(map[string]bool)
	for {
		i := strings.IndexByte(path, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(path[i:], '}')
		if j < 0 {
			return names // an invalid pattern; ServeMux reports it
		}
		if name := strings.TrimSuffix(path[i+1:i+j], "..."); name != "$" {
			names[name] = true
		}
		path = path[i+j+1:]
	}
}

// checkPatterns registers every route's pattern, and the catch-all "/", on a
// trial ServeMux, turning its panics into errors: an invalid pattern, or two
// routes that match the same requests with neither more specific. It returns
// the index of the offending route.
func checkPatterns(routes []*Route) (int, error) {
	h := http.NotFoundHandler()
	mux := http.NewServeMux()
	for i, r := range routes {
		if register(mux, r.pattern(), h) == nil {
			continue
		}
		if err := register(http.NewServeMux(), r.pattern(), h); err != nil {
			return i, fmt.Errorf("route %q: path %q: %s", r.Name, r.Path, explain(err))
		}
		for _, prev := range routes[:i] {
			m := http.NewServeMux()
			_ = register(m, prev.pattern(), h)
			if err := register(m, r.pattern(), h); err != nil {
				return i, fmt.Errorf("%s conflicts with %s: %s", r.label(), prev.label(), explain(err))
			}
		}
		return i, fmt.Errorf("route %q: %s cannot be registered", r.Name, r.pattern())
	}
	if err := register(mux, "/", h); err != nil {
		return len(routes) - 1, fmt.Errorf("routes: %s", explain(err))
	}
	return 0, nil
}

// register is mux.Handle returning an error instead of panicking.
func register(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok {
				err = e
			} else {
				err = errors.New(fmt.Sprint(p))
			}
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// explain keeps the reason of a ServeMux registration error, dropping the
// "registered at file:line" preamble of conflicts.
func explain(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ":\n"); i >= 0 {
		msg = msg[i+2:]
	}
	return strings.ReplaceAll(msg, "\n", " ")
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// frozen is how long a request arriving now waits for the route's stall
// to end: 0 outside a stall.
func (rt *route) frozen() time.Duration {
	if rt.stallEvery == 0 {
		return 0
	}
	from := rt.stallFrom.Load()
	if from == 0 {
		return 0
	}
	phase := time.Duration(time.Now().UnixNano()-from) % rt.stallEvery
	if phase < rt.stallEvery-rt.stallFor {
		return 0
	}
	return rt.stallEvery - phase
}

// draw decides request n's delay and whether it fails. With randomness, the
// generator is seeded from (route seed, n), so the outcome of a route's n-th
// request depends only on the server seed, whatever the concurrency.
func (rt *route) draw(n int64) (time.Duration, bool) {
	lat, blend := rt.latency, 0.0
	if rt.degraded != nil {
		if at := rt.degradeAt.Load(); at != 0 {
			if now := time.Now().UnixNano(); now >= at && (rt.degradeFor == 0 || now < at+int64(rt.degradeFor)) {
				blend = 1
				if rt.degradeOver > 0 {
					blend = min(1, float64(now-at)/float64(rt.degradeOver))
				}
			}
		}
		if blend == 1 {
			lat = rt.degraded
		}
	}
	var r *rand.Rand
	if rt.random {
		g := getRNG(rt.seed, uint64(n))
		defer putRNG(g)
		r = g.r
	}
	d := lat.Sample(r)
	if blend > 0 && blend < 1 { // on the way: between the two
		d += time.Duration(blend * float64(rt.degraded.Sample(r)-d))
	}
	fail := rt.errRatio > 0 && r.Float64() < rt.errRatio || rt.errEvery > 0 && n%rt.errEvery == 0
	if fail && rt.errWindow {
		fail = rt.inErrWindow(time.Now().UnixNano())
	}
	return d, fail
}

// inErrWindow tells whether now (unix ns) is within the route's window of
// failures: from errFrom for errFor (for ever when errFor is 0); never
// before the server starts.
func (rt *route) inErrWindow(now int64) bool {
	from := rt.errFrom.Load()
	return from != 0 && now >= from && (rt.errFor == 0 || now < from+int64(rt.errFor))
}
