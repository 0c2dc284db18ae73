// Package pyserver runs a test server written in Python: a script that
// listens on 127.0.0.1 at a free port and prints "PORT n" first. The gRPC
// and WebSocket tests' servers run on Python's grpcio and websockets,
// implementations perflab's authors did not write.
package pyserver

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
)

// Start runs script with args for the test's time and returns the port it
// printed. imports are the Python modules it needs ("grpc, grpc_tools");
// without them the test ends through testenv.Missing, saying install.
func Start(t testing.TB, imports, install, script string, args ...string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed: the test's server runs on it")
	}
	if err := exec.Command(py, "-c", "import "+imports).Run(); err != nil {
		testenv.Missing(t, "Python's "+imports+" are not installed ("+install+")")
	}
	cmd := exec.Command(py, append([]string{script}, args...)...)
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
			t.Fatalf("%s did not start: %q\n%s", script, l, stderr.String())
		}
		return port
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start in 60 s\n%s", script, stderr.String())
	}
	return ""
}
