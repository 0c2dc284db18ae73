package convert_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// cookieManager is an HTTP Cookie Manager.
func cookieManager(clear bool) string {
	return el("CookieManager", "cookies", `<collectionProp name="CookieManager.cookies"/>`+bp("CookieManager.clearEachIteration", clear))
}

// A Cookie Manager keeps each thread's cookies (across iterations, or
// each iteration anew); without one JMeter keeps none, nor does the plan.
func TestConvertCookies(t *testing.T) {
	handle := func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "s", Value: fmt.Sprint(n), Path: "/"})
		}
	}
	flow := []string{get("get", "/get"), get("set", "/set"), get("again", "/again")}
	for _, c := range []struct {
		name, top, mode string
		want            []string // the Cookie header of each request
	}{
		{"none", "", `cookies: "off"`, []string{"", "", "", "", "", ""}},
		{"kept", cookieManager(false), "", []string{"", "", "s=1", "s=1", "s=1", "s=4"}},
		{"each iteration", cookieManager(true), "cookies: per_iteration", []string{"", "", "s=1", "", "", "s=4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, got := runJMX(t, testPlan("cookies", c.top, 2, flow...), handle)
			var cookies []string
			for _, h := range got.headers {
				cookies = append(cookies, h.Get("Cookie"))
			}
			if !slices.Equal(cookies, c.want) {
				t.Errorf("cookies sent %q, want %q", cookies, c.want)
			}
			if c.mode != "" && !strings.Contains(string(res.Plan), c.mode) || c.mode == "" && strings.Contains(string(res.Plan), "cookies:") {
				t.Errorf("the plan's cookies are not %q:\n%s", c.mode, res.Plan)
			}
		})
	}
}

// authManager is an HTTP Authorization Manager of (url, user, password,
// mechanism) entries.
func authManager(entries ...[4]string) string {
	var b strings.Builder
	b.WriteString(`<collectionProp name="AuthManager.auth_list">`)
	for _, e := range entries {
		fmt.Fprintf(&b, `<elementProp name="" elementType="Authorization">%s%s%s%s</elementProp>`,
			sp("Authorization.url", e[0]), sp("Authorization.username", e[1]), sp("Authorization.password", e[2]), sp("Authorization.mechanism", e[3]))
	}
	b.WriteString(`</collectionProp>`)
	return el("AuthManager", "auth", b.String())
}

// An Authorization Manager's entry authenticates the requests whose URL
// starts with its URL (the first such entry); an entry of every URL is
// the plan's auth.
func TestConvertAuth(t *testing.T) {
	jmx := testPlan("auth", authManager(
		[4]string{"http://127.0.0.1:${__P(port,1)}/admin", "root", "s3cret", "BASIC"},
		[4]string{"http://127.0.0.1:${__P(port,1)}/digest", "d", "p", "DIGEST"},
	), 1, get("admin", "/admin/users"), get("public", "/public"))
	res, got := runJMX(t, jmx, nil)
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("root:s3cret"))
	if len(got.headers) != 2 || got.headers[0].Get("Authorization") != want || got.headers[1].Get("Authorization") != "" {
		t.Errorf("Authorization sent: %q, want %q then none\n%s", []string{got.headers[0].Get("Authorization"), got.headers[1].Get("Authorization")}, want, res.Plan)
	}
	all := testPlan("auth", authManager([4]string{"", "u", "p", "DIGEST"}), 1, get("a", "/a"), get("b", "/b"))
	res, _ = convertJMX(t, all)
	if !strings.Contains(string(res.Plan), "http:\n  cookies: \"off\"\n  auth:\n    type: digest\n    user: u\n    password: p\n") {
		t.Errorf("an entry of every URL is not the plan's auth:\n%s", res.Plan)
	}
}

