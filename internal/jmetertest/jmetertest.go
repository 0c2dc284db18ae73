// Package jmetertest runs real JMeter 5.6.3 in tests: Maven (offline; .ci/run
// fetches JMeter with the jmeter-maven-plugin) runs a test plan of
// ingest/testdata/jmeter against a local server (Run), or lays JMeter out
// once to run any plan with its data files and properties (Install).
package jmetertest

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

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

// JMeter is an installation of JMeter 5.6.3 that runs any test plan.
type JMeter struct {
	jar string // bin/ApacheJMeter-5.6.3.jar
}

// Install lays JMeter 5.6.3 out from the local Maven repository, as the
// project's plugin does before a run (its configure goal, bound to
// compile), in a directory of t's: one installation serves every plan t
// and its subtests run, each started in a few seconds without Maven.
func Install(t testing.TB) *JMeter {
	t.Helper()
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		testenv.Missing(t, "mvn is not installed: the test installs JMeter with Maven")
	}
	if _, err := exec.LookPath("java"); err != nil {
		testenv.Missing(t, "java is not installed: the test runs JMeter")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(Project())); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mvn, "-o", "-q", "-B", "compile")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "offline") {
			testenv.Missing(t, "JMeter is not in the local Maven repository: .ci/run fetches it (mvn -f ingest/testdata/jmeter/pom.xml verify)")
		}
		t.Fatalf("mvn: %v\n%s", err, out)
	}
	// The plugin says where it put JMeter.
	b, err := os.ReadFile(filepath.Join(dir, "target", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var config struct {
		Configurations []struct {
			JMeterDirectoryPath, RuntimeJarName string
		}
	}
	if err := json.Unmarshal(b, &config); err != nil || len(config.Configurations) != 1 {
		t.Fatalf("the plugin's config.json: %v\n%s", err, b)
	}
	c := config.Configurations[0]
	return &JMeter{jar: filepath.Join(c.JMeterDirectoryPath, "bin", c.RuntimeJarName)}
}

// RunTimeout bounds one run of a plan: a plan that does not end on its own
// fails its test rather than hanging it. The plans the tests run end in
// seconds.
const RunTimeout = 2 * time.Minute

// Run runs the test plan jmx in non-GUI mode, in its own directory (the
// files it names are found there, as JMeter finds them beside the plan),
// with the JMeter properties props (-Jname=value), and returns its results
// file (CSV, JMeter's default columns) and its log.
func (j *JMeter) Run(t testing.TB, jmx string, props map[string]string) (results, log string) {
	t.Helper()
	out := t.TempDir()
	results, logFile := filepath.Join(out, "results.jtl"), filepath.Join(out, "jmeter.log")
	args := []string{"-jar", j.jar, "-n", "-t", jmx, "-l", results, "-j", logFile,
		"-Jjmeter.save.saveservice.output_format=csv"}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		args = append(args, "-J"+k+"="+props[k])
	}
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Dir = filepath.Dir(jmx)
	outb, err := cmd.CombinedOutput()
	b, _ := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("JMeter: %v\n%s\n%s", err, outb, b)
	}
	return results, string(b)
}
