package http

import (
	"bytes"
	"crypto/md5" //nolint:gosec // RFC 7616's MD5, as servers ask for it
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/tmpl"
)

// HTTP authentication of a step's requests (http.auth, a step's auth):
// basic (RFC 7617) is sent with every request, as JMeter and k6 send it;
// digest (RFC 7616) answers the server's 401 challenge by sending the
// request again, then reuses the challenge for the VU's next requests to
// that origin (its nonce count incremented), until the server challenges
// again (stale=true: a nonce it no longer takes).

// auth is a step's authentication, compiled.
type auth struct {
	digest         bool
	user, password *tmpl.Template
	// basic is the Authorization header of basic credentials without
	// placeholders, made once.
	basic string
}

func compileAuth(a *plan.Auth) *auth {
	if a == nil || a.Type == plan.AuthNone || a.User == nil {
		return nil
	}
	out := &auth{digest: a.Type == plan.AuthDigest, user: a.User.T, password: tmpl.MustParse("")}
	if a.Password != nil {
		out.password = a.Password.T
	}
	if !out.digest && out.user.IsLiteral() && out.password.IsLiteral() {
		out.basic = basicHeader(out.user.Source(), out.password.Source())
	}
	return out
}

func basicHeader(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// credentials are the user and password for vars; a basic user with a
// colon is an invalid request (RFC 7617: the colon ends the user).
func (a *auth) credentials(vars Vars) (user, password string, err error) {
	if user, err = a.user.Expand(vars); err != nil {
		return "", "", err
	}
	if password, err = a.password.Expand(vars); err != nil {
		return "", "", err
	}
	if !a.digest && strings.IndexByte(user, ':') >= 0 {
		return "", "", invalid("auth: the basic user " + quoteValue(user) + " has a colon")
	}
	return user, password, nil
}

// header is the Authorization header of a request with method to URL u
// (origin and request-target as splitURL cuts it): basic credentials, or
// the answer to the VU's digest challenge for the origin, if it has one
// (else "": the server's challenge comes first).
func (a *auth) header(s *Scratch, vars Vars, method, origin, uri []byte) (string, error) {
	if a.basic != "" {
		return a.basic, nil
	}
	var ch *challenge
	if a.digest {
		if ch = s.challenge(origin); ch == nil {
			return "", nil
		}
	}
	user, password, err := a.credentials(vars)
	if err != nil {
		return "", err
	}
	if !a.digest {
		return basicHeader(user, password), nil
	}
	if len(uri) == 0 || uri[0] == '?' {
		uri = append([]byte("/"), uri...)
	}
	ch.nc++
	return ch.answer(user, password, string(method), string(uri), ch.nc, cnonce()), nil
}

// challenge is a server's digest challenge (WWW-Authenticate: Digest ...),
// kept for its origin.
type challenge struct {
	origin    string
	realm     string
	nonce     string
	opaque    string
	algorithm string // as the server named it
	qop       string // "auth", or "" (RFC 2069's digest, without a count)
	hash      func() hash.Hash
	sess      bool
	userhash  bool
	nc        uint32 // requests sent with the nonce
}

// digestHashes are the algorithms of RFC 7616 (and SHA-512, which some
// servers offer), by name in upper case; each has a -sess variant.
var digestHashes = map[string]func() hash.Hash{
	"MD5":         md5.New,
	"SHA-256":     sha256.New,
	"SHA-512-256": sha512.New512_256,
	"SHA-512":     sha512.New,
}

// parseDigest reads the first digest challenge perflab can answer from the
// values of WWW-Authenticate; why says what was wrong when there is none.
func parseDigest(values [][]byte) (ch *challenge, why string) {
	why = "the 401 has no digest challenge (WWW-Authenticate: Digest ...)"
	for _, v := range values {
		for _, c := range parseChallenges(string(v)) {
			if !strings.EqualFold(c.scheme, "Digest") {
				continue
			}
			ch, w := digestOf(c.params)
			if ch != nil {
				return ch, ""
			}
			why = w
		}
	}
	return nil, why
}

func digestOf(params map[string]string) (*challenge, string) {
	ch := &challenge{realm: params["realm"], nonce: params["nonce"], opaque: params["opaque"], algorithm: params["algorithm"]}
	if ch.nonce == "" {
		return nil, "the digest challenge has no nonce"
	}
	alg := strings.ToUpper(ch.algorithm)
	if alg == "" {
		alg = "MD5"
	}
	alg, ch.sess = strings.CutSuffix(alg, "-SESS")
	if ch.hash = digestHashes[alg]; ch.hash == nil {
		return nil, "the digest challenge's algorithm " + strconv.Quote(ch.algorithm) + " is not one perflab answers (MD5, SHA-256, SHA-512-256, with or without -sess)"
	}
	if q, ok := params["qop"]; ok {
		for _, o := range strings.Split(q, ",") {
			if strings.EqualFold(strings.TrimSpace(o), "auth") {
				ch.qop = "auth"
			}
		}
		if ch.qop == "" {
			return nil, "the digest challenge's qop " + strconv.Quote(q) + " lacks auth, the one perflab answers"
		}
	}
	ch.userhash = strings.EqualFold(params["userhash"], "true")
	return ch, ""
}

// answer is the Authorization header answering the challenge (RFC 7616
// section 3.4) for a request with method to uri, with nonce count nc.
func (ch *challenge) answer(user, password, method, uri string, nc uint32, cnonce string) string {
	h := func(parts ...string) string {
		d := ch.hash()
		for i, p := range parts {
			if i > 0 {
				d.Write([]byte{':'})
			}
			d.Write([]byte(p))
		}
		return hex.EncodeToString(d.Sum(nil))
	}
	ncs := strconv.FormatUint(uint64(nc)|1<<32, 16)[1:] // 8 hex digits
	ha1 := h(user, ch.realm, password)
	if ch.sess {
		ha1 = h(ha1, ch.nonce, cnonce)
	}
	ha2 := h(method, uri)
	var response string
	if ch.qop == "" {
		response = h(ha1, ch.nonce, ha2)
	} else {
		response = h(ha1, ch.nonce, ncs, cnonce, ch.qop, ha2)
	}
	var b strings.Builder
	name := user
	if ch.userhash {
		name = h(user, ch.realm)
	}
	b.WriteString("Digest username=")
	b.WriteString(quoteParam(name))
	b.WriteString(", realm=")
	b.WriteString(quoteParam(ch.realm))
	b.WriteString(", uri=")
	b.WriteString(quoteParam(uri))
	if ch.algorithm != "" {
		b.WriteString(", algorithm=")
		b.WriteString(ch.algorithm)
	}
	b.WriteString(", nonce=")
	b.WriteString(quoteParam(ch.nonce))
	if ch.qop != "" {
		b.WriteString(", nc=")
		b.WriteString(ncs)
		b.WriteString(", cnonce=")
		b.WriteString(quoteParam(cnonce))
		b.WriteString(", qop=")
		b.WriteString(ch.qop)
	}
	b.WriteString(", response=")
	b.WriteString(quoteParam(response))
	if ch.opaque != "" {
		b.WriteString(", opaque=")
		b.WriteString(quoteParam(ch.opaque))
	}
	if ch.userhash {
		b.WriteString(", userhash=true")
	}
	return b.String()
}

// cnonce is a client nonce: 16 hex digits.
func cnonce() string {
	return strconv.FormatUint(rand.Uint64()|1<<63, 16)
}

// quoteParam writes v as a quoted-string.
func quoteParam(v string) string {
	if !strings.ContainsAny(v, `"\`) {
		return `"` + v + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

// authChallenge is one challenge of a WWW-Authenticate value: its scheme
// and parameters (names in lower case).
type authChallenge struct {
	scheme string
	params map[string]string
}

// parseChallenges reads a WWW-Authenticate value (RFC 9110 section 11.6.1):
// challenges separated by commas, each a scheme and parameters name=value,
// a value a token or a quoted-string. A token68 is skipped.
func parseChallenges(v string) []authChallenge {
	var out []authChallenge
	p := &authParser{s: v}
	for {
		p.skip(", \t")
		if p.done() {
			return out
		}
		tok := p.token()
		if tok == "" { // not a token: skip to the next comma
			p.until(',')
			continue
		}
		p.skip(" \t")
		if !p.done() && p.peek() == '=' && len(out) > 0 {
			// name=value of the challenge before
			p.i++
			p.skip(" \t")
			out[len(out)-1].params[strings.ToLower(tok)] = p.value()
			continue
		}
		out = append(out, authChallenge{scheme: tok, params: map[string]string{}})
	}
}

type authParser struct {
	s string
	i int
}

func (p *authParser) done() bool { return p.i >= len(p.s) }
func (p *authParser) peek() byte { return p.s[p.i] }

func (p *authParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *authParser) until(c byte) {
	for p.i < len(p.s) && p.s[p.i] != c {
		p.i++
	}
}

// token reads an RFC 9110 token (a token68's trailing = are left).
func (p *authParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenByte(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a token or a quoted-string.
func (p *authParser) value() string {
	if p.done() || p.peek() != '"' {
		v := p.token()
		p.until(',')
		return v
	}
	p.i++
	var b bytes.Buffer
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\' && p.i < len(p.s):
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			p.until(',')
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
