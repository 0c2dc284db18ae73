package http

import (
	"bytes"
	"strings"
	"time"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/tmpl"
)

// A step's request may take more than one request to the server: a
// redirect followed, a digest challenge answered. The three senders (the
// event loop's Exchange, the pooled client's Do, HTTP/2's doStd) send the
// step's request, then ask follow what comes after each response; it keeps
// the response's cookies, and says whether to send again and what
// (Scratch.ex). The step's result is the final response's, timed from the
// first request sent; each response followed is a Hop of the result, which
// the engine records under an operation of its own, so that perflab counts
// every request the server counted.

// Hop is a response of a step's exchange that another request followed.
type Hop struct {
	// Start is when its request was sent; Latency runs to its last byte.
	Start   time.Time
	Latency time.Duration
	Status  int
	Bytes   int
	// Auth is true for a digest challenge answered (a 401), false for a
	// redirect followed.
	Auth bool
}

// exchange is the progress of a step's exchange: what its next request is
// when it is not the step's own, and what was followed so far.
type exchange struct {
	// url is the next request's URL as it goes on the wire; nil: the
	// step's own. urlBuf keeps its array from one exchange to the next.
	url, urlBuf []byte
	method      []byte // nil: the step's
	noBody      bool   // a 301, 302 or 303 dropped the step's body
	// keepHost: every Location was relative, so the step's own Host
	// header goes on (as Go's client keeps it).
	keepHost bool
	// otherHost: the redirect leads to a host other than the step's, or
	// its subdomains: the step's Authorization and Cookie headers and its
	// auth do not go there (the jar's cookies go where they match).
	otherHost bool
	answered  bool // a digest challenge answered for the URL of the next request
	// redirects followed: 32 bits, beside the flags (8 bytes a VU; a
	// redirect is a request, and no run makes 2^31 of them for one step)
	redirects int32
	origHost  string // the host of the step's URL, once a redirect is followed
	sent      time.Time
	// urlAuthz is the Authorization of the credentials in the step's URL
	// as its values made it (user:password@), for the step's host.
	urlAuthz string
}

// begin starts the exchange of a step's request.
func (s *Scratch) begin() {
	s.ex = exchange{urlBuf: s.ex.urlBuf}
	s.hops = s.hops[:0]
}

// hop records a response that the exchange followed.
func (s *Scratch) hop(h Hop) { s.hops = append(s.hops, h) }

// methodOf is the method of the exchange's next request.
func (r *Request) methodOf(s *Scratch) []byte {
	if s.ex.method != nil {
		return s.ex.method
	}
	return r.method
}

// sendsBody reports whether the exchange's next request has the step's body.
func (r *Request) sendsBody(s *Scratch) bool { return r.hasBody() && !s.ex.noBody }

// hasBody reports whether the step has a body: body:, json: or form:.
func (r *Request) hasBody() bool { return r.body != nil || r.form != nil }

