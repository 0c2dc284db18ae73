package http

import (
	"bytes"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/tmpl"
)

// Vars is what a request reads its placeholders from and writes extracted
// values to: a virtual user's variables.
type Vars interface {
	tmpl.Lookup
	Set(name, value string)
}

// Request is a plan step compiled for sending.
type Request struct {
	Name    string
	method  []byte
	url     *tmpl.Template
	headers []header
	query   []header
	body    *tmpl.Template
	// form is the fields of a form: body (plan.Step.Form), encoded as
	// sent (appendBody); nil for none.
	form        []header
	contentType string
	timeout     time.Duration
	extract     Extracts
	status      []int // accepted; nil means 200-299
	contains    [][]byte
	jsonChecks  JSONChecks
	that        Assertions
	// reads is what beside its status, headers and body the step reads of
	// a response (readsHeaders, readsURL).
	reads int
	// judged is false when nothing but the status judges a response.
	judged bool
	// bodyLimit is the step's own body_limit (0: the client's).
	bodyLimit int64
	// bodyUse is what reads the body (readsBody): OK for nothing.
	bodyUse  metrics.ErrKind
	bodyVerb string
	// literal is true when no part of the request has a placeholder: the
	// event loop builds its bytes once per connection.
	literal bool
	// joinBase and joinRel are the target (with a / after it) and the
	// step's URL when that begins with a placeholder, whose value may
	// begin with a / of its own (appendRawURL).
	joinBase, joinRel *tmpl.Template
	// keepBody and keepHeaders are what of the response the flow's
	// expressions read (Keep).
	keepBody    bool
	keepHeaders []string
	// redirects is how many redirects the request follows.
	redirects int
	// auth authenticates the request; nil: none.
	auth *auth
	// wire is the URL as sent, where it has no placeholders (literalURL).
	wire []byte
	// wireAuth is the basic auth of wire's user:password@, taken out of
	// it (nil: none).
	wireAuth *auth
	// urlAuth: the credentials of the URL's user:password@ go as basic
	// auth. They do unless the step says otherwise: its auth (or the
	// plan's), auth: none, or an Authorization header of its own (which
	// wins, as curl's -H and Go's client, k6's, let it).
	urlAuth bool
	// ownAuthz: the step or the plan has an Authorization header.
	ownAuthz bool
}

type header struct {
	name  string
	value *tmpl.Template
}

// CompileStep builds the request of a step of plan p: Compile with the
// plan's target, headers, timeout, redirects and auth.
func CompileStep(p *plan.Plan, st *plan.Step) (*Request, error) {
	r, err := Compile(p.Target, p.Headers, st, p.HTTP.Timeout.D)
	if err != nil {
		return nil, err
	}
	r.redirects = p.HTTP.RedirectsFor(st)
	r.setAuth(p.HTTP.AuthFor(st))
	return r, nil
}

