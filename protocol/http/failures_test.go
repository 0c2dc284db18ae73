package http

import (
	"bytes"
	"strings"
	"testing"
)

// Secrets are redacted in the head, the body is left as it is, and the
// log takes as many failures as it may and no more.
func TestFailureLogRedactsAndBounds(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET http://u:pw@h/x?a=1 HTTP/1.1\r\nauthorization: Basic dTpwdw==\r\nProxy-Authorization: x\r\nX-Auth-Token: t\r\nAccept: */*\r\n\r\nAuthorization: body",
			"GET http://u:[redacted]@h/x?a=1 HTTP/1.1\r\nauthorization: [redacted]\r\nProxy-Authorization: [redacted]\r\nX-Auth-Token: [redacted]\r\nAccept: */*\r\n\r\nAuthorization: body"},
		{"HTTP/1.1 401 Unauthorized\nSet-Cookie: a=b\nWWW-Authenticate: Digest realm=\"r\"\n\n",
			"HTTP/1.1 401 Unauthorized\nSet-Cookie: [redacted]\nWWW-Authenticate: Digest realm=\"r\"\n\n"},
		{"GET /a@b HTTP/1.1\r\nCookie: c\r\n", "GET /a@b HTTP/1.1\r\nCookie: [redacted]\r\n"},
		{"", ""},
	} {
		if got := string(redactHead([]byte(c.in))); got != c.want {
			t.Errorf("redactHead(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var out bytes.Buffer
	l := NewFailureLog(&out, 2)
	d := &Dump{Request: []byte("GET / HTTP/1.1\r\n\r\n")}
	for i := range 5 {
		if wrote := l.Write(Failure{Step: "s"}, d); wrote != (i < 2) {
			t.Errorf("write %d: %v", i, wrote)
		}
	}
	if n := strings.Count(out.String(), "\n"); n != 2 || l.open() || l.Err() != nil {
		t.Errorf("%d lines, open %v, %v", n, l.open(), l.Err())
	}
	var none *FailureLog
	if none.open() || none.Err() != nil {
		t.Error("a nil log wants failures")
	}
}
