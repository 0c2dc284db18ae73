package http

import (
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// A form: body goes as browsers and JMeter send it, on every engine: its
// fields in order, each name and value (placeholders filled in) encoded
// as a form's (a space as +, & = ~ and bytes beyond ASCII as %XX, *
// kept), with the form's content type unless the step gives its own.
func TestFormBodyOnEverySender(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	p, err := plan.Parse([]byte("target: "+srv.URL+`
vars: {v: "Street 1&x=y"}
scenarios:
  - {name: s, vus: 1, iterations: 1, flow: [
      {name: form, method: POST, url: /f, form: {a: "${v}", b: lit eral, c d: "x*~ü", e: ""}},
      {name: typed, method: POST, url: /f, headers: {Content-Type: application/x-www-form-urlencoded; charset=UTF-8}, form: {a: "${v:-none}"}},
    ]}
`), "form.yaml", plan.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{KeepAlive: true, Timeout: 5 * time.Second})
	want := []string{
		"application/x-www-form-urlencoded a=Street+1%26x%3Dy&b=lit+eral&c+d=x*%7E%C3%BC&e=",
		"application/x-www-form-urlencoded; charset=UTF-8 a=Street+1%26x%3Dy",
	}
	for _, eng := range checkSenders {
		mu.Lock()
		got = nil
		mu.Unlock()
		for i := range want {
			r, err := Compile(p.Target, nil, p.Scenarios[0].Flow[i], 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if res := eng.send(t, c, r, testenv.Vars{"v": "Street 1&x=y"}); res.Err != metrics.OK {
				t.Fatalf("%s: %s %s", eng.name, res.Err, res.Detail)
			}
		}
		mu.Lock()
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("%s: the server read %q, want %q", eng.name, got, want)
				break
			}
		}
		mu.Unlock()
	}
}

// A step gives one body: body, json and form exclude each other.
func TestFormExcludesOtherBodies(t *testing.T) {
	_, err := plan.Parse([]byte(`target: http://127.0.0.1:1
scenarios:
  - {name: s, vus: 1, iterations: 1, flow: [{name: f, method: POST, url: /f, body: x, form: {a: b}}]}
`), "form.yaml", plan.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "give one of body, json and form") {
		t.Fatalf("err = %v", err)
	}
}
