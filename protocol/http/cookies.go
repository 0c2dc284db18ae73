package http

import (
	nethttp "net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/perflab/perflab/plan"
)

// Each VU keeps the cookies its responses set in a jar of its own
// (http.cookies), as k6, Gatling and JMeter's Cookie Manager do: the
// standard library's jar, which follows RFC 6265 (domain and host-only
// cookies, paths, Secure, Expires and Max-Age) with the public suffix list,
// so that a response cannot set a cookie for all of .com. A VU whose
// responses set no cookie has no jar: its requests look nothing up.

// jar is a VU's cookies.
type jar struct {
	j *cookiejar.Jar
	// perIteration: emptied as each of the VU's iterations starts.
	perIteration bool
}

// cookiesOn reports whether the client keeps cookies.
func (c *Client) cookiesOn() bool { return c.opts.Cookies != plan.CookiesOff }

// storeCookies puts the cookies of a response to URL u (its Set-Cookie
// values) in the VU's jar, made now if it has none.
func (c *Client) storeCookies(s *Scratch, u []byte, values [][]byte) {
	pu, err := url.Parse(string(u))
	if err != nil {
		return
	}
	var cs []*nethttp.Cookie
	for _, v := range values {
		if ck, err := nethttp.ParseSetCookie(string(v)); err == nil {
			cs = append(cs, ck)
		}
	}
	if len(cs) == 0 {
		return
	}
	if s.jar == nil {
		j, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // never fails
		s.jar = &jar{j: j, perIteration: c.opts.Cookies == plan.CookiesPerIteration}
	}
	s.jar.j.SetCookies(pu, cs)
}

// cookieHeader is the value of the Cookie header the VU's jar gives a
// request to URL u, or "": at once when the VU has no jar.
func (s *Scratch) cookieHeader(u []byte) string {
	if s.jar == nil {
		return ""
	}
	pu, err := url.Parse(string(u))
	if err != nil {
		return ""
	}
	cs := s.jar.j.Cookies(pu)
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, ck := range cs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(ck.Name)
		b.WriteByte('=')
		if ck.Quoted {
			b.WriteByte('"')
			b.WriteString(ck.Value)
			b.WriteByte('"')
		} else {
			b.WriteString(ck.Value)
		}
	}
	return b.String()
}

// NewIteration is called as each of the VU's iterations starts: with
// http.cookies: per_iteration its jar is emptied (k6's default: a new jar
// for every iteration).
func (s *Scratch) NewIteration() {
	if s.jar != nil && s.jar.perIteration {
		s.jar = nil
	}
}
