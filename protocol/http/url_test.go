package http

import (
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// A URL is relative when it starts with no scheme, whatever "://" its
// query or fragment holds: on each sender, a returnTo written in place
// goes to the target with its query intact, and a URL that starts with a
// value goes where the value says (the target's origin for a path, its
// own for an absolute URL).
func TestRelativeURLWithSchemeInQuery(t *testing.T) {
	for _, sd := range sessionSenders {
		t.Run(sd.name, func(t *testing.T) {
			target := newCounting(t, nil)
			other := newCounting(t, nil)
			vars := testenv.Vars{"base": other.URL + "/api", "p": "/z", "n": "http://a.example/?b=c"}
			vu := newVU(t, Options{Timeout: 5 * time.Second, KeepAlive: true, HTTP2: sd.http2}, sd.loop)
			for _, c := range []struct {
				url  string
				srv  *counting
				want string
			}{
				{"/login?next=http://a.example/", target, "/login?next=http://a.example/"},
				{"/x#http://a", target, "/x"},
				{"x?redirect_uri=https://a.example/cb", target, "/x?redirect_uri=https://a.example/cb"},
				{"${base}/y?next=http://a.example/", other, "/api/y?next=http://a.example/"},
				{"${p}?next=http://a.example/", target, "/z?next=http://a.example/"},
				{"/q?next=${n}", target, "/q?next=http%3A%2F%2Fa.example%2F%3Fb%3Dc"},
			} {
				r, err := Compile(text(target.URL), nil, &plan.Step{Name: "s", Method: "GET", URL: text(c.url)}, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if res := vu.do(r, vars); res.Err != metrics.OK {
					t.Errorf("%s: %s %s", c.url, res.Err, res.Detail)
					continue
				}
				_, seen, _ := c.srv.take()
				if len(seen) != 1 || seen[0].RequestURI != c.want {
					var got []string
					for _, s := range seen {
						got = append(got, s.RequestURI)
					}
					t.Errorf("%s: the server read %q, want %q", c.url, got, c.want)
				}
			}
			// Without a target, a value that is a path is not sent, on
			// every sender alike.
			r, err := Compile(nil, nil, &plan.Step{Name: "s", Method: "GET", URL: text("${p}?next=http://a.example/")}, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res := vu.do(r, vars); res.Err != metrics.NotSent || res.Detail != `URL "/z?next=http://a.example/" is not absolute http:// or https://` {
				t.Errorf("a relative URL without a target: %s %s, want not_sent", res.Err, res.Detail)
			}
		})
	}
}

// Credentials in a URL (user:password@, in the target, a step's URL or
// a value) are sent as curl and k6 send them: percent-decoded, as
// Authorization: Basic, and never in the request line or the Host
// header. A step's own Authorization header wins (as curl's -H and Go's
// client let it), and so does its auth; auth: none sends none; a redirect
// to another host does not take them. Messages never say the password.
func TestURLCredentials(t *testing.T) {
	for _, sd := range sessionSenders {
		t.Run(sd.name, func(t *testing.T) {
			other := newCounting(t, nil)
			var srv *counting
			srv = newCounting(t, map[string]nethttp.HandlerFunc{
				"/basic": func(w nethttp.ResponseWriter, r *nethttp.Request) {
					u, p, ok := r.BasicAuth()
					if !ok || u != "al@ice" || p != "pa:ss/" || strings.Contains(r.RequestURI, "@") || r.Host != srv.Listener.Addr().String() {
						w.WriteHeader(401)
					}
				},
				"/away": redirectTo(302, strings.Replace(other.URL, "127.0.0.1", "localhost", 1)+"/there"), // another host
			})
			host := srv.Listener.Addr().String()
			vars := testenv.Vars{"u": "al%40ice", "p": "pa%3Ass%2F", "base": "http://al%40ice:pa%3Ass%2F@" + host, "host": host}
			vu := newVU(t, Options{Timeout: 5 * time.Second, KeepAlive: true, HTTP2: sd.http2}, sd.loop)
			send := func(target, url string, edit func(*plan.Step)) (Result, []*nethttp.Request) {
				t.Helper()
				st := &plan.Step{Name: "s", Method: "GET", URL: text(url)}
				if edit != nil {
					edit(st)
				}
				var tt *plan.Text
				if target != "" {
					tt = text(target)
				}
				r, err := Compile(tt, nil, st, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				res := vu.do(r, vars)
				_, seen, _ := srv.take()
				return res, seen
			}
			for _, c := range [][2]string{
				{"http://al%40ice:pa%3Ass%2F@" + host, "/basic"},
				{"", "http://al%40ice:pa%3Ass%2F@" + host + "/basic?next=http://a.example/"},
				{"http://${u}:${p}@" + host, "/basic"},
				{"http://${u}:${p}@${host}", "/basic"},
				{"http://127.0.0.1:9", "${base}/basic"},
				{"${base}", "/basic"},
			} {
				if res, seen := send(c[0], c[1], nil); res.Err != metrics.OK || len(seen) != 1 {
					t.Errorf("target %q url %q: %s %s, %d requests", c[0], c[1], res.Err, res.Detail, len(seen))
				}
			}
			authz := func(seen []*nethttp.Request) string {
				if len(seen) != 1 {
					t.Fatalf("%d requests, want 1", len(seen))
				}
				return seen[0].Header.Get("Authorization")
			}
			target := "http://al%40ice:pa%3Ass%2F@" + host
			if _, seen := send(target, "/echo", func(st *plan.Step) {
				st.Headers = []plan.Pair{{Name: "Authorization", Value: text("Bearer abc")}}
			}); authz(seen) != "Bearer abc" {
				t.Errorf("the step's own Authorization: the server read %q", authz(seen))
			}
			if _, seen := send(target, "/echo", func(st *plan.Step) {
				st.Auth = &plan.Auth{Type: plan.AuthBasic, User: text("bob"), Password: text("x")}
			}); authz(seen) != basicHeader("bob", "x") {
				t.Errorf("the step's auth: the server read %q", authz(seen))
			}
			if _, seen := send(target, "/echo", func(st *plan.Step) { st.Auth = &plan.Auth{Type: plan.AuthNone} }); authz(seen) != "" {
				t.Errorf("auth: none: the server read %q", authz(seen))
			}
			if res, _ := send(target, "/away", nil); res.Err != metrics.OK {
				t.Errorf("redirect: %s %s", res.Err, res.Detail)
			}
			if _, seen, _ := other.take(); len(seen) != 1 || seen[0].Header.Get("Authorization") != "" {
				t.Errorf("a redirect to another host: %d requests, Authorization %q", len(seen), seen[0].Header.Get("Authorization"))
			}
			// A userinfo that does not decode is an invalid request, and
			// its message does not say the password.
			for _, c := range [][2]string{{"http://ann:s3cr%zz@" + host, "/basic"}, {"", "http://ann:s3cr%zz@" + host + "/a\x00"}} {
				res, seen := send(c[0], c[1], nil)
				if res.Err != metrics.InvalidRequest || len(seen) != 0 || strings.Contains(res.Detail, "s3cr") {
					t.Errorf("%q %q: %s %q, %d requests; want invalid_request without the password", c[0], c[1], res.Err, res.Detail, len(seen))
				}
			}
		})
	}
}
