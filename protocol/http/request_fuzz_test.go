package http

import (
	"bufio"
	"bytes"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/plan"
)

// FuzzRequestWriter: whatever values fill a request's templated parts
// (the path, a ${raw:...} path and query, a query value, a header's name
// and value, the body), the event loop's request writer writes exactly one
// request that Go's server reads back whole, with the header and the body
// as given and a request-target of printable ASCII, or refuses it as an
// invalid request and writes nothing. It refuses nothing valid: values
// without control characters or stray % in the raw path, and a valid
// header, are always written.
func FuzzRequestWriter(f *testing.F) {
	f.Add("a", "b", "c", "d", "X-Token", "t", "{}", false)
	f.Add("a b", " HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET /x", "\r\n", "\n", "X-Token", "a\r\nX-Injected: 1", "body", true)
	f.Add("café", "ä ö", "é", "\x00", "X Bad", "\x00", "\r\n\r\n", false)
	f.Add("%", "%zz", "%20", "%2", "Host", "evil.example\r\nX: 1", "", true)
	f.Add("/../", "?x=1#f", "#", "a b&c=d", "Content-Length", "99", "x", true)
	f.Add("\u2028", "\xff\xfe", "\x7f", "\t", "X-Tab", "a\tb", "\x00\x01", false)
	f.Fuzz(func(t *testing.T, path, rawPath, query, rawQuery, hname, hvalue, body string, post bool) {
		method := "GET"
		if post {
			method = "POST"
		}
		st := &plan.Step{Name: "f", Method: method, URL: text("/p/${a}/${raw:b}?q=${c}&r=${raw:d}"),
			Headers: []plan.Pair{{Name: hname, Value: text("${h}")}}, Body: text("${e}")}
		r, err := Compile(text("http://127.0.0.1:8080"), nil, st, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		vars := testenv.Vars{"a": path, "b": rawPath, "c": query, "d": rawQuery, "h": hvalue, "e": body}
		var s Scratch
		b, _, err := NewClient(Options{KeepAlive: true}).appendRequest(nil, r, vars, &s)
		if err != nil {
			if notSentKind(err) != 0 && !strings.Contains(err.Error(), "invalid request") {
				t.Fatalf("refused, but not as an invalid request: %v", err)
			}
			valid := !hasCTL(rawPath) && !hasCTL(rawQuery) && !strings.Contains(rawPath, "%") &&
				httpguts.ValidHeaderFieldName(hname) && httpguts.ValidHeaderFieldValue(hvalue) &&
				(!strings.EqualFold(hname, "Host") || httpguts.ValidHostHeader(hvalue))
			if valid {
				t.Fatalf("refused a valid request: %v", err)
			}
			return
		}
		br := bufio.NewReader(bytes.NewReader(b))
		req, err := nethttp.ReadRequest(br)
		if err != nil {
			t.Fatalf("Go's server cannot read the request: %v\n%q", err, b)
		}
		got, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatalf("body: %v\n%q", err, b)
		}
		if _, err := br.Peek(1); err != io.EOF {
			t.Fatalf("bytes after the request (a second request?):\n%q", b)
		}
		if string(got) != body {
			t.Fatalf("body %q, want %q", got, body)
		}
		for i := 0; i < len(req.RequestURI); i++ {
			if c := req.RequestURI[i]; c <= ' ' || c >= 0x7f {
				t.Fatalf("request-target %q has the byte %q", req.RequestURI, c)
			}
		}
		switch {
		case strings.EqualFold(hname, "Content-Length"), strings.EqualFold(hname, "Connection"):
			// written by the writer itself, from the body and keep-alive
		case strings.EqualFold(hname, "Host"):
			if req.Host != hvalue {
				t.Fatalf("Host %q, want %q", req.Host, hvalue)
			}
		default:
			if v := req.Header.Values(hname); len(v) != 1 || v[0] != strings.Trim(hvalue, " \t") {
				t.Fatalf("header %s: %q, want %q", hname, v, hvalue)
			}
		}
	})
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
