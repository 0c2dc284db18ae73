package secret

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestName(t *testing.T) {
	for _, n := range []string{
		"Authorization", "proxy-authorization", "Cookie", "Set-Cookie",
		"X-Api-Key", "X-API-KEY", "api_key", "apikey", "apiKey", "key", "secret_key", "private-key",
		"token", "access_token", "X-Auth-Token", "X-CSRF-Token", "tokenValue", "oauth_token",
		"password", "X-Password", "passwd", "pwd", "passphrase", "client_secret", "X-Client-Secret",
		"auth", "X-Auth", "authToken", "credential", "credentials", "session", "session_id",
		"JSESSIONID", "PHPSESSID", "sig", "X-Hub-Signature", "keys_key",
	} {
		if !Name(n) {
			t.Errorf("Name(%q) = false, want true", n)
		}
	}
	for _, n := range []string{
		"keys", "keyspace", "keyboard", "max_tokens", "MAX_TOKENS", "tokens", "tokenizer",
		"passwords_count", "author", "AUTHOR", "sessions", "secretary", "users", "size",
		"Content-Type", "WWW-Authenticate", "design", "signal", "next", "",
	} {
		if Name(n) {
			t.Errorf("Name(%q) = true, want false", n)
		}
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://bob:s3cret@127.0.0.1:9/x":             "http://bob:[redacted]@127.0.0.1:9/x",
		"http://al%40ice:pa%3Ass@h/y?a=1":             "http://al%40ice:[redacted]@h/y?a=1",
		"https://bob@h/":                              "https://bob@h/",
		"http://h/p@x":                                "http://h/p@x", // an @ in the path is no userinfo
		"postgres://perflab:pw@db:5432/perflab":       "postgres://perflab:[redacted]@db:5432/perflab",
		"/fail?token=tok123&password=pw456&page=2":    "/fail?token=[redacted]&password=[redacted]&page=2",
		"/cb?code=1&access_token=a.b.c#frag":          "/cb?code=1&access_token=[redacted]#frag",
		"/cb#access_token=a.b.c&state=s":              "/cb#access_token=[redacted]&state=s",
		"http://u:p@h/x?api%5Fkey=k&next=http://a/":   "http://u:[redacted]@h/x?api%5Fkey=[redacted]&next=http://a/",
		"/plain?a=b&c":                                "/plain?a=b&c",
		"/login?next=http://u:p@a.example/&x=1":       "/login?next=http://u:[redacted]@a.example/&x=1",
		"http://h/a?next=" + "http%3A%2F%2Fu%3Ap%40a": "http://h/a?next=http%3A%2F%2Fu%3Ap%40a",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	in := "target: http://bob:s3cret@127.0.0.1:18091\n  - {url: \"http://al%40ice:pa%3Ass@127.0.0.1/y\"}\n  - url: /x?next=https://u:pw@a.example/\nstore: 'postgres://u:p@db/x' mailto:a@b\n"
	want := "target: http://bob:[redacted]@127.0.0.1:18091\n  - {url: \"http://al%40ice:[redacted]@127.0.0.1/y\"}\n  - url: /x?next=https://u:[redacted]@a.example/\nstore: 'postgres://u:[redacted]@db/x' mailto:a@b\n"
	if got := Text(in); got != want {
		t.Errorf("Text:\n got %q\nwant %q", got, want)
	}
}

func TestForm(t *testing.T) {
	for in, want := range map[string]string{
		"user=ann&password=s3cr%3At&remember=1": "user=ann&password=[redacted]&remember=1",
		"grant_type=password&client_secret=x":   "grant_type=password&client_secret=[redacted]",
		"a=b":                                   "a=b",
		"":                                      "",
	} {
		if got := string(Form([]byte(in))); got != want {
			t.Errorf("Form(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"user":"ann","password":"s3cr\"t","n":1}`:                     `{"user":"ann","password":"[redacted]","n":1}`,
		`{"data": {"token": 12345, "scopes": ["a"]}, "ok": true}`:       `{"data": {"token": "[redacted]", "scopes": ["a"]}, "ok": true}`,
		`{"auth": {"user": "a", "n": [1, "}"]}, "ok": true}`:            `{"auth": "[redacted]", "ok": true}`,
		`[{"api_key":null},{"access_token" : "x"}]`:                     `[{"api_key":"[redacted]"},{"access_token" : "[redacted]"}]`,
		`{"credentials":{"user":"a","pin":"1"},"password":["x","y"]}`:   `{"credentials":"[redacted]","password":"[redacted]"}`,
		`{"secret":{"a":["b"`:                                           `{"secret":"[redacted]`,
		`{"note":"the password is: hunter2","token":"abc`:               `{"note":"the password is: hunter2","token":"[redacted]`,
		`{"token":"ab\u0022c","x":"token"}`:                             `{"token":"[redacted]","x":"token"}`,
		`not json {"password":"p"}`:                                     `not json {"password":"[redacted]"}`,
		`{"max_tokens":100,"keys":["k1"]}`:                              `{"max_tokens":100,"keys":["k1"]}`,
		`{"password":` + "\n" + `  "p",` + "\n" + `  "secret": -1.5e3}`: `{"password":` + "\n" + `  "[redacted]",` + "\n" + `  "secret": "[redacted]"}`,
	} {
		if got := string(JSON([]byte(in))); got != want {
			t.Errorf("JSON(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

// Whatever a body holds, redacting it does not fail, a JSON text stays
// JSON with no secret's value left, and a form or a URL redacted again is
// as it was.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{`{"password":"p","a":[1,{"token":{"x":"}"}}]}`, `{"a":"b\"","key":1e3}`, "user=a&password=b", "http://u:p@h/x?token=t#sig=s", `["password",":"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := JSON([]byte(s))
		if json.Valid([]byte(s)) {
			var v any
			d := json.NewDecoder(bytes.NewReader(out))
			d.UseNumber()
			if err := d.Decode(&v); err != nil {
				t.Fatalf("JSON(%s) = %s: not JSON: %v", s, out, err)
			}
			if k := secretKey(v); k != "" {
				t.Fatalf("JSON(%s) = %s: %q keeps its value", s, out, k)
			}
		}
		if f := Form([]byte(s)); string(Form(f)) != string(f) {
			t.Fatalf("Form(%q) = %q, and again %q", s, f, Form(f))
		}
		if u := URL(s); URL(u) != u || Text(u) != u {
			t.Fatalf("URL(%q) = %q, and again %q", s, u, URL(u))
		}
	})
}

// secretKey is a key of a secret's name whose value is not Redacted, in
// a decoded JSON value, or "".
func secretKey(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if Name(k) && x != Redacted {
				return k
			}
			if k := secretKey(x); k != "" {
				return k
			}
		}
	case []any:
		for _, x := range v {
			if k := secretKey(x); k != "" {
				return k
			}
		}
	}
	return ""
}
