// Package wstest runs the WebSocket server of perflab's tests, on
// Python's websockets (an implementation perflab's authors did not
// write; .ci/run installs websockets 17.4 with pip): protocol/ws/testdata/
// server.py on 127.0.0.1.
package wstest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
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
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed: the WebSocket tests' server runs on it")
	}
	if err := exec.Command(py, "-c", "import websockets").Run(); err != nil {
		testenv.Missing(t, "Python's websockets is not installed (pip install websockets==17.4)")
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "protocol", "ws", "testdata", "server.py")
	cmd := exec.Command(py, script, "600", strconv.Itoa(rate))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		port, ok := strings.CutPrefix(l, "PORT ")
		if !ok {
			t.Fatalf("the WebSocket server did not start: %q\n%s", l, stderr.String())
		}
		return &Server{URL: "ws://127.0.0.1:" + port, port: port, t: t}
	case <-time.After(60 * time.Second):
		t.Fatalf("the WebSocket server did not start in 60 s\n%s", stderr.String())
	}
	return nil
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
