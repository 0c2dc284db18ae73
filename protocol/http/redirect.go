package http

import (
	"errors"
	"net/url"
	"strings"
)

// Redirects are followed as k6 and browsers follow them (http.redirects,
// default 10): 301, 302 and 303 become a GET without a body (a HEAD stays
// a HEAD), 307 and 308 send the method and body again; the Location is
// resolved against the URL that answered (RFC 3986), and may lead to
// another host or scheme. Past the limit the last 3xx is the step's
// response, judged as any other.

// isRedirect reports whether a status is one that is followed.
func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// resolveLocation resolves a redirect's Location against base, the URL
// that answered: it returns the URL to request next as it goes on the
// wire (wireURL), its host, and whether Location gave no host of its own
// (a path, relative or absolute). A Location that is not http or https,
// or not a URL, is an error.
func resolveLocation(base, loc []byte) (next []byte, host string, relative bool, err error) {
	b, err := url.Parse(string(base))
	if err != nil {
		return nil, "", false, err
	}
	ref, err := url.Parse(strings.TrimSpace(string(loc)))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", false, errors.New(quoteURL(loc) + " is not a URL: " + err.Error())
	}
	u := b.ResolveReference(ref)
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return nil, "", false, errors.New(quoteURL(loc) + " is not an http or https URL")
	}
	if u.Hostname() == "" {
		return nil, "", false, errors.New(quoteURL(loc) + " names no host")
	}
	u.Fragment, u.RawFragment, u.User = "", "", nil
	if next, _, _, err = wireURL([]byte(u.String())); err != nil {
		return nil, "", false, err
	}
	return next, u.Hostname(), ref.Scheme == "" && ref.Host == "", nil
}

// sameDomain reports whether a redirect to host stays with the host of the
// step's URL, or goes to one of its subdomains: the step's Authorization
// and Cookie headers go along, as Go's client sends them.
func sameDomain(host, orig string) bool {
	host, orig = strings.ToLower(host), strings.ToLower(orig)
	return host == orig || strings.HasSuffix(host, "."+orig)
}

// hostOf is the host of an absolute URL, without its port.
func hostOf(u []byte) string {
	_, authority, _, err := splitURL(u)
	if err != nil {
		return ""
	}
	a := string(authority)
	if i := strings.LastIndexByte(a, ':'); i >= 0 && !strings.HasSuffix(a, "]") {
		a = a[:i]
	}
	return strings.Trim(a, "[]")
}
