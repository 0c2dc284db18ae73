// Package jmetertest runs real JMeter 5.6.3 in tests: Maven (offline; .ci/run
// fetches JMeter with the jmeter-maven-plugin) runs a test plan of
// ingest/testdata/jmeter against a local server.
package jmetertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testenv"
)

// Project is the Maven project that runs JMeter: its pom.xml and its
// plans under src/test/jmeter.
func Project() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "ingest", "testdata", "jmeter")
}

// Run runs JMeter on the project's plan jmx against url (http://HOST:PORT),
// writing its results as format (csv or xml), with Maven properties
// (name=value: loops=150), and returns the result file and JMeter's log.
func Run(t testing.TB, url, jmx, format string, props ...string) (results, log string) {
	t.Helper()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		testenv.Missing(t, "mvn is not installed: the test runs JMeter with Maven")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(Project())); err != nil {
		t.Fatal(err)
	}
	port := url[strings.LastIndex(url, ":")+1:]
	args := []string{"-o", "-q", "-B", "verify", "-Dtarget.port=" + port, "-Djtl.format=" + format, "-Djmx=" + jmx}
	for _, p := range props {
		args = append(args, "-D"+p)
	}
	cmd := exec.Command(mvn, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "offline") {
			testenv.Missing(t, "JMeter is not in the local Maven repository: .ci/run fetches it (mvn -f ingest/testdata/jmeter/pom.xml verify)")
		}
		t.Fatalf("mvn: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "target", "jmeter", "results", "*"))
	logs, _ := filepath.Glob(filepath.Join(dir, "target", "jmeter", "logs", "*.log"))
	if len(files) != 1 || len(logs) != 1 {
		t.Fatalf("JMeter wrote results %v, logs %v", files, logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	return files[0], string(b)
}
