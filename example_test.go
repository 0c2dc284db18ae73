package perflab_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"

	"github.com/perflab/perflab"
)

// A plan whose steps are all Go functions: each VU creates an order, keeps
// its id in a variable, and reads it back.
func Example() {
	p, err := perflab.ParsePlan([]byte(`
name: orders-embedded
scenarios:
  - name: orders
    vus: 4
    iterations: 25
    flow:
      - call: create order
      - call: read order
`), "orders.yaml")
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	orders := map[string]bool{}
	dir, _ := os.MkdirTemp("", "perflab-example")
	defer os.RemoveAll(dir)
	res, err := perflab.Run(context.Background(), p, perflab.Options{
		Out: dir,
		Steps: map[string]perflab.StepFunc{
			"create order": func(ctx context.Context, vu *perflab.VU) error {
				id := fmt.Sprintf("o-%d-%d", vu.ID(), vu.Iteration())
				mu.Lock()
				orders[id] = true
				mu.Unlock()
				vu.SetVar("order", id) // for the VU's later steps, as ${order}
				return nil
			},
			"read order": func(ctx context.Context, vu *perflab.VU) error {
				id, _ := vu.Var("order")
				mu.Lock()
				defer mu.Unlock()
				if !orders[id] {
					return errors.New("no order " + id)
				}
				return nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, op := range res.Summary.Stages[0].Operations {
		fmt.Println(op.Name, op.Kind, op.Count, "errors:", op.Errors.Total)
	}
	fmt.Println("outcome completed:", res.Outcome == perflab.Completed)
	// Output:
	// create order step 100 errors: 0
	// read order step 100 errors: 0
	// orders scenario 100 errors: 0
	// outcome completed: true
}

// The same plan twice: its step sent over HTTP (remote), then bound to the
// Go function the HTTP handler calls (embedded). Both runs go to one run
// history, labelled, for `perflab compare --store DIR/perflab.db
// mode=remote mode=embedded`.
func Example_embeddedBesideRemote() {
	lookup := func(id string) error { // the service's own API
		if id == "" {
			return errors.New("no id")
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := lookup(r.URL.Query().Get("id")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	p, err := perflab.ParsePlan([]byte(`
name: lookup
target: `+srv.URL+`
scenarios:
  - {name: lookups, vus: 2, iterations: 50, flow: [{name: get item, url: "/items?id=${vu}-${iteration}"}]}
`), "lookup.yaml")
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "perflab-example")
	defer os.RemoveAll(dir)
	for _, mode := range []string{"remote", "embedded"} {
		o := perflab.Options{Out: dir, Labels: map[string]string{"mode": mode}}
		if mode == "embedded" {
			o.Steps = map[string]perflab.StepFunc{"get item": func(ctx context.Context, vu *perflab.VU) error {
				return lookup(fmt.Sprintf("%d-%d", vu.ID(), vu.Iteration()))
			}}
		}
		res, err := perflab.Run(context.Background(), p, o)
		if err != nil {
			log.Fatal(err)
		}
		op := res.Summary.Stages[0].Operations[0]
		fmt.Println(mode, op.Name, op.Count, "errors:", op.Errors.Total)
	}
	// Output:
	// remote get item 100 errors: 0
	// embedded get item 100 errors: 0
}
