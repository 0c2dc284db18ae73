package ingest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/results"
)

// hdrHistogramJar is Java's HdrHistogram 2.2.2 from the local Maven
// repository (.ci/run fetches it).
func hdrHistogramJar(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	jar := filepath.Join(home, ".m2", "repository", "org", "hdrhistogram", "HdrHistogram", "2.2.2", "HdrHistogram-2.2.2.jar")
	if _, err := os.Stat(jar); err != nil {
		testenv.Missing(t, "Java's HdrHistogram 2.2.2 is not in the local Maven repository (mvn dependency:get -Dartifact=org.hdrhistogram:HdrHistogram:2.2.2; .ci/run does)")
	}
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" is not installed")
		}
	}
	return jar
}

// A log written by Java's HdrHistogram (the reference implementation)
// imports with each tag's count, p50, p99 and maximum as Java computes
// them, exactly, and an interval of the run per interval of the log.
func TestImportJavaHdrLog(t *testing.T) {
	jar := hdrHistogramJar(t)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "hdrlog", "WriteLog.java"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "WriteLog.java"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		c := exec.Command(name, args...)
		c.Dir = dir
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run("javac", "-cp", jar, "-d", ".", "WriteLog.java")
	java := run("java", "-cp", jar+string(os.PathListSeparator)+".", "WriteLog", "out.hlog")
	f, err := os.Open(filepath.Join(dir, "out.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, sum, err := ingest.Run(ingest.HdrLog(f, "out.hlog", time.Microsecond), "hdr", "out.hlog", ingest.Options{Out: t.TempDir(), Interval: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]results.Operation{}
	for _, op := range sum.Stages[0].Operations {
		ops[op.Name] = op
	}
	lines := strings.Split(strings.TrimSpace(java), "\n")
	if len(lines) != 2 || len(ops) != 2 {
		t.Fatalf("Java printed %q; the run has %d operations", java, len(ops))
	}
	for _, l := range lines {
		f := strings.Fields(l)
		var v [4]float64
		for i := range v {
			n, _ := strconv.ParseInt(f[i+1], 10, 64)
			v[i] = float64(n)
		}
		op := ops[f[0]]
		got := [4]float64{float64(op.Count), op.Latency.P50 * 1000, op.Latency.P99 * 1000, op.Latency.Max * 1000}
		// The run's max is the largest value recorded, as the log has it
		// (the bucket's lowest); Java's is the bucket's highest.
		if got[0] != v[0] || got[1] != v[1] || got[2] != v[2] || got[3] > v[3] || got[3] < v[3]*0.999 || op.Errors.Total != 0 {
			t.Errorf("%s: count, p50, p99, max (µs) %v; Java's %v", f[0], got, v)
		}
	}
	rd, err := results.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	ivs := rd.IntervalsOf(1, results.Operation{Scenario: "log", Name: "GET_item", Kind: "step"})
	if len(ivs) != 10 || ivs[0].Count != 500 || ivs[9].EndMs-ivs[0].StartMs != 10_000 {
		t.Errorf("%d intervals of GET_item (want 10 of 500, over 10 s)", len(ivs))
	}
}
