package http

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/idna"

	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/metrics"
)

// A request goes on the wire only as valid HTTP, whatever its values were
// filled in with (a data row, a value extracted from a response, a
// ${raw:...} placeholder): a CR or LF would end the request line or a
// header and start another (request splitting, a response of the system
// under test injecting headers into later requests), a space would end the
// request-target. The three ways a request is sent (the event loop, the
// pooled HTTP/1.1 client, the HTTP/2 client) build it from the same URL
// (Request.appendURL, which encodes it by wireURL) and the same headers
// (Request.eachHeader, which checks them), so that each refuses the same
// requests: the step fails with the kind invalid_request, and nothing is
// written.

// invalidRequest is a request refused before a byte was written.
type invalidRequest struct{ msg string }

func (e *invalidRequest) Error() string { return "invalid request: " + e.msg }

func invalid(msg string) error { return &invalidRequest{msg} }

// notSentKind is the error kind of a request that could not be built:
// invalid_request when it would not be valid HTTP, else not_sent (a
// variable no earlier step set, a URL that is not absolute).
func notSentKind(err error) metrics.ErrKind {
	var ir *invalidRequest
	if errors.As(err, &ir) {
		return metrics.InvalidRequest
	}
	return metrics.NotSent
}

// wireURL returns u, an expanded absolute URL, as it goes on the wire, and
// whether it had to encode it (else it is u itself): a control character anywhere (CR, LF, NUL,
// TAB, DEL ...) is an invalid request; a host that is not a valid host is
// one too, and one of Unicode letters goes as its ASCII (punycode) form;
// the path is encoded as net/url encodes it (a space as %20, UTF-8 byte by
// byte, and a % that starts no escape is an invalid request); in the query
// a space, ", <, > and every byte beyond ASCII are percent-encoded, the
// rest kept as written (a %20 stays %20). The fragment is not sent, nor
// the userinfo (user:password@), which is returned as it is written, for
// the Authorization header. A URL that is not http:// or https:// is not
// sent (a value with a path where the plan has no target), on every
// sender alike.
func wireURL(u []byte) (out []byte, encoded bool, userinfo string, err error) {
	n := schemeLen(u)
	if n == 0 {
		return nil, false, "", errNotAbsolute(u)
	}
	clean := true
	part := 0 // 0 authority, 1 path, 2 query, 3 fragment
	for i := n; i < len(u); i++ {
		c := u[i]
		if c < ' ' || c == 0x7f {
			return nil, false, "", ctlAt(u, i)
		}
		switch {
		case c == '#': // not sent: encodeURL cuts it
			part, clean = 3, false
		case c == '?' && part < 2:
			part = 2
		case c == '/' && part == 0:
			part = 1
		}
		switch part {
		case 0:
			clean = clean && hostByte(c) // an @ is not: encodeURL takes the userinfo out
		case 1:
			clean = clean && pathByte(c) && (c != '%' || escapeAt(u, i))
		case 2:
			clean = clean && queryByte(c)
		}
	}
	if clean {
		return u, false, "", nil
	}
	out, userinfo, err = encodeURL(u, n)
	return out, err == nil, userinfo, err
}

// encodeURL is wireURL's slow path, for a URL with something to encode.
func encodeURL(u []byte, n int) (out []byte, userinfo string, err error) {
	s := string(u)
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	rest := s[n:]
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, pathQuery := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, authority = authority[:at], authority[at+1:]
	}
	host := authority
	if !isASCII(authority) {
		// A host of Unicode letters (not its port, nor an IPv6 literal).
		h, port := authority, ""
		if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
			h, port = authority[:i], authority[i:]
		}
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return nil, "", invalid("URL host " + strconv.Quote(h) + ": " + err.Error())
		}
		host = a + port
	}
	if !httpguts.ValidHostHeader(host) || strings.ContainsAny(host, "@ ") || host == "" {
		return nil, "", invalid("URL host " + strconv.Quote(authority) + " is not a valid host[:port]")
	}
	path, query, hasQuery := strings.Cut(pathQuery, "?")
	p, err := url.Parse("http://h" + path)
	if err != nil || p.Path != "" && !strings.HasPrefix(p.Path, "/") {
		msg := "its path " + strconv.Quote(path) + " is not a valid path"
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			msg = "its path " + strconv.Quote(path) + ": " + ue.Err.Error()
		}
		return nil, "", invalid("URL " + msg + " (a % starts an escape such as %20; %25 is a percent sign)")
	}
	out = make([]byte, 0, len(s)+16)
	out = append(out, s[:n]...)
	out = append(out, host...)
	out = append(out, p.EscapedPath()...)
	if hasQuery {
		out = append(out, '?')
		for i := 0; i < len(query); i++ {
			if c := query[i]; queryByte(c) {
				out = append(out, c)
			} else {
				out = append(out, '%', upperhex[c>>4], upperhex[c&15])
			}
		}
	}
	return out, userinfo, nil
}

