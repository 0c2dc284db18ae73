// Package k6test runs real k6 in tests: the binary .ci/run builds with
// `go install go.k6.io/k6@v1.1.0` (named by PERFLAB_TEST_K6), or k6 on
// the PATH, on a script of ingest/testdata/k6 against a local server.
package k6test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// Script is a script of ingest/testdata/k6.
func Script(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "ingest", "testdata", "k6", name)
}

// Binary is the k6 to run.
func Binary(t testing.TB) string {
	t.Helper()
	if k6 := os.Getenv("PERFLAB_TEST_K6"); k6 != "" {
		return k6
	}
	k6, err := exec.LookPath("k6")
	if err != nil {
		testenv.Missing(t, "k6 is not installed and PERFLAB_TEST_K6 is not set: .ci/run builds it with go install go.k6.io/k6@v1.1.0")
	}
	return k6
}

// Run runs k6 on script with the environment variables env (NAME=value,
// read by the script as __ENV.NAME), writing its results as JSON and CSV
// and its end-of-test summary, and returns the directory that holds
// out.json, out.csv and summary.json.
func Run(t testing.TB, script string, env ...string) string {
	t.Helper()
	k6 := Binary(t)
	dir := t.TempDir()
	args := []string{"run", "--quiet", "--no-color", "--out", "json=" + filepath.Join(dir, "out.json"), "--out", "csv=" + filepath.Join(dir, "out.csv"),
		"--summary-export", filepath.Join(dir, "summary.json")}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	cmd := exec.Command(k6, append(args, Script(script))...)
	cmd.Env = append(os.Environ(), "K6_NO_USAGE_REPORT=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6: %v\n%s", err, out)
	}
	return dir
}
