package http

import (
	"bytes"
	"strings"
	"testing"
)

// Secrets are redacted in the head, a body that is not a form or JSON is
// left as it is, and the log takes as many failures as it may and no
// more.
func TestFailureLogRedactsAndBounds(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET http://u:pw@h/x?a=1 HTTP/1.1\r\nauthorization: Basic dTpwdw==\r\nProxy-Authorization: x\r\nX-Auth-Token: t\r\nAccept: */*\r\n\r\nAuthorization: body",
			"GET http://u:[redacted]@h/x?a=1 HTTP/1.1\r\nauthorization: [redacted]\r\nProxy-Authorization: [redacted]\r\nX-Auth-Token: [redacted]\r\nAccept: */*\r\n\r\nAuthorization: body"},
		{"HTTP/1.1 401 Unauthorized\nSet-Cookie: a=b\nWWW-Authenticate: Digest realm=\"r\"\n\n",
			"HTTP/1.1 401 Unauthorized\nSet-Cookie: [redacted]\nWWW-Authenticate: Digest realm=\"r\"\n\n"},
		{"GET /a@b HTTP/1.1\r\nCookie: c\r\n", "GET /a@b HTTP/1.1\r\nCookie: [redacted]\r\n"},
		{"", ""},
	} {
		if got := string(redactMessage([]byte(c.in))); got != c.want {
			t.Errorf("redactMessage(%q) = %q, want %q", c.in, got, c.want)
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
	if l := NewFailureLog(&out, MaxFailures+1); l.max != MaxFailures {
		t.Errorf("a log asked for %d failures keeps %d, want MaxFailures (%d)", MaxFailures+1, l.max, MaxFailures)
	}
	var none *FailureLog
	if none.open() || none.Err() != nil {
		t.Error("a nil log wants failures")
	}
}

// Query parameters, form fields and JSON keys whose names are secrets (as
// headers' are) are redacted in what the log writes: in the request
// line, in headers that carry a URL, and in bodies that are forms or
// JSON, by their Content-Type; other bodies are written as they are.
func TestFailureLogRedactsQueriesAndForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GET /fail?token=tok123&api_key=k&page=2&password= HTTP/1.1\r\nReferer: http://h/p?access_token=a&b=c\r\n\r\n",
			"GET /fail?token=[redacted]&api_key=[redacted]&page=2&password=[redacted] HTTP/1.1\r\nReferer: http://h/p?access_token=[redacted]&b=c\r\n\r\n"},
		{"POST http://h/x?client_secret=s HTTP/2.0\r\ncontent-type: application/x-www-form-urlencoded\r\n\r\nuser=ann&password=s3cr%21t&remember=1",
			"POST http://h/x?client_secret=[redacted] HTTP/2.0\r\ncontent-type: application/x-www-form-urlencoded\r\n\r\nuser=ann&password=[redacted]&remember=1"},
		{"POST /login HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{\"user\":\"ann\",\"password\":\"pw\",\"max_tokens\":5}",
			"POST /login HTTP/1.1\r\nContent-Type: application/json; charset=utf-8\r\n\r\n{\"user\":\"ann\",\"password\":\"[redacted]\",\"max_tokens\":5}"},
		{"HTTP/1.1 302 Found\r\nLocation: /cb#access_token=at&state=s\r\nContent-Type: application/problem+json\r\n\r\n{\"refresh_token\":\"rt\",\"detail\":\"x\"}",
			"HTTP/1.1 302 Found\r\nLocation: /cb#access_token=[redacted]&state=s\r\nContent-Type: application/problem+json\r\n\r\n{\"refresh_token\":\"[redacted]\",\"detail\":\"x\"}"},
		{"POST /note HTTP/1.1\r\nContent-Type: text/plain\r\n\r\npassword=kept&token=kept",
			"POST /note HTTP/1.1\r\nContent-Type: text/plain\r\n\r\npassword=kept&token=kept"},
	} {
		if got := string(redactMessage([]byte(c.in))); got != c.want {
			t.Errorf("redactMessage(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
