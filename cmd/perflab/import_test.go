package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/k6test"
)

// writeJTL writes a JMeter CSV result file: 2 threads of group users
// calling "GET item" for 60 s, its latency around base ms.
func writeJTL(t *testing.T, path string, base int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	start := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Hour).UnixMilli()
	for th := 1; th <= 2; th++ {
		for at := start; at < start+60_000; {
			ms := base + r.IntN(base/2)
			fmt.Fprintf(&b, "%d,%d,GET item,200,OK,users 1-%d,text,true,,113,122,2,2,http://127.0.0.1/item,%d,0,1\n", at, ms, th, ms)
			at += int64(ms) + 10
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// JMeter results imported as two releases compare like perflab's own runs;
// a file that cannot be read leaves no run behind.
func TestImportJMeterAndCompare(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "h.db"), filepath.Join(dir, "runs")
	a, b := filepath.Join(dir, "a.jtl"), filepath.Join(dir, "b.jtl")
	writeJTL(t, a, 20, 1)
	writeJTL(t, b, 40, 2)
	for _, f := range []struct{ file, release string }{{a, "A"}, {b, "B"}} {
		code, stdout, errs := runCLI(t, "import", "--from", "jmeter", f.file, "--store", db, "--out", out, "--label", "release="+f.release, "--interval", "5s")
		if code != exitOK || !strings.Contains(stdout, "imported "+f.file+" as run ") {
			t.Fatalf("import %s: %d\n%s%s", f.file, code, stdout, errs)
		}
	}
	code, cmp, errs := runCLI(t, "compare", "--store", db, "release=A", "release=B")
	if code != exitOK || !strings.Contains(cmp, "GET item") || !strings.Contains(cmp, "slower") {
		t.Errorf("compare: %d %s\n%s", code, errs, cmp)
	}
	code, listed, _ := runCLI(t, "runs", "--store", db)
	if code != exitOK || strings.Count(listed, "completed") != 2 {
		t.Errorf("runs:\n%s", listed)
	}
	// A file cut short: an error naming its line, and nothing recorded.
	bad := filepath.Join(dir, "bad.jtl")
	src, _ := os.ReadFile(a)
	os.WriteFile(bad, append(src, []byte("1795664773600,3x,GET item,200,OK,users 1-1,text,true,,113,122,2,2,u,1,0,1\n")...), 0o644)
	code, _, errs = runCLI(t, "import", "--from", "jmeter", bad, "--store", db, "--out", out)
	if code == exitOK || !strings.Contains(errs, fmt.Sprintf("bad.jtl:%d: elapsed \"3x\"", strings.Count(string(src), "\n")+1)) {
		t.Errorf("a bad file: %d %s", code, errs)
	}
	if code, listed, _ := runCLI(t, "runs", "--store", db); code != exitOK || strings.Count(listed, "completed") != 2 {
		t.Errorf("after the bad file:\n%s", listed)
	}
	if runs, _ := os.ReadDir(out); len(runs) != 2 { // the two runs' directories, no more
		names := []string{}
		for _, r := range runs {
			names = append(names, r.Name())
		}
		t.Errorf("under %s: %v", out, names)
	}
}

// A real k6 run's results, its JSON gzipped (as k6 writes json=FILE.gz)
// and its CSV, imported as two runs: they compare as the same; a file
// cut short or k6's end-of-test summary leaves no run behind.
func TestImportK6AndCompare(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/fail":
			w.WriteHeader(http.StatusInternalServerError)
		case r.URL.Path == "/slow":
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
			}
		}
	}))
	defer ts.Close()
	k6 := k6test.Run(t, "shop.js", "BASE="+ts.URL, "CLOSED=9")
	dir := t.TempDir()
	db, out := filepath.Join(dir, "h.db"), filepath.Join(dir, "runs")
	src, err := os.ReadFile(filepath.Join(k6, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "out.json.gz")
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(src)
	zw.Close()
	os.WriteFile(gz, b.Bytes(), 0o644)
	for _, f := range []struct {
		file, release string
		args          []string
	}{{gz, "json", nil}, {filepath.Join(k6, "out.csv"), "csv", []string{"--times", "cart_time"}}} {
		args := append([]string{"import", "--from", "k6", f.file, "--store", db, "--out", out, "--label", "release=" + f.release}, f.args...)
		code, stdout, errs := runCLI(t, args...)
		if code != exitOK || !strings.Contains(stdout, "imported "+f.file+" as run ") {
			t.Fatalf("import %s: %d\n%s%s", f.file, code, stdout, errs)
		}
	}
	code, cmp, errs := runCLI(t, "compare", "--store", db, "release=json", "release=csv")
	if code != exitOK || !strings.Contains(cmp, "GET /items/{id}") || !strings.Contains(cmp, "cart_time") || strings.Contains(cmp, "slower") || strings.Contains(cmp, "faster") {
		t.Errorf("compare: %d %s\n%s", code, errs, cmp)
	}
	// A file cut short in its last line, and k6's summary: errors that
	// name the line, and nothing recorded.
	cut := filepath.Join(dir, "cut.json")
	os.WriteFile(cut, src[:len(src)-20], 0o644)
	lines := bytes.Count(src, []byte("\n"))
	for file, want := range map[string]string{
		cut:                               fmt.Sprintf("cut.json:%d: not a line of k6's JSON output", lines),
		filepath.Join(k6, "summary.json"): "summary.json:1: k6's end-of-test summary",
	} {
		code, _, errs := runCLI(t, "import", "--from", "k6", file, "--store", db, "--out", out)
		if code == exitOK || !strings.Contains(errs, want) {
			t.Errorf("%s: %d %s, want %q", file, code, errs, want)
		}
	}
	if runs, _ := os.ReadDir(out); len(runs) != 2 {
		t.Errorf("under %s: %d runs, want 2", out, len(runs))
	}
}

