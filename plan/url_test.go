package plan

import (
	"strings"
	"testing"
)

// urlPlan is a plan of one step of URL url, with target (none when "")
// and the variable base.
func urlPlan(target, url string) string {
	src := "vars: {base: \"http://127.0.0.1:8080/api\"}\n"
	if target != "" {
		src += "target: " + target + "\n"
	}
	return src + "scenarios:\n  - name: s\n    vus: 1\n    iterations: 1\n    flow:\n      - url: \"" + url + "\"\n"
}

// A URL is relative when it does not start with a scheme (RFC 3986: a
// letter, then letters, digits, +, - or ., then a colon), whatever "://"
// its query or fragment holds: every returnTo and redirect_uri written in
// place. A URL that starts with a value is absolute or relative as the
// value says.
func TestRelativeURLs(t *testing.T) {
	cases := []struct{ target, url, want string }{
		{"http://127.0.0.1:8080", "/login?next=http://a.example/", ""},
		{"http://127.0.0.1:8080", "/x#http://a", ""},
		{"http://127.0.0.1:8080", "x?next=http://a.example/", ""},
		{"http://127.0.0.1:8080", "?redirect_uri=https://a.example/cb", ""},
		{"http://127.0.0.1:8080", "/a:b?c=d://e", ""},
		{"http://127.0.0.1:8080", "${base}/x?next=http://a.example/", ""},
		{"", "${base}/x?next=http://a.example/", ""},
		{"", "${base}/x", ""},
		{"", "HTTP://127.0.0.1/x?next=http://a", ""},
		{"http://127.0.0.1:8080", "http${env.S:-}://127.0.0.1/x?next=http://a", ""},
		{"", "/login?next=http://a.example/", `p.yaml:7:14: step GET /login?next=http://a.example/: url "/login?next=http://a.example/" is relative but the plan has no target`},
		{"", "x#http://a", `p.yaml:7:14: step GET x#http://a: url "x#http://a" is relative but the plan has no target`},
		{"http://127.0.0.1:8080", "ftp://127.0.0.1/x?next=http://a", `p.yaml:8:14: step GET ftp://127.0.0.1/x?next=http://a: url "ftp://127.0.0.1/x?next=http://a": want an http:// or https:// URL`},
		{"http://127.0.0.1:8080", "localhost:8080/x", `p.yaml:8:14: step GET localhost:8080/x: url "localhost:8080/x": want an http:// or https:// URL ("localhost:" is read as its scheme; a path relative to the target starts with /)`},
		{"http://127.0.0.1:8080", "http://[::1/x?next=http://a", `p.yaml:8:14: step GET http://[::1/x?next=http://a: url "http://[::1/x?next=http://a": malformed URL: missing ']' in host`},
	}
	for _, c := range cases {
		_, err := Parse([]byte(urlPlan(c.target, c.url)), "p.yaml", Options{LookupEnv: noEnv})
		got := ""
		if err != nil {
			got = strings.TrimSpace(err.Error())
		}
		if got != c.want {
			t.Errorf("target %q, url %q:\n got %s\nwant %s", c.target, c.url, got, c.want)
		}
	}
}

func TestSchemeLen(t *testing.T) {
	for u, want := range map[string]int{
		"http://a": 5, "HTTPS://a": 6, "a+b-c.d9:x": 9, "localhost:8080/x": 10, "mailto:x": 7,
		"/login?next=http://a": 0, "x?next=http://a": 0, "x#http://a": 0, "?a=http://b": 0, "/a:b": 0,
		"1a:b": 0, ":x": 0, "": 0, "http": 0, "ht\x00tp://": 0, "${base}/x": 0, "a_b:c": 0,
	} {
		if got := SchemeLen(u); got != want {
			t.Errorf("SchemeLen(%q) = %d, want %d", u, got, want)
		}
		if got := SchemeLen([]byte(u)); got != want {
			t.Errorf("SchemeLen([]byte(%q)) = %d, want %d", u, got, want)
		}
	}
}

// A URL's password is in no name made from the URL and no message about
// it, and the plan's text as a run keeps it has it redacted.
func TestURLPasswordsRedacted(t *testing.T) {
	src := urlPlan("http://bob:s3cret@127.0.0.1:9", "http://al%40ice:pa%3Ass@127.0.0.1:9/y?next=http://u:pw0@a/") +
		"      - url: \"http://u:pw1@[::1/x\"\n      - url: \"http://u:pw2@127.0.0.1/%zz\"\n      - url: \"/a?next=http://u:pw3@a/\"\n"
	p, err := Parse([]byte(src), "p.yaml", Options{LookupEnv: noEnv})
	if err == nil {
		t.Fatal("the plan was accepted")
	}
	want := []string{
		`p.yaml:9:14: step GET http://u:[redacted]@[::1/x: url "http://u:[redacted]@[::1/x": malformed URL: missing ']' in host`,
		`p.yaml:10:14: a step: url "http://u:[redacted]@127.0.0.1/%zz": the % at byte 23 starts no escape such as %20 (%25 is a percent sign)`,
	}
	if got := strings.TrimSpace(err.Error()); got != strings.Join(want, "\n") {
		t.Errorf("messages:\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	src = strings.Join(strings.SplitAfter(src, "\n")[:8], "") + "      - url: \"/a?next=http://u:pw3@a/\"\n"
	if p, err = Parse([]byte(src), "p.yaml", Options{LookupEnv: noEnv}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range p.Scenarios[0].Flow {
		names = append(names, st.Name)
	}
	if got, want := strings.Join(names, "\n"), "GET http://al%40ice:[redacted]@127.0.0.1:9/y?next=http://u:[redacted]@a/\nGET /a?next=http://u:[redacted]@a/"; got != want {
		t.Errorf("names:\n%s\nwant\n%s", got, want)
	}
	kept := string(p.KeptSource())
	for _, pw := range []string{"s3cret", "pa%3Ass", "pw0", "pw3"} {
		if strings.Contains(kept, pw) {
			t.Errorf("the kept source has %q:\n%s", pw, kept)
		}
	}
	if !strings.Contains(string(p.Source), "s3cret") {
		t.Error("the plan's own source lost its password")
	}
}
