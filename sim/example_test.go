package sim_test

import (
	"fmt"
	"io"
	"net/http"

	"github.com/perflab/perflab/sim"
)

// Serve a stub on a free loopback port, call it, and read its counters.
func Example() {
	cfg, err := sim.Parse([]byte(`
routes:
  - name: get device
    path: /devices/{id}
    headers: {Content-Type: application/json}
    body: '{"device":"${path.id}","fields":"${query.fields:-all}","n":${count}}'
    latency: {fixed: 1ms}
`), "stubs.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := sim.New(cfg, sim.WithSeed(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	for _, path := range []string{"/devices/C201-7?fields=name", "/devices/C202-1", "/nowhere"} {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			fmt.Println(err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(b))
	}
	for _, st := range srv.Stats() {
		fmt.Printf("%s: %d requests, %d injected errors\n", st.Name, st.Requests, st.InjectedErrors)
	}
	fmt.Println("unmatched:", srv.Unmatched())
	// Output:
	// 200 {"device":"C201-7","fields":"name","n":1}
	// 200 {"device":"C202-1","fields":"all","n":2}
	// 404 {"error":"no simulated route matches","method":"GET","path":"/nowhere"}
	// get device: 2 requests, 0 injected errors
	// unmatched: 1
}

func ExampleParse() {
	_, err := sim.Parse([]byte(`
routes:
  - path: /orders/{id}
    latency: {lognormal: {p50: 20ms, p99: 10ms}}
`), "stubs.yaml")
	fmt.Println(err)
	// Output:
	// stubs.yaml: line 3: route "GET /orders/{id}": latency: lognormal needs 0 < p50 < p99, got p50 20ms, p99 10ms
}