// Compile builds a request from a plan step. target is the plan's base URL
// (nil when every URL is absolute); defaults are the plan's headers, which a
// step's own headers override. The request follows the step's redirects
// (default plan.DefaultRedirects) and authenticates as its auth says.
func Compile(target *plan.Text, defaults []plan.Pair, st *plan.Step, timeout time.Duration) (*Request, error) {
	r := &Request{Name: st.Name, method: []byte(st.Method), timeout: timeout, bodyLimit: st.BodyLimit.N,
		redirects: plan.HTTPOptions{}.RedirectsFor(st)}
	if st.Timeout.D > 0 {
		r.timeout = st.Timeout.D
	}
	u := st.URL.String()
	if target != nil && plan.SchemeLen(u) == 0 { // relative, whatever "://" its query holds
		base := target.String()
		switch {
		case strings.HasSuffix(base, "/") && strings.HasPrefix(u, "/"):
			base = strings.TrimSuffix(base, "/")
		case !strings.HasSuffix(base, "/") && !strings.HasPrefix(u, "/") && u != "" && !strings.HasPrefix(u, "?"):
			base += "/"
		}
		if startsWithValue(u) {
			// A URL that starts with a value is absolute or relative as
			// the value says, and a path that is a value has its own /
			// (/users from a variable): decided per request.
			var err error
			if r.joinBase, err = tmpl.Parse(base); err != nil {
				return nil, err
			}
			if r.joinRel, err = tmpl.Parse(u); err != nil {
				return nil, err
			}
		}
		u = base + u
	}
	var err error
	if r.url, err = tmpl.Parse(u); err != nil {
		return nil, err
	}
	own := map[string]bool{}
	for _, h := range st.Headers {
		own[strings.ToLower(h.Name)] = true
		r.headers = append(r.headers, header{h.Name, h.Value.T})
	}
	for _, h := range defaults {
		if !own[strings.ToLower(h.Name)] {
			r.headers = append(r.headers, header{h.Name, h.Value.T})
		}
	}
	for _, h := range r.headers {
		r.ownAuthz = r.ownAuthz || strings.EqualFold(h.name, "Authorization")
	}
	for _, q := range st.Query {
		r.query = append(r.query, header{q.Name, q.Value.T})
	}
	switch {
	case st.JSON != nil:
		r.body = st.JSON.Text.T
		if !own["content-type"] {
			r.contentType = "application/json"
		}
	case st.Body != nil:
		r.body = st.Body.T
	case st.Form != nil:
		r.form = make([]header, len(st.Form))
		for i, f := range st.Form {
			r.form[i] = header{f.Name, f.Value.T}
		}
		if !own["content-type"] {
			r.contentType = "application/x-www-form-urlencoded"
		}
	}
	r.literal = r.url.IsLiteral() && (r.body == nil || r.body.IsLiteral())
	for _, h := range append(append(append([]header(nil), r.headers...), r.query...), r.form...) {
		r.literal = r.literal && h.value.IsLiteral()
	}
	if r.extract, err = CompileExtracts(st.Name, st.Extract); err != nil {
		return nil, err
	}
	if c := st.Check; c != nil {
		r.status = c.Status
		for _, s := range c.BodyContains {
			r.contains = append(r.contains, []byte(s))
		}
		if r.jsonChecks, err = CompileJSONChecks(c.JSON); err != nil {
			return nil, err
		}
		if r.that, err = CompileAssertions(c.That); err != nil {
			return nil, err
		}
	}
	r.bodyUse, r.bodyVerb = r.readsBody()
	xr, _ := r.extract.reads()
	ar, _ := r.that.reads()
	r.reads = xr | ar
	r.judged = len(r.extract) > 0 || len(r.contains) > 0 || len(r.jsonChecks) > 0 || len(r.that) > 0
	r.wire, r.wireAuth = r.literalURL()
	r.setAuth(st.Auth)
	return r, nil
}

// literalURL is the URL as it goes on the wire (appendURL) of a request
// whose URL and query parameters have no placeholders, made once, not at
// every request, and the basic auth of its user:password@; nil for any
// other (or one appendURL refuses).
func (r *Request) literalURL() ([]byte, *auth) {
	for _, t := range []*tmpl.Template{r.url, r.joinBase, r.joinRel} {
		if t != nil && !t.IsLiteral() {
			return nil, nil
		}
	}
	for _, q := range r.query {
		if !q.value.IsLiteral() {
			return nil, nil
		}
	}
	u, userinfo, err := r.appendURL(nil, nil)
	if err != nil {
		return nil, nil
	}
	if userinfo == "" {
		return u, nil
	}
	basic, err := userinfoAuthz(userinfo)
	if err != nil {
		return nil, nil // refused at each request
	}
	return u, &auth{basic: basic}
}

// setAuth sets the request's authentication, a (the step's, or the
// plan's for the step), or else the credentials of its URL (urlAuth): a
// basic one without placeholders keeps the request literal.
func (r *Request) setAuth(a *plan.Auth) {
	r.auth = compileAuth(a)
	r.urlAuth = a == nil && !r.ownAuthz
	if r.urlAuth && r.wireAuth != nil {
		r.auth = r.wireAuth
	}
	r.literal = r.literal && (r.auth == nil || r.auth.basic != "")
}

// Redirects is how many redirects the request follows: each one followed
// is a Hop of its result.
func (r *Request) Redirects() int { return r.redirects }

// Challenged reports whether the request answers a server's digest
// challenge: each one answered is a Hop of its result.
func (r *Request) Challenged() bool { return r.auth != nil && r.auth.digest }

// Result is the outcome of one request.
type Result struct {
	// Start is when the request was sent (zero if it never was).
	Start   time.Time
	Status  int
	Bytes   int
	Latency time.Duration
	Err     metrics.ErrKind
	// Detail says what went wrong, for error samples; empty on success.
	Detail string
	// Dump is the request and its response, for Options.Failures: nil
	// unless the request failed while the log had room.
	Dump *Dump
	// Server is the time the server reported it spent (Options.ServerTime),
	// when HasServer.
	Server    time.Duration
	HasServer bool
	// Processing is what the extractions and checks of a step that has
	// some took on its response, after its last byte (Latency ends
	// there); zero for a step without.
	Processing time.Duration
	// Hops are the responses the request followed to its final one (a
	// redirect, a digest challenge), in order; Start and Latency span them
	// all, Status and Bytes are the final response's. Valid until the VU's
	// next request.
	Hops []Hop
}