// CutUserinfo takes the credentials out of an absolute URL's
// user:password@, for a WebSocket's handshake: the URL without them, and
// the Authorization header they make ("": none), as an HTTP request's
// make it (userinfoAuthz).
func CutUserinfo(u string) (rest, authz string, err error) {
	scheme, after, ok := strings.Cut(u, "://")
	if !ok {
		return u, "", nil
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndexByte(after[:end], '@')
	if at < 0 {
		return u, "", nil
	}
	rest = scheme + "://" + after[at+1:]
	if at == 0 {
		return rest, "", nil
	}
	authz, err = userinfoAuthz(after[:at])
	return rest, authz, err
}

// userinfoAuthz is the Authorization header of a URL's userinfo
// (user:password, as written in the URL): basic credentials,
// percent-decoded as curl decodes them. Neither is said in an error.
func userinfoAuthz(userinfo string) (string, error) {
	user, password, _ := strings.Cut(userinfo, ":")
	u, err := url.PathUnescape(user)
	p, err2 := url.PathUnescape(password)
	switch {
	case err != nil || err2 != nil:
		return "", invalid("the URL's user:password@ has a % that starts no escape such as %40 (%25 is a percent sign)")
	case strings.IndexByte(u, ':') >= 0:
		return "", invalid("the URL's user has a colon (%3A): basic credentials end the user at the first colon")
	}
	return basicHeader(u, p), nil
}

const upperhex = "0123456789ABCDEF"

// What a URL keeps as written, by part: a table, as wireURL reads every
// byte of every request's URL.
const (
	inHost  = 1 << iota // host[:port]: a name, an IPv4 or [IPv6] literal with a zone
	inPath              // what net/url leaves in a path as written (its validEncoded)
	inQuery             // what a query keeps; the rest is percent-encoded, as a browser does
)

var urlBytes = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if alnum || strings.IndexByte("-._~!$&'()*+,;=:[]%", b) >= 0 {
			t[c] |= inHost
		}
		if alnum || strings.IndexByte("-._~!$&'()*+,;=:@[]%/", b) >= 0 {
			t[c] |= inPath
		}
		if b > ' ' && b < 0x7f && b != '"' && b != '<' && b != '>' {
			t[c] |= inQuery
		}
	}
	return t
}()

func hostByte(c byte) bool  { return urlBytes[c]&inHost != 0 }
func pathByte(c byte) bool  { return urlBytes[c]&inPath != 0 }
func queryByte(c byte) bool { return urlBytes[c]&inQuery != 0 }

// escapeAt reports whether u[i], a %, starts an escape %XX.
func escapeAt(u []byte, i int) bool {
	return i+2 < len(u) && isHex(u[i+1]) && isHex(u[i+2])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// CheckURL refuses a URL with a control character, which would split the
// request line of a WebSocket's handshake (an HTTP request's URL is
// checked and encoded by wireURL).
func CheckURL(u string) error {
	for i := 0; i < len(u); i++ {
		if c := u[i]; c < ' ' || c == 0x7f {
			return ctlAt([]byte(u), i)
		}
	}
	return nil
}

// errNotAbsolute is the error of a URL that is not http:// or https://.
func errNotAbsolute(u []byte) error {
	return errors.New("URL " + quoteURL(u) + " is not absolute http:// or https://")
}

// ctlAt is the error of URL u with a control character at byte i.
func ctlAt(u []byte, i int) error {
	return invalid("URL has the control character " + strconv.QuoteRune(rune(u[i])) + " at byte " + strconv.Itoa(i) + ": " + quoteURL(u))
}

// quoteURL quotes a URL for an error message, its secrets redacted (its
// password, secret query parameters), at most 200 bytes of it.
func quoteURL(u []byte) string {
	s := secret.URL(string(u))
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + "..."
	}
	return strconv.Quote(s)
}

// CheckHeader refuses a header that is not valid HTTP once filled in: a
// name that is not a token (a space, a colon), a value with a control
// character other than TAB (a CR or LF would start another header), a Host
// that is not a host[:port]. A WebSocket's handshake headers are checked
// by it too.
func CheckHeader(name, value string) error {
	switch {
	case !httpguts.ValidHeaderFieldName(name):
		return invalid("header name " + strconv.Quote(name) + " is not a valid HTTP token")
	case !httpguts.ValidHeaderFieldValue(value):
		return invalid("header " + name + ": its value has a control character: " + quoteValue(value))
	case strings.EqualFold(name, "Host") && !httpguts.ValidHostHeader(value):
		return invalid("header Host: " + quoteValue(value) + " is not a valid host[:port]")
	}
	return nil
}

func quoteValue(v string) string {
	if len(v) > 200 {
		return strconv.Quote(v[:200]) + "..."
	}
	return strconv.Quote(v)
}
