package http

import (
	"strings"
	"testing"
)

// Whatever a hostile server puts in a digest challenge, perflab's answer
// is one header that CheckHeader lets through, or the challenge held a
// control character (the request is then refused, not sent); a
// parameter's quoted value reads back as the server wrote it.
func FuzzDigestChallenge(f *testing.F) {
	f.Add(`Digest realm="r", nonce="n", qop="auth, auth-int", algorithm=SHA-256, opaque="o", stale=true`, "r")
	f.Add(`Basic realm="x", Digest realm="a\"b", nonce=abc, algorithm=md5-sess, userhash=true`, `a"b`)
	f.Add(`Digest nonce="", realm`, "")
	f.Add("Digest realm=\"\r\nX-Injected: 1\", nonce=n", "\x00")
	f.Fuzz(func(t *testing.T, header, realm string) {
		if ch, _ := parseDigest([][]byte{[]byte(header)}); ch != nil {
			answer := ch.answer("user", "password", "GET", "/a?b=c", 1, "0123456789abcdef")
			if err := CheckHeader("Authorization", answer); err != nil && !strings.ContainsFunc(header, isCtl) {
				t.Fatalf("%q: the answer %q: %v", header, answer, err)
			}
		}
		if strings.ContainsFunc(realm, isCtl) {
			return
		}
		quoted := quoteParam(realm)
		ch, why := parseDigest([][]byte{[]byte(`Digest realm=` + quoted + `, nonce="n"`)})
		if ch == nil || ch.realm != realm {
			t.Fatalf("realm %q written %s: %+v %s", realm, quoted, ch, why)
		}
	})
}

func isCtl(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }

// Whatever Location a hostile server sends, a redirect is followed to a
// URL that the request writer takes as it is (absolute http or https,
// valid on the wire), or not followed.
func FuzzRedirectLocation(f *testing.F) {
	f.Add("/next?a=1#frag")
	f.Add("../up")
	f.Add("https://other.example:8443/x y")
	f.Add("//host.example/p")
	f.Add("ftp://x/")
	f.Add("http://user:pw@h/")
	f.Add("http://[::1")
	f.Fuzz(func(t *testing.T, loc string) {
		next, host, _, err := resolveLocation([]byte("http://127.0.0.1:8080/dir/page?q=1"), []byte(loc))
		if err != nil {
			return
		}
		if _, _, _, err := splitURL(next); err != nil || host == "" {
			t.Fatalf("%q: followed to %q (host %q): %v", loc, next, host, err)
		}
		if again, encoded, userinfo, err := wireURL(next); err != nil || encoded || userinfo != "" || string(again) != string(next) {
			t.Fatalf("%q: followed to %q, which the writer would send as %q: %v", loc, next, again, err)
		}
	})
}