// Scratch is a VU's reusable buffers for building URLs and bodies and for
// reading response bodies.
type Scratch struct {
	buf, body []byte
	last      *kept // what the last response kept for the flow (Keep); nil until one keeps something
	// What a VU keeps from one request to the next (cookies.go,
	// auth.go): its cookies, nil until a response sets one; the digest
	// challenges of its origins.
	jar        *jar
	challenges []*challenge
	// The exchange of the request in flight (session.go).
	ex   exchange
	hops []Hop
	// What a VU on goroutines alone uses, made as it first does: an event
	// loop's VUs never do (48 bytes a VU fewer on the loop).
	gor *goScratch
}

// goScratch is what a VU on goroutines uses beside its Scratch: what the
// bytes of a body beyond those kept are read into first (readBody), and
// what the response in flight is judged on, kept here so that judging
// allocates nothing (a view or a closure passed down escapes): its view,
// its response and a header lookup, each made once. (An event loop has one
// view for all its VUs.)
type goScratch struct {
	peek     []byte
	view     view
	fastResp *fasthttp.Response
	fastHdr  headerFunc
}

// goroutine is s's goScratch, made at its first call.
func (s *Scratch) goroutine() *goScratch {
	if s.gor == nil {
		s.gor = &goScratch{}
	}
	return s.gor
}

// fastHeader is the header lookup of the fasthttp response g.fastResp.
func (g *goScratch) fastHeader(resp *fasthttp.Response) headerFunc {
	g.fastResp = resp
	if g.fastHdr == nil {
		g.fastHdr = func(name string) ([]byte, bool) {
			v := g.fastResp.Header.Peek(name)
			return v, v != nil
		}
	}
	return g.fastHdr
}