// appendBody appends the request's body to dst: its template filled in,
// or its form's fields, each name and value encoded as a form's
// (tmpl.AppendFormEscape) and joined with & (every sender's, on both
// engines).
func (r *Request) appendBody(dst []byte, vars Vars) ([]byte, error) {
	if r.form == nil {
		return r.body.AppendTo(dst, vars)
	}
	var err error
	for i, f := range r.form {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = tmpl.AppendFormEscape(dst, f.name)
		dst = append(dst, '=')
		if dst, err = f.value.AppendForm(dst, vars); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendNextURL appends the URL of the exchange's next request, as it goes
// on the wire.
func (r *Request) appendNextURL(b []byte, vars Vars, s *Scratch) ([]byte, error) {
	if s.ex.url != nil {
		return s.ex.appendURL(b)
	}
	b, userinfo, err := r.appendURL(b, vars)
	if userinfo != "" && err == nil && r.urlAuth {
		s.ex.urlAuthz, err = userinfoAuthz(userinfo)
	}
	return b, err
}

func (ex *exchange) appendURL(b []byte) ([]byte, error) { return append(b, ex.url...), nil }

// sendHeaders is what a request carries beside the step's headers: the
// jar's cookies and the Authorization of the step's auth; ex is the
// exchange's state when the request is not the step's own (a hop).
type sendHeaders struct {
	cookie, authz string
	ex            *exchange
}

// sessionHeaders are the session's headers of the exchange's next request,
// with method to URL u: nothing is looked up for a step without auth by a
// VU without cookies.
func (r *Request) sessionHeaders(s *Scratch, vars Vars, method, u []byte) (sendHeaders, error) {
	if s.jar == nil && r.auth == nil && s.ex.url == nil && s.ex.urlAuthz == "" {
		return sendHeaders{}, nil
	}
	return r.lookUpSession(s, vars, method, u)
}

func (r *Request) lookUpSession(s *Scratch, vars Vars, method, u []byte) (sendHeaders, error) {
	var sh sendHeaders
	if s.ex.url != nil {
		sh.ex = &s.ex
	}
	sh.cookie = s.cookieHeader(u)
	if r.auth != nil && !s.ex.otherHost {
		origin, _, uri, err := splitURL(u)
		if err != nil {
			return sh, err
		}
		if sh.authz, err = r.auth.header(s, vars, method, origin, uri); err != nil {
			return sh, err
		}
		if sh.authz != r.auth.basic { // made of values a VU has
			if err := CheckHeader("Authorization", sh.authz); err != nil {
				return sh, err
			}
		}
	} else if !s.ex.otherHost {
		sh.authz = s.ex.urlAuthz
	}
	return sh, nil
}

// skips reports whether a header of the step's is not sent: the
// Authorization that auth writes instead, and on a hop the step's Host
// (unless every Location was relative), its Authorization and Cookie on
// another host, its Content-Type once its body is dropped.
func (sh *sendHeaders) skips(r *Request, name string) bool {
	if sh.authz != "" && strings.EqualFold(name, "Authorization") {
		return true
	}
	if ex := sh.ex; ex != nil {
		switch {
		case !ex.keepHost && strings.EqualFold(name, "Host"):
			return true
		case ex.otherHost && (strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Cookie")):
			return true
		case ex.noBody && r.hasBody() && strings.EqualFold(name, "Content-Type"):
			return true
		}
	}
	return false
}

// respHeaders are a response's headers, as each sender keeps them.
type respHeaders interface {
	// setsCookies reports whether the response has a Set-Cookie header.
	setsCookies() bool
	// first is the first value of a header; values are all its values.
	first(name string) ([]byte, bool)
	values(name string) [][]byte
}

// follow decides what comes after a response, with status and headers h,
// to the exchange's request to URL u. Its cookies go to the VU's jar. A
// digest challenge is answered, a redirect followed: again is true, and
// s.ex describes the request to send. Else the response is the step's;
// a redirect that cannot be followed (no Location, one that is not http or
// https) is its failure, with kind and detail.
func (c *Client) follow(r *Request, s *Scratch, u []byte, status int, h respHeaders) (again bool, kind metrics.ErrKind, detail string) {
	if h.setsCookies() && c.cookiesOn() {
		c.storeCookies(s, u, h.values("Set-Cookie"))
	}
	switch {
	case status == 401 && r.auth != nil && r.auth.digest && !s.ex.answered && !s.ex.otherHost:
		ch, why := parseDigest(h.values("WWW-Authenticate"))
		if ch == nil {
			return false, metrics.StatusKind(status), "status 401: " + why
		}
		origin, _, _, _ := splitURL(u)
		s.setChallenge(string(origin), ch)
		s.ex.answered = true
		return true, metrics.OK, ""
	case isRedirect(status) && int(s.ex.redirects) < r.redirects:
		code := itoa(status)
		loc, ok := h.first("Location")
		if !ok || len(bytes.TrimSpace(loc)) == 0 {
			return false, metrics.StatusKind(status), "status " + code + " redirects without a Location header: not followed"
		}
		next, host, relative, err := resolveLocation(u, loc)
		if err != nil {
			return false, metrics.StatusKind(status), "status " + code + " redirects to " + err.Error() + ": not followed"
		}
		if s.ex.redirects == 0 {
			s.ex.origHost = hostOf(u)
			s.ex.keepHost = true
		}
		s.ex.url = append(s.ex.urlBuf[:0], next...)
		s.ex.urlBuf = s.ex.url
		if status <= 303 && !bytes.Equal(r.methodOf(s), []byte("HEAD")) {
			s.ex.method, s.ex.noBody = []byte("GET"), true
		}
		s.ex.keepHost = s.ex.keepHost && relative
		s.ex.otherHost = !sameDomain(host, s.ex.origHost)
		s.ex.redirects++
		s.ex.answered = false
		return true, metrics.OK, ""
	}
	return false, metrics.OK, ""
}

// settle judges the exchange's final response, as judge does, and hands
// the result the hops before it (valid until the VU's next request).
func (c *Client) settle(r *Request, s *Scratch, res *Result, v *view, header func(string) ([]byte, bool), vars Vars, limit int64) {
	c.serverTime(res, header)
	if r.judged {
		v.parseLimit = c.opts.ParseLimit
		r.judge(res, v, header, vars, limit)
		v.release()
		// from the response's end, which Latency read: one clock read
		res.Processing = time.Since(res.Start) - res.Latency
	} else {
		r.judge(res, v, header, vars, limit)
	}
	r.keepLast(s, header, v.body)
	if len(s.hops) > 0 {
		res.Hops = s.hops
	}
	if res.Err == metrics.HTTP3xx && isRedirect(res.Status) && r.redirects > 0 && int(s.ex.redirects) == r.redirects {
		res.Detail += ", the last of " + itoa(r.redirects) + " redirects followed (redirects)"
	}
}

// challenge is the VU's digest challenge for an origin, or nil.
func (s *Scratch) challenge(origin []byte) *challenge {
	for _, ch := range s.challenges {
		if strings.EqualFold(ch.origin, string(origin)) {
			return ch
		}
	}
	return nil
}

// setChallenge keeps a digest challenge for an origin, in place of the one
// it had.
func (s *Scratch) setChallenge(origin string, ch *challenge) {
	ch.origin = origin
	for i, old := range s.challenges {
		if strings.EqualFold(old.origin, origin) {
			s.challenges[i] = ch
			return
		}
	}
	s.challenges = append(s.challenges, ch)
}
