// Package wstest runs the WebSocket server of perflab's tests, on
// Python's websockets (an implementation perflab's authors did not
// write; .ci/run installs websockets 17.4 with pip): protocol/ws/testdata/
// server.py on 127.0.0.1.
package wstest

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/perflab/perflab/internal/pyserver"
)

// Server is a running test server.
type Server struct {
	// URL is ws://127.0.0.1:PORT.
	URL  string
	port string
	t    testing.TB
}

// Start starts the server for the test's time (at most 10 minutes),
// broadcasting on /feed rate messages a second.
func Start(t testing.TB, rate int) *Server {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "protocol", "ws", "testdata", "server.py")
	port := pyserver.Start(t, "websockets", "pip install websockets==17.4", script, "600", strconv.Itoa(rate))
	return &Server{URL: "ws://127.0.0.1:" + port, port: port, t: t}
}

// Counts are what the server counted: connections, received, sent.
func (s *Server) Counts() map[string]int64 {
	s.t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + s.port + "/counts")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]int64{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		s.t.Fatal(err)
	}
	return out
}