// Do sends the request with the VU's variables and judges the response,
// following its redirects and digest challenges.
func (c *Client) Do(r *Request, vars Vars, s *Scratch) Result {
	if c.std != nil {
		return c.doStd(r, vars, s)
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	s.begin()
	var start, deadline time.Time
	for {
		if err := c.build(r, vars, s, req); err != nil {
			return s.failed(start, 0, 0, notSentKind(err), err.Error())
		}
		sent := time.Now()
		if start.IsZero() {
			start, deadline = sent, sent.Add(r.timeout)
		}
		if err := c.c.DoDeadline(req, resp, deadline); err != nil {
			return c.fastFailed(s.failed(start, 0, 0, Classify(err), describe(err, resetSeen(resp.LocalAddr()))), req, nil, nil)
		}
		status := resp.StatusCode()
		again, kind, detail := c.follow(r, s, s.buf, status, (*fastHeaders)(&resp.Header))
		limit, keep := c.bodyLimit(r)
		switch {
		case again:
			keep = 0
		case kind != metrics.OK:
			keep = c.dumpKeep(0, limit)
		}
		// Body would read the whole stream into memory: the stream first.
		var body []byte
		var n int64
		if stream := resp.BodyStream(); stream == nil { // HEAD, 204, 304
			body = resp.Body()
			n = int64(len(body))
		} else {
			var err error
			body, n, err = readBody(stream, keep, s)
			if err != nil {
				if cl, ok := stream.(fasthttp.ReadCloserWithError); ok {
					cl.CloseWithError(err) //nolint:errcheck // the read's error is the one to report
				}
				return c.fastFailed(s.failed(start, status, n, bodyErrKind(err, !time.Now().Before(deadline)), bodyDetail(err, resp.LocalAddr())), req, resp, body)
			}
			resp.CloseBodyStream() //nolint:errcheck // read to its end: the connection goes back to the pool
		}
		if again {
			s.hop(Hop{Start: sent, Latency: time.Since(sent), Status: status, Bytes: int(n), Auth: status == 401})
			req.Reset()
			resp.Reset()
			continue
		}
		if kind != metrics.OK {
			return c.fastFailed(s.failed(start, status, n, kind, detail), req, resp, body)
		}
		res := Result{Start: start, Status: status, Bytes: int(n), Latency: time.Since(start)}
		g := s.goroutine()
		header := g.fastHeader(resp)
		v := &g.view
		*v = view{body: body}
		if r.reads&readsHeaders != 0 {
			v.headers = resp.Header.Header()
		}
		if r.reads&readsURL != 0 {
			v.url = req.URI().FullURI()
		}
		c.settle(r, s, &res, v, header, vars, limit)
		g.fastResp, g.view = nil, view{} // released below: nothing of it is kept
		if res.Err != metrics.OK {
			res = c.fastFailed(res, req, resp, body)
		}
		return res
	}
}

// fastFailed is res with its request and response (resp, its body's
// first bytes body; nil if none came) for the failure log (Client.dump).
func (c *Client) fastFailed(res Result, req *fasthttp.Request, resp *fasthttp.Response, body []byte) Result {
	if !c.opts.Failures.open() {
		return res
	}
	var head []byte
	if resp != nil {
		head = resp.Header.Header()
	}
	c.dump(&res, []byte(req.String()), head, body)
	return res
}

// failed is the result of an exchange that failed: nothing was sent
// when start is zero.
func (s *Scratch) failed(start time.Time, status int, n int64, kind metrics.ErrKind, detail string) Result {
	res := Result{Start: start, Status: status, Bytes: int(n), Err: kind, Detail: detail}
	if !start.IsZero() {
		res.Latency = time.Since(start)
	}
	if len(s.hops) > 0 {
		res.Hops = s.hops
	}
	return res
}

// fastHeaders are a response's headers as fasthttp keeps them.
type fastHeaders fasthttp.ResponseHeader

func (h *fastHeaders) setsCookies() bool {
	for range (*fasthttp.ResponseHeader)(h).Cookies() {
		return true
	}
	return false
}

func (h *fastHeaders) first(name string) ([]byte, bool) {
	for k, v := range (*fasthttp.ResponseHeader)(h).All() {
		if equalFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

func (h *fastHeaders) values(name string) [][]byte {
	var out [][]byte
	for k, v := range (*fasthttp.ResponseHeader)(h).All() {
		if equalFold(k, name) {
			out = append(out, v)
		}
	}
	return out
}

// bodyDetail says what an error reading a body from the connection of
// local address local was, in the event loop's words (describe).
func bodyDetail(err error, local net.Addr) string {
	if d := describe(err, resetSeen(local)); d != err.Error() {
		return d
	}
	return "read: " + err.Error()
}

// bodyErrKind classifies an error reading a body: a timeout, a reset, or
// else a read error (a body cut short or malformed). A read that fails once
// the request's deadline has passed is its timeout, however fasthttp's
// chunked reader wrapped the connection's deadline error.
func bodyErrKind(err error, pastDeadline bool) metrics.ErrKind {
	switch k := Classify(err); {
	case k == metrics.Timeout, k == metrics.ConnReset:
		return k
	case pastDeadline:
		return metrics.Timeout
	}
	return metrics.Read
}

// serverTime reads the server's own time from a response, if asked to.
func (c *Client) serverTime(res *Result, header func(string) ([]byte, bool)) {
	if st := c.opts.ServerTime; st != nil {
		if v, ok := header(st.Header); ok {
			res.Server, res.HasServer = st.parse(v)
		}
	}
}

// build fills a fasthttp request with the exchange's next request; its
// URL stays in s.buf.
func (c *Client) build(r *Request, vars Vars, s *Scratch, req *fasthttp.Request) error {
	b, err := r.appendNextURL(s.buf[:0], vars, s)
	s.buf = b
	if err != nil {
		return err
	}
	req.SetRequestURIBytes(b)
	method := r.methodOf(s)
	req.Header.SetMethodBytes(method)
	sh, err := r.sessionHeaders(s, vars, method, b)
	if err != nil {
		return err
	}
	if err := r.eachHeader(vars, &sh, func(name, value string) {
		switch {
		case strings.EqualFold(name, "Host"):
			req.UseHostHeader = true // a virtual host other than the URL's
		case strings.EqualFold(name, "Cookie"):
			setCookies(req, value)
			return
		}
		req.Header.Set(name, value)
	}); err != nil {
		return err
	}
	if r.sendsBody(s) {
		if r.contentType != "" {
			req.Header.SetContentType(r.contentType)
		}
		if s.body, err = r.appendBody(s.body[:0], vars); err != nil {
			return err
		}
		req.SetBody(s.body)
	}
	if !c.keepAlive {
		req.SetConnectionClose()
	}
	return nil
}

// setCookies sets a Cookie header's cookies one by one: fasthttp would
// parse a whole header, taking the quotes off a quoted value and dropping
// a value it finds invalid, where each is sent as it is.
func setCookies(req *fasthttp.Request, header string) {
	for _, c := range strings.Split(header, ";") {
		if c = strings.TrimSpace(c); c != "" {
			name, value, _ := strings.Cut(c, "=")
			req.Header.SetCookie(name, value)
		}
	}
}

// appendURL appends the expanded URL with its query parameters to b,
// encoded for the wire (wireURL), without its user:password@, which it
// returns (raw, "": none): a URL that would not be valid HTTP is an
// invalidRequest error.
func (r *Request) appendURL(b []byte, vars Vars) ([]byte, string, error) {
	if r.wire != nil {
		return append(b, r.wire...), "", nil
	}
	start := len(b)
	b, err := r.appendRawURL(b, vars)
	if err != nil {
		return b, "", err
	}
	u, encoded, userinfo, err := wireURL(b[start:])
	if err != nil || !encoded {
		return b, userinfo, err
	}
	return append(b[:start], u...), userinfo, nil
}

// appendRawURL appends the expanded URL with its query parameters to b, as
// the values made it.
func (r *Request) appendRawURL(b []byte, vars Vars) ([]byte, error) {
	start := len(b)
	var err error
	if r.joinRel != nil {
		b, err = r.joinBase.AppendURL(b, vars)
		if err == nil {
			rel := len(b)
			b, err = r.joinRel.AppendURL(b, vars)
			switch {
			case err != nil:
			case plan.SchemeLen(b[rel:]) > 0: // an absolute URL: the target's is not used
				b = append(b[:start], b[rel:]...)
			case len(b) > rel && b[rel] == '/' && b[rel-1] == '/': // the value has its own /
				b = append(b[:rel-1], b[rel:]...)
			}
		}
	} else {
		b, err = r.url.AppendURL(b, vars)
	}
	if err != nil {
		return b, err
	}
	if len(r.query) == 0 {
		return b, nil
	}
	if i := bytes.IndexByte(b[start:], '#'); i >= 0 {
		b = b[:start+i] // the fragment is not sent; the parameters go before it
	}
	sep := byte('?')
	if bytes.IndexByte(b[start:], '?') >= 0 {
		sep = '&'
	}
	for _, q := range r.query {
		v, err := q.value.Expand(vars)
		if err != nil {
			return b, err
		}
		b = append(b, sep)
		b = append(b, url.QueryEscape(q.name)...)
		b = append(b, '=')
		b = append(b, url.QueryEscape(v)...)
		sep = '&'
	}
	return b, nil
}

// eachHeader expands the request's headers, with the session's (the
// jar's cookies, merged with a Cookie header of the step's; auth's
// Authorization) and a hop's rules (sendHeaders.skips); one that would not
// be valid HTTP is an invalidRequest error (the request, with the headers
// set before it, is not sent).
func (r *Request) eachHeader(vars Vars, sh *sendHeaders, set func(name, value string)) error {
	cookie, filter := sh.cookie, sh.ex != nil || sh.authz != ""
	for _, h := range r.headers {
		if filter && sh.skips(r, h.name) {
			continue
		}
		v, err := h.value.Expand(vars)
		if err != nil {
			return err
		}
		if err := CheckHeader(h.name, v); err != nil {
			return err
		}
		if cookie != "" && strings.EqualFold(h.name, "Cookie") {
			v += "; " + cookie
			cookie = ""
		}
		set(h.name, v)
	}
	if cookie != "" {
		set("Cookie", cookie)
	}
	if sh.authz != "" {
		set("Authorization", sh.authz)
	}
	return nil
}

// judge runs the extractions and the checks on a response whose body has
// res.Bytes bytes, of which v.body holds the first (all unless the body
// was over the limit): the status first, then the extractions, then
// body_contains, json and that, which may read what was extracted. The
// first to fail is the result's error.
func (r *Request) judge(res *Result, v *view, header headerFunc, vars Vars, limit int64) {
	code := res.Status
	v.status, v.latency, v.size = code, res.Latency, res.Bytes
	if !r.accepts(code) {
		res.Err = metrics.StatusKind(code)
		res.Detail = "status " + itoa(code)
		// The extractions run on any response, as JMeter's extractors do
		// (a default taken from an error's body, a value its headers
		// carry); the step's error is its status's all the same.
		if len(r.extract) > 0 && len(v.body) == res.Bytes {
			r.extract.apply(v, header, vars)
		}
		return
	}
	if !r.judged {
		return
	}
	if len(v.body) < res.Bytes && r.bodyUse != metrics.OK {
		res.Err = r.bodyUse
		res.Detail = "body of " + strconv.Itoa(res.Bytes) + " bytes exceeds body_limit " + plan.FormatSize(limit) + "; raise body_limit to " + r.bodyVerb + " it"
		return
	}
	if res.Err, res.Detail = r.extract.apply(v, header, vars); res.Err != metrics.OK {
		return
	}
	for _, want := range r.contains {
		if !bytes.Contains(v.body, want) {
			res.Err, res.Detail = metrics.CheckFailed, "body does not contain "+string(want)
			return
		}
	}
	if res.Err, res.Detail = r.jsonChecks.apply(v, vars); res.Err != metrics.OK {
		return
	}
	res.Err, res.Detail = r.that.apply(v, header, vars)
}

func (r *Request) accepts(code int) bool {
	if r.status == nil {
		// Redirects are not followed, so a 3xx is not a success unless the
		// step accepts it (check: {status: [302]}).
		return code >= 200 && code < 300
	}
	for _, s := range r.status {
		if s == code {
			return true
		}
	}
	return false
}

func itoa(n int) string {
	var b [8]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

// Scheme is the scheme of the request's URL as far as a stage's variables
// tell it ("http", "https", ...), or "" when the URL's start comes from
// values only a VU has (data rows, extractions).
func (r *Request) Scheme(vars map[string]string) string {
	scheme, _ := r.stageOrigin(vars)
	return scheme
}

// Address is the host:port the request's URL dials, as far as a stage's
// variables tell it, or "" when its scheme or host comes from values only
// a VU has.
func (r *Request) Address(vars map[string]string) string {
	return address(r.stageOrigin(vars))
}

// stageOrigin is the origin of the request's URL (stageOrigin): the
// value a URL starts with says whether the target's is used.
func (r *Request) stageOrigin(vars map[string]string) (scheme, host string) {
	if r.joinRel != nil {
		rel := stageExpand(r.joinRel, vars)
		if plan.SchemeLen(rel) > 0 {
			return originOf(rel)
		}
		start := rel
		if i := strings.IndexAny(rel, "/?#"); i >= 0 {
			start = rel[:i]
		}
		if strings.ContainsRune(start, 0) {
			return "", "" // a VU's value: absolute or relative
		}
	}
	return originOf(stageExpand(r.url, vars))
}

// Address is the host:port that a URL template (http, https, ws, wss)
// dials, as far as a stage's variables tell it: the port 80, or 443 for
// https and wss, when the URL gives none; "" when its scheme or host
// comes from values only a VU has (data rows, extractions).
func Address(t *tmpl.Template, vars map[string]string) string {
	return address(originOf(stageExpand(t, vars)))
}

func address(scheme, host string) string {
	if scheme == "" || host == "" || strings.ContainsRune(host, 0) {
		return ""
	}
	if _, h, ok := strings.Cut(host, "@"); ok { // user:password@
		host = h
	}
	port := "80"
	if scheme == "https" || scheme == "wss" {
		port = "443"
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		return net.JoinHostPort(h, p)
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// stageExpand is a URL template expanded with a stage's variables, a NUL
// for each value only a VU has.
func stageExpand(t *tmpl.Template, vars map[string]string) string {
	u, err := t.Expand(tmpl.LookupFunc(func(name string) (string, bool) {
		if v, ok := vars[name]; ok {
			return v, true
		}
		return "\x00", true // a VU's value
	}))
	if err != nil {
		return ""
	}
	return u
}

// originOf is the scheme (lower case) and host[:port] of a URL expanded
// by stageExpand: scheme is "" when the URL's start comes from a VU's
// values, and host holds a NUL where it does.
func originOf(u string) (scheme, host string) {
	n := plan.SchemeLen(u)
	if n == 0 || !strings.HasPrefix(u[n:], "//") {
		return "", ""
	}
	rest := u[n+2:]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(u[:n-1]), rest
}

// startsWithValue reports whether a URL's scheme, if it has one, holds a
// placeholder (${base}/x, ${proto}://host, http${s}://host): it is
// absolute or relative as the values say.
func startsWithValue(u string) bool {
	i := 0
	for i < len(u) && ('a' <= u[i]|0x20 && u[i]|0x20 <= 'z' || '0' <= u[i] && u[i] <= '9' || strings.IndexByte("+-.", u[i]) >= 0) {
		i++
	}
	return strings.HasPrefix(u[i:], "${")
}
