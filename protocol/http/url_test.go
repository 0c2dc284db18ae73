package http

import (
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