// A JTL cut short in its last line, one with a 300 MB line (a sparse
// file: its hole reads as NULs), a k6 stream of the same, and a file
// imported twice (the history refuses the second) are each refused with
// the file and line, and leave no run directory and no history entry.
func TestImportRefusedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	db, out := filepath.Join(dir, "h.db"), filepath.Join(dir, "runs")
	good := filepath.Join(dir, "good.jtl")
	writeJTL(t, good, 20, 1)
	if code, stdout, errs := runCLI(t, "import", "--from", "jmeter", good, "--store", db, "--out", out); code != exitOK {
		t.Fatalf("import: %d\n%s%s", code, stdout, errs)
	}
	src, _ := os.ReadFile(good)
	lines := strings.Count(string(src), "\n")
	cut := filepath.Join(dir, "cut.jtl")
	os.WriteFile(cut, src[:len(src)-2], 0o644) // a Connect of 1 cut to nothing, and no line end
	huge := filepath.Join(dir, "huge.jtl")
	os.WriteFile(huge, src[:bytes.IndexByte(src, '\n')+1], 0o644)
	os.Truncate(huge, 300<<20)
	k6huge := filepath.Join(dir, "huge.json")
	os.WriteFile(k6huge, []byte(`{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time"},"metric":"http_req_duration"}`+"\n"), 0o644)
	os.Truncate(k6huge, 300<<20)
	for _, c := range []struct{ from, file, want string }{
		{"jmeter", cut, fmt.Sprintf("cut.jtl:%d: the last line has no line end: the file is cut short", lines)},
		{"jmeter", huge, "huge.jtl:2: a line longer than 16 MiB: lines are limited to 16 MiB"},
		{"k6", k6huge, "huge.json:2: a line longer than 16 MiB"},
		{"jmeter", good, "already in the history"},
		{"jmeter", "/dev/zero", "/dev/zero is a character device, not a regular file"},
	} {
		code, stdout, errs := runCLI(t, "import", "--from", c.from, c.file, "--store", db, "--out", out)
		if code == exitOK || !strings.Contains(errs, c.want) {
			t.Errorf("%s: %d %q, want %q\n%s", c.file, code, errs, c.want, stdout)
		}
		if code, listed, _ := runCLI(t, "runs", "--store", db); code != exitOK || strings.Count(listed, "completed") != 1 {
			t.Errorf("after %s:\n%s", c.file, listed)
		}
		if runs, _ := os.ReadDir(out); len(runs) != 1 { // the good run's directory, no more
			var names []string
			for _, r := range runs {
				names = append(names, r.Name())
			}
			t.Errorf("after %s, under %s: %v", c.file, out, names)
		}
	}
}