// Requests as JMeter sends them: a raw body with text/plain unless a
// header says otherwise; parameters in the query of a GET, DELETE
// (a form body too, as JMeter's HttpClient sends it) and OPTIONS, encoded
// or not as each says, in a form body of a POST (a value JMeter takes as
// encoded decoded first); a path without its leading / given one; the
// host, port and protocol of the sampler over the defaults'.
func TestConvertRequests(t *testing.T) {
	raw := func(name, v string) string {
		return `<elementProp name="HTTPsampler.Arguments" elementType="Arguments"><collectionProp name="Arguments.arguments"><elementProp name=` +
			fmt.Sprintf("%q", name) + ` elementType="HTTPArgument">` + sp("Argument.name", name) + sp("Argument.value", v) + bp("HTTPArgument.always_encode", false) +
			`</elementProp></collectionProp></elementProp>`
	}
	headers := func(kv ...string) string {
		var b strings.Builder
		b.WriteString(`<collectionProp name="HeaderManager.headers">`)
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(&b, `<elementProp name="" elementType="Header">%s%s</elementProp>`, sp("Header.name", kv[i]), sp("Header.value", kv[i+1]))
		}
		b.WriteString(`</collectionProp>`)
		return el("HeaderManager", "headers", b.String())
	}
	jmx := testPlan("requests", udv("q", "a b"), 1,
		req("text", "POST", "/text", rawBody(`{"a":1}`)),
		req("json", "PUT", "/json", rawBody(`{"a":1}`), headers("Content-Type", "application/json")),
		req("options", "OPTIONS", "/opt", args("x", "1 2")),
		req("delete", "DELETE", "/del?k=v", args("x", "1")),
		req("encoded", "GET", "/enc", args("q", "${q}", "s", "a/b")),
		req("as is", "GET", "/raw", raw("p", "a%2Fb")),
		req("form", "POST", "/form", raw("f", "a%20b+c")+sp("HTTPSampler.contentEncoding", "utf-8")),
		req("empty form", "POST", "/empty", ""),
		req("no slash", "GET", "relative", ""),
		req("other port", "GET", "/port", sp("HTTPSampler.domain", "localhost")+sp("HTTPSampler.port", "${__P(port,1)}")),
	)
	res, got := runJMX(t, jmx, nil)
	type sent struct{ req, ctype, body string }
	want := []sent{
		{"POST /text", "text/plain; charset=UTF-8", `{"a":1}`},
		{"PUT /json", "application/json", `{"a":1}`},
		{"OPTIONS /opt?x=1+2", "", ""},
		{"DELETE /del?k=v&x=1", "application/x-www-form-urlencoded; charset=UTF-8", "x=1"},
		{"GET /enc?q=a+b&s=a%2Fb", "", ""},
		{"GET /raw?p=a%2Fb", "", ""},
		{"POST /form", "application/x-www-form-urlencoded; charset=UTF-8", "f=a+b+c"},
		{"POST /empty", "application/x-www-form-urlencoded; charset=UTF-8", ""},
		{"GET /relative", "", ""},
		{"GET /port", "", ""},
	}
	var seen []sent
	for i := range got.reqs {
		seen = append(seen, sent{got.reqs[i], got.headers[i].Get("Content-Type"), got.bodies[i]})
	}
	if !slices.Equal(seen, want) {
		t.Errorf("the server saw\n%q, want\n%q\n%s", seen, want, res.Plan)
	}
	if !strings.Contains(string(res.Plan), "url: http://localhost:${port}/port") {
		t.Errorf("the sampler's host is not its URL's:\n%s", res.Plan)
	}
}

// Two samplers of one name in a thread group are one label in JMeter:
// the same request twice is one fragment used twice (one operation, as
// JMeter counts it), two requests are NAME and NAME (2), said.
func TestConvertSameNames(t *testing.T) {
	jmx := testPlan("names", "", 2,
		get("home", "/home"), get("item", "/item/1"), get("home", "/home"), get("item", "/item/2"))
	res, got := runJMX(t, jmx, nil)
	want := []string{"/home", "/item/1", "/home", "/item/2"}
	want = append(want, want...)
	if !slices.Equal(paths(got.reqs), want) {
		t.Errorf("the server saw %q, want %q", paths(got.reqs), want)
	}
	if got.ops["home"].Count != 4 || got.ops["item"].Count != 2 || got.ops["item (2)"].Count != 2 {
		t.Errorf("home %d, item %d, item (2) %d: want 4, 2, 2\n%s", got.ops["home"].Count, got.ops["item"].Count, got.ops["item (2)"].Count, res.Plan)
	}
	if !hasNote(res, "item", `perflab keeps them apart as "item (2)"`) {
		t.Errorf("the renamed sampler is not said: %q", res.Skipped)
	}
}

// A path that is a variable is the request's path whether its value
// starts with a / or not, as JMeter starts it with one; the spaces that
// end a path are sent, as JMeter sends them.
func TestConvertPaths(t *testing.T) {
	jmx := testPlan("paths", udv("p", "/from-udv"), 1,
		el("JSR223Sampler", "set q", sp("scriptLanguage", "groovy")+sp("script", `vars.put("q", "no-slash?x=1")`)),
		get("udv", "${p}"),
		get("script", "${q}"),
		get("spaces", "/items/${p}  "),
	)
	res, got := runJMX(t, jmx, nil)
	want := []string{"GET /from-udv", "GET /no-slash?x=1", "GET /items//from-udv%20%20"}
	if !slices.Equal(got.reqs, want) {
		t.Errorf("the server saw %q, want %q\n%s", got.reqs, want, res.Plan)
	}
}
