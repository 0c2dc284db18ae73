package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perflab/perflab/lab"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/store"
)

// A run's page has its Errors section: each message of its failures, as
// often as the service answered it, and its share of the step's requests.
func TestRunPageErrors(t *testing.T) {
	var served, unavailable atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%3 == 0 {
			unavailable.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.yaml")
	src := "name: errors\ntarget: " + srv.URL + "\nscenarios:\n  - {name: s, vus: 2, iterations: 15, flow: [{name: buy, url: /buy}]}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Load(path, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	res, err := lab.Run(context.Background(), p, lab.Config{Out: filepath.Join(dir, "runs"), Store: db, Progress: "none"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	resp, page := get(t, New(Options{Store: st, Version: "test"}), "/runs/"+res.RunID)
	n := unavailable.Load()
	// The row, with the message's first and last times (clock time and
	// time into the run), as the history kept them.
	row := fmt.Sprintf("<tr><td>all</td><td>buy</td><td>http_5xx</td><td>HTTP 503 Service Unavailable</td><td>%d</td><td>%.2f%%</td><td>", n, 100*float64(n)/30)
	if i := strings.Index(page, row); i < 0 || strings.Count(strings.SplitN(page[i:], "</tr>", 2)[0], " UTC (&#43;0:0") != 2 {
		t.Errorf("no first and last times after the row %s", row)
	}
	if resp.StatusCode != http.StatusOK || served.Load() != 30 || !strings.Contains(page, `<h2 id="errors">Errors</h2>`) || !strings.Contains(page, row) {
		t.Errorf("%d, %d served; want the row %s in\n%s", resp.StatusCode, served.Load(), row, page)
	}
}
