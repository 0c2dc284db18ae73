//go:build linux

package ws_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	pws "github.com/perflab/perflab/protocol/ws"
	"github.com/perflab/perflab/tmpl"
)

// Out of file descriptors, a ws step's connection fails as
// generator_limit, its opening and the step alike, never as connect or
// other: the generator's own limit. With descriptors again, the step
// opens its connection and has its echo. The test runs in a process of
// its own, whose descriptors it uses up.
func TestOutOfDescriptorsIsGeneratorLimit(t *testing.T) {
	if !testenv.InChild(t) {
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			kind, msg, err := c.ReadMessage()
			if err != nil || c.WriteMessage(kind, msg) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	text := func(s string) *plan.Text { return &plan.Text{T: tmpl.MustParse(s)} }
	step, err := pws.Compile(&plan.Step{Name: "echo", WS: &plan.WSStep{
		URL: text("ws://" + strings.TrimPrefix(srv.URL, "http://") + "/"), Send: text("hi"), Await: &plan.WSAwait{Timeout: plan.Duration{D: 5 * time.Second}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	conns := pws.NewConns(pws.NewDialer(nil, 5*time.Second))
	defer conns.Close()
	release := testenv.ExhaustFiles(t)
	res := step.Do(context.Background(), conns, testenv.Vars{})
	release()
	if !res.Dialed || res.ConnectErr != metrics.GeneratorLimit || res.Err != metrics.GeneratorLimit {
		t.Errorf("out of descriptors: dialed %v, opening %s, step %s (%s); want generator_limit both", res.Dialed, res.ConnectErr, res.Err, res.Detail)
	}
	if res := step.Do(context.Background(), conns, testenv.Vars{}); res.Err != metrics.OK {
		t.Errorf("descriptors released: %s (%s)", res.Err, res.Detail)
	}
}
