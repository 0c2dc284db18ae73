package http

import (
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// benchSteps are the steps the judging benchmarks send: one that only
// its status judges, and one with a JSON extraction and a JSON check of
// a 200-byte body, as most plans' steps have.
func benchSteps() map[string]*plan.Step {
	return map[string]*plan.Step{
		"plain": {Name: "g", Method: "GET", URL: text("/item/${vu}")},
		"json": {Name: "g", Method: "GET", URL: text("/item/${vu}"),
			Extract: []*plan.Extract{{Name: "id", JSON: "$.items[1].id"}},
			Check:   &plan.Check{JSON: []*plan.JSONCheck{{Path: "$.status.name", Equals: text("Open")}}}},
	}
}

const benchBody = `{"id":"c0a8","status":{"name":"Open","code":3},"items":[{"id":1,"name":"first item"},{"id":2,"name":"second item"}],"owner":{"name":"x","roles":["a","b"]},"note":"padding to about two hundred bytes"}`

// benchEachStep runs bench for each of benchSteps, compiled for a
// server that answers benchBody.
func benchEachStep(b *testing.B, bench func(b *testing.B, r *Request)) {
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, benchBody)
	}))
	b.Cleanup(srv.Close)
	for name, st := range benchSteps() {
		b.Run(name, func(b *testing.B) {
			r, err := Compile(text(srv.URL), nil, st, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			bench(b, r)
		})
	}
}

// BenchmarkDoJudged: a request on the goroutine engine (Client.Do), with
// and without extraction and checks.
func BenchmarkDoJudged(b *testing.B) {
	benchEachStep(b, func(b *testing.B, r *Request) {
		c := NewClient(Options{KeepAlive: true})
		vars := testenv.Vars{"vu": "1"}
		var s Scratch
		b.ReportAllocs()
		for b.Loop() {
			if res := c.Do(r, vars, &s); res.Err != metrics.OK {
				b.Fatal(res.Detail)
			}
		}
	})
}
