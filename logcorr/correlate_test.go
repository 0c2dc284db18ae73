package logcorr

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

// req is a request sent at atMs after t0 that took e2eMs for perflab.
func req(op, id string, atMs, e2eMs float64, ok bool) Request {
	start := t0.Add(time.Duration(atMs * float64(time.Millisecond)))
	return Request{Operation: op, ID: id, Start: start, End: start.Add(time.Duration(e2eMs * float64(time.Millisecond))), OK: ok}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// checkStats compares count, mean, p50 and max (and min when given).
func checkStats(t *testing.T, what string, got Stats, count int, mean, p50, max float64) {
	t.Helper()
	if got.Count != count || !near(got.Mean, mean) || !near(got.P50, p50) || !near(got.Max, max) {
		t.Errorf("%s: got %+v, want count %d mean %g p50 %g max %g", what, got, count, mean, p50, max)
	}
}

func op(t *testing.T, res *Result, name string) OpResult {
	t.Helper()
	for _, o := range res.Ops {
		if o.Operation == name {
			return o
		}
	}
	t.Fatalf("no operation %q in %+v", name, res.Ops)
	return OpResult{}
}

func counts(o OpResult) [5]int {
	return [5]int{o.Requests, o.Matched, o.Unmatched, o.Failed, o.Duplicates}
}

const auditLog = `2024-05-01T10:00:00.000Z 2024-05-01T10:00:00.012Z INFO audit event=ev-1 rule=r1 status=done
2024-05-01T10:00:00.001Z DEBUG something else event=ev-4 happened
2024-05-01T10:00:00.100Z 2024-05-01T10:00:00.110Z INFO audit event=ev-2 rule=r1 status=done
2024-05-01T10:00:00.200Z 2024-05-01T10:00:00.230Z INFO audit event=ev-3 rule=r2 status=done
2024-05-01T10:00:00.300Z 2024-05-01T10:00:00.399Z INFO audit event=ev-2 rule=r1 status=retried
2024-05-01T10:00:00.400Z 2024-05-01T10:00:00.403Z INFO audit event=other-1 rule=r9 status=done
2024-05-01T12:00:00.500Z 2024-05-01T12:00:00.505Z INFO audit event=u-1 rule=r3 status=done
2024-05-01T10:00:00.600Z 2024-05-01T10:00:99.999Z INFO audit event=u-2 rule=r3 status=done

garbage line
`

var auditPattern = Pattern{
	Line:       `^(?P<start>\S+) (?P<end>\S+) INFO audit event=(?P<id>\S+)`,
	TimeLayout: "2006-01-02T15:04:05.000Z07:00",
}

// auditRequests: per operation, the ids the audit log has, lacks, and
// mangles, with perflab's times.
func auditRequests() []Request {
	return []Request{
		req("create", "ev-1", 0, 20, true),    // proc 12, overhead 8
		req("create", "ev-2", 100, 30, true),  // proc 10 (a retry at 99 ms ignored), overhead 20
		req("create", "ev-3", 200, 50, true),  // proc 30, overhead 20
		req("create", "ev-4", 300, 100, true), // only in a DEBUG line: unmatched
		req("create", "ev-5", 400, 200, false),
		req("update", "u-1", 500, 15, true),  // proc 5, overhead 10
		req("update", "u-2", 600, 40, false), // unparsable end: unmatched
	}
}

func TestLinePattern(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "audit.log", auditLog)
	res, err := Correlate(auditRequests(), []Source{{Files: []string{path}, Pattern: auditPattern}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 2 || res.Ops[0].Operation != "create" || res.Ops[1].Operation != "update" {
		t.Fatalf("ops %+v", res.Ops)
	}
	c := op(t, res, "create")
	if got, want := counts(c), [5]int{5, 3, 2, 1, 1}; got != want {
		t.Errorf("create requests/matched/unmatched/failed/duplicates %v, want %v", got, want)
	}
	// Processing 12, 10, 30 ms; end-to-end 20, 30, 50 matched and 100, 200
	// unmatched; overhead 8, 20, 20.
	checkStats(t, "create processing", c.Processing, 3, 52.0/3, 12, 30)
	if c.Processing.Min != 10 || c.Processing.P95 != 30 || c.Processing.P99 != 30 {
		t.Errorf("create processing %+v", c.Processing)
	}
	checkStats(t, "create e2e matched", c.EndToEndMatched, 3, 100.0/3, 30, 50)
	checkStats(t, "create e2e unmatched", c.EndToEndUnmatched, 2, 150, 100, 200)
	checkStats(t, "create overhead", c.Overhead, 3, 16, 20, 20)

	u := op(t, res, "update")
	if got, want := counts(u), [5]int{2, 1, 1, 1, 0}; got != want {
		t.Errorf("update counts %v, want %v", got, want)
	}
	checkStats(t, "update processing", u.Processing, 1, 5, 5, 5)
	checkStats(t, "update e2e matched", u.EndToEndMatched, 1, 15, 15, 15)
	checkStats(t, "update e2e unmatched", u.EndToEndUnmatched, 1, 40, 40, 40)
	checkStats(t, "update overhead", u.Overhead, 1, 10, 10, 10)

	if res.Lines != 10 || res.LogRecords != 6 || res.LogRecordsUnmatched != 1 || res.Duplicates != 1 {
		t.Errorf("lines %d, records %d, unmatched %d, duplicates %d; want 10, 6, 1, 1", res.Lines, res.LogRecords, res.LogRecordsUnmatched, res.Duplicates)
	}
	if res.ErrorCount != 1 || len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], path+":8: end: parsing time \"2024-05-01T10:00:99.999Z\"") {
		t.Errorf("errors %d %q", res.ErrorCount, res.Errors)
	}
}

const networkLog = `2024-05-01 10:00:00.000 [net] recv id=a1 len=120
2024-05-01 10:00:00.005 [net] recv id=a2 len=80
2024-05-01 10:00:00.007 [net] sent id=a1 status=200
2024-05-01 10:00:00.008 [net] sent id=zz status=200
2024-05-01 10:00:00.009 [net] sent id=a3 status=200
2024-05-01 10:00:00.010 [net] recv id=a3 len=64
2024-05-01 10:00:00.011 [net] keepalive
2024-05-01 10:00:00.025 [net] sent id=a2 status=200
2024-05-01 10:00:00.030 [net] sent id=a3 status=500
2024-05-01 10:00:00.040 [net] recv id=a4 len=64
2024-05-01 10:00:00.050 [net] recv id=a1 len=120
2024-05-01 10:00:00.051 [net] sent id=a1 status=200
`

var networkPattern = Pattern{
	Start:      `^(?P<ts>\S+ \S+) \[net\] recv id=(?P<id>\S+)`,
	End:        `^(?P<ts>\S+ \S+) \[net\] sent id=(?P<id>\S+)`,
	TimeLayout: "2006-01-02 15:04:05.000",
	Location:   "UTC",
}

func networkRequests() []Request {
	return []Request{
		req("net", "a1", 0, 10, true),  // recv 0, sent 7: 7 ms; then a retry, a duplicate
		req("net", "a2", 5, 25, true),  // 5 → 25: 20 ms, interleaved with a1 and a3
		req("net", "a3", 9, 22, false), // an end before its start, then 10 → 30: 20 ms
		req("net", "a4", 40, 60, true), // started, never ended
		req("net", "a5", 60, 5, true),  // not in the log
	}
}

func checkNetwork(t *testing.T, res *Result) {
	t.Helper()
	n := op(t, res, "net")
	if got, want := counts(n), [5]int{5, 3, 2, 1, 1}; got != want {
		t.Errorf("net counts %v, want %v", got, want)
	}
	checkStats(t, "net processing", n.Processing, 3, 47.0/3, 20, 20)
	checkStats(t, "net e2e matched", n.EndToEndMatched, 3, 19, 22, 25)
	checkStats(t, "net e2e unmatched", n.EndToEndUnmatched, 2, 32.5, 5, 60)
	checkStats(t, "net overhead", n.Overhead, 3, 10.0/3, 3, 5)
	if res.LogRecords != 5 || res.LogRecordsUnmatched != 1 || res.Duplicates != 1 || res.UnpairedStarts != 1 || res.UnpairedEnds != 1 || res.ErrorCount != 0 {
		t.Errorf("records %d, unmatched %d, duplicates %d, unpaired starts %d, ends %d, errors %d %q; want 5, 1, 1, 1, 1, 0",
			res.LogRecords, res.LogRecordsUnmatched, res.Duplicates, res.UnpairedStarts, res.UnpairedEnds, res.ErrorCount, res.Errors)
	}
}

func TestStartEndPattern(t *testing.T) {
	path := writeFile(t, t.TempDir(), "network.log", networkLog)
	res, err := Correlate(networkRequests(), []Source{{Files: []string{path}, Pattern: networkPattern}})
	if err != nil {
		t.Fatal(err)
	}
	checkNetwork(t, res)
	if res.Lines != 12 {
		t.Errorf("lines %d, want 12", res.Lines)
	}
}

// Pairs span the files of a source (a rotated log, oldest first), and a
// glob reads its files in lexical order; gzipped files are read too.
func TestStartEndAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	lines := strings.SplitAfter(networkLog, "\n")
	writeFile(t, dir, "net-1.log", strings.Join(lines[:6], ""))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Join(lines[6:], "")))
	zw.Close()
	writeFile(t, dir, "net-2.log.gz", gz.String())
	res, err := Correlate(networkRequests(), []Source{{Files: []string{filepath.Join(dir, "net-*")}, Pattern: networkPattern}})
	if err != nil {
		t.Fatal(err)
	}
	checkNetwork(t, res)
}

func TestDurationPattern(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "rules.log", `ts=1 rule=a id=d1 took=1500
ts=2 rule=a id=d2 took=2.5ms
ts=3 rule=a id=d3 took=250
ts=4 rule=a id=d4 took=fast
ts=5 rule=a id=nobody took=1
`)
	reqs := []Request{
		req("rule", "d1", 0, 4, true),
		req("rule", "d2", 0, 4, true),
		req("rule", "d3", 0, 4, true),
		req("rule", "d4", 0, 4, true),
	}
	res, err := Correlate(reqs, []Source{{Files: []string{path}, Pattern: Pattern{
		Line:         `id=(?P<id>\S+) took=(?P<duration>\S+)`,
		DurationUnit: "us",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	r := op(t, res, "rule")
	if got, want := counts(r), [5]int{4, 3, 1, 0, 0}; got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	// 1.5, 2.5 and 0.25 ms; overhead 2.5, 1.5, 3.75.
	checkStats(t, "processing", r.Processing, 3, 4.25/3, 1.5, 2.5)
	checkStats(t, "overhead", r.Overhead, 3, 7.75/3, 2.5, 3.75)
	if res.ErrorCount != 1 || !strings.Contains(res.Errors[0], `rules.log:4: duration "fast" is neither a number nor a Go duration`) {
		t.Errorf("errors %d %q", res.ErrorCount, res.Errors)
	}
	if res.LogRecords != 4 || res.LogRecordsUnmatched != 1 {
		t.Errorf("records %d, unmatched %d", res.LogRecords, res.LogRecordsUnmatched)
	}

	// The default unit is ms.
	res, err = Correlate(reqs[2:3], []Source{{Files: []string{path}, Pattern: Pattern{Line: `id=(?P<id>\S+) took=(?P<duration>\S+)`}}})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "ms", res.Ops[0].Processing, 1, 250, 250, 250)
}

func TestUnixTimestamps(t *testing.T) {
	dir := t.TempDir()
	ms := writeFile(t, dir, "ms.log", "1714557600000 1714557600012 id=x1\n1714557600100 1714557600104.5 id=x2\n")
	reqs := []Request{req("op", "x1", 0, 20, true), req("op", "x2", 0, 20, true)}
	res, err := Correlate(reqs, []Source{{Files: []string{ms}, Pattern: Pattern{
		Line: `^(?P<start>\d+) (?P<end>[\d.]+) id=(?P<id>\w+)`, TimeLayout: "unix_ms"}}})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "unix_ms", res.Ops[0].Processing, 2, 8.25, 4.5, 12)

	s := writeFile(t, dir, "s.log", "start 1714557600.000250 x1\nend 1714557600.001000 x1\n")
	res, err = Correlate(reqs[:1], []Source{{Files: []string{s}, Pattern: Pattern{
		Start: `^start (?P<ts>\S+) (?P<id>\w+)`, End: `^end (?P<ts>\S+) (?P<id>\w+)`, TimeLayout: "unix"}}})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "unix", res.Ops[0].Processing, 1, 0.75, 0.75, 0.75)

	for _, tc := range []struct {
		in   string
		unit time.Duration
		want int64
	}{
		{"1700000000.123456789", time.Second, 1700000000123456789},
		{"1700000000.1234567891234", time.Second, 1700000000123456789},
		{"1700000000", time.Second, 1700000000000000000},
		{"1700000000123.456", time.Millisecond, 1700000000123456000},
		{"1700000000123456.7", time.Microsecond, 1700000000123456700},
		{"1700000000123456789", time.Nanosecond, 1700000000123456789},
		{".5", time.Second, 500000000},
	} {
		got, err := parseScaled([]byte(tc.in), int64(tc.unit))
		if err != nil || got != tc.want {
			t.Errorf("parseScaled(%q, %v) = %d, %v; want %d", tc.in, tc.unit, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", ".", "abc", "-5", "1.2.3", "1.5e3", "99999999999999999999"} {
		if _, err := parseScaled([]byte(bad), int64(time.Second)); err == nil {
			t.Errorf("parseScaled(%q) did not fail", bad)
		}
	}
}

// Requests sharing an id (perflab resent an event) take its records in
// turn; a layout with a time of day only crosses midnight.
func TestSharedIDsAndMidnight(t *testing.T) {
	path := writeFile(t, t.TempDir(), "svc.log", `23:59:59.990 00:00:00.010 id=s1
23:00:00.000 23:00:00.004 id=s1
23:00:00.000 23:00:00.006 id=s1
`)
	reqs := []Request{req("a", "s1", 0, 30, true), req("b", "s1", 0, 30, true)}
	res, err := Correlate(reqs, []Source{{Files: []string{path}, Pattern: Pattern{
		Line: `^(?P<start>\S+) (?P<end>\S+) id=(?P<id>\w+)`, TimeLayout: "15:04:05.000"}}})
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "a", op(t, res, "a").Processing, 1, 20, 20, 20)
	checkStats(t, "b", op(t, res, "b").Processing, 1, 4, 4, 4)
	if op(t, res, "a").Duplicates != 1 || res.Duplicates != 1 {
		t.Errorf("duplicates %+v", res)
	}

	// With a date, an end before its start is an error.
	path = writeFile(t, t.TempDir(), "svc.log", "2024-05-01T10:00:01Z 2024-05-01T10:00:00Z id=s1\n")
	res, err = Correlate(reqs, []Source{{Files: []string{path}, Pattern: Pattern{
		Line: `^(?P<start>\S+) (?P<end>\S+) id=(?P<id>\w+)`}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCount != 1 || !strings.Contains(res.Errors[0], "svc.log:1: end 2024-05-01T10:00:00Z is before start 2024-05-01T10:00:01Z") {
		t.Errorf("errors %q", res.Errors)
	}
}

// Two sources: the first record of a request wins across them.
func TestSourcesInOrder(t *testing.T) {
	dir := t.TempDir()
	audit := writeFile(t, dir, "audit.log", auditLog)
	net := writeFile(t, dir, "audit2.log", "2024-05-01T10:00:00.000Z 2024-05-01T10:00:00.001Z INFO audit event=ev-4 x\n"+
		"2024-05-01T10:00:00.000Z 2024-05-01T10:00:00.001Z INFO audit event=ev-1 x\n")
	res, err := Correlate(auditRequests(), []Source{
		{Files: []string{audit}, Pattern: auditPattern},
		{Files: []string{net}, Pattern: auditPattern},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := op(t, res, "create")
	if got, want := counts(c), [5]int{5, 4, 1, 1, 2}; got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	checkStats(t, "processing", c.Processing, 4, 53.0/4, 10, 30)
}

func TestManyErrorsKeepsFirst(t *testing.T) {
	var b strings.Builder
	for range 25 {
		b.WriteString("bad bad id=e1\n")
	}
	path := writeFile(t, t.TempDir(), "e.log", b.String())
	res, err := Correlate([]Request{req("op", "e1", 0, 1, true)}, []Source{{Files: []string{path}, Pattern: Pattern{
		Line: `^(?P<start>\S+) (?P<end>\S+) id=(?P<id>\w+)`}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorCount != 25 || len(res.Errors) != maxErrors || !strings.HasSuffix(res.Errors[9], `e.log:10: start: parsing time "bad" as "2006-01-02T15:04:05.999999999Z07:00": cannot parse "bad" as "2006"`) {
		t.Errorf("errors %d %q", res.ErrorCount, res.Errors)
	}
}

func TestPatternErrors(t *testing.T) {
	for _, tc := range []struct {
		p    Pattern
		want string
	}{
		{Pattern{}, "pattern: set line, or start and end"},
		{Pattern{Line: "x", Start: "y"}, "pattern: set either line, or start and end, not both"},
		{Pattern{Start: "y"}, "pattern: start and end go together: set both"},
		{Pattern{Line: `(?P<start>\S+) (?P<end>\S+)`}, `pattern: line regex "(?P<start>\\S+) (?P<end>\\S+)" has no (?P<id>...) group`},
		{Pattern{Line: `(?P<start>\S+) (?P<id>\S+)`}, `pattern: line regex "(?P<start>\\S+) (?P<id>\\S+)" needs (?P<start>...) and (?P<end>...) groups, or a (?P<duration>...) group`},
		{Pattern{Line: `(?P<id>\S+)`}, `needs (?P<start>...) and (?P<end>...) groups, or a (?P<duration>...) group`},
		{Pattern{Line: `(?P<id>\S+) (?P<duration>\d+) (?P<start>\S+)`}, `has both (?P<duration>...) and (?P<start>...)/(?P<end>...); use one or the other`},
		{Pattern{Line: `(?P<id>\S+`}, "pattern: line regex: error parsing regexp: missing closing ): `(?P<id>\\S+`"},
		{Pattern{Start: `(?P<id>\S+) (?P<ts>\S+)`, End: `(?P<id>\S+)`}, `pattern: end regex "(?P<id>\\S+)" needs (?P<id>...) and (?P<ts>...) groups`},
		{Pattern{Start: `(?P<ts>\S+)`, End: `(?P<id>\S+) (?P<ts>\S+)`}, `pattern: start regex "(?P<ts>\\S+)" needs (?P<id>...) and (?P<ts>...) groups`},
		{Pattern{Line: `(?P<id>\S+) (?P<duration>\d+)`, DurationUnit: "min"}, `pattern: duration_unit "min": want ms, us, ns or s`},
		{Pattern{Line: `(?P<id>\S+) (?P<duration>\d+)`, TimeLayout: "yyyy-MM-dd HH:mm:ss"}, `pattern: time_layout "yyyy-MM-dd HH:mm:ss" has no Go time elements`},
		{Pattern{Line: `(?P<id>\S+) (?P<duration>\d+)`, TimeLayout: "15:04 03"}, `pattern: time_layout "15:04 03" does not read back its own output "13:44 01" (reads it as "01:44 01")`},
		{Pattern{Line: `(?P<id>\S+) (?P<duration>\d+)`, Location: "Mars/Olympus"}, `pattern: location "Mars/Olympus": unknown time zone Mars/Olympus`},
	} {
		err := tc.p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.p, err, tc.want)
		}
	}
	for _, p := range []Pattern{auditPattern, networkPattern,
		{Line: `(?<id>\S+) (?P<duration>\d+)`, TimeLayout: "unix", DurationUnit: "s", Location: "Europe/Paris"},
		{Line: `(?P<id>\S+) (?P<start>\S+) (?P<end>\S+)`, TimeLayout: "RFC3339"},
		{Line: `(?P<id>\S+) (?P<start>\S+) (?P<end>\S+)`, TimeLayout: "Jan _2 15:04:05"},
	} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

func TestCorrelateErrors(t *testing.T) {
	dir := t.TempDir()
	log := writeFile(t, dir, "a.log", "x\n")
	missing := filepath.Join(dir, "missing.log")
	reqs := []Request{req("op", "a", 0, 1, true)}
	good := Pattern{Line: `(?P<id>\S+) (?P<duration>\d+)`}
	for _, tc := range []struct {
		src  []Source
		want string
	}{
		{nil, "no log sources"},
		{[]Source{{Pattern: good}}, "source 1: no log files"},
		{[]Source{{Files: []string{log}, Pattern: good}, {Files: []string{log}}}, "source 2: pattern: set line, or start and end"},
		{[]Source{{Files: []string{missing}, Pattern: good}}, "source 1: open " + missing + ": no such file or directory"},
		{[]Source{{Files: []string{dir}, Pattern: good}}, "source 1: " + dir + " is a directory, not a regular file"},
		{[]Source{{Files: []string{"/dev/zero"}, Pattern: good}}, "source 1: /dev/zero is a character device, not a regular file"},
		{[]Source{{Files: []string{log, filepath.Join(dir, "*.txt")}, Pattern: good}}, `source 1: glob "` + filepath.Join(dir, "*.txt") + `" matches no files`},
		{[]Source{{Files: []string{filepath.Join(dir, "[")}, Pattern: good}}, `source 1: glob "` + filepath.Join(dir, "[") + `": syntax error in pattern`},
	} {
		_, err := Correlate(reqs, tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.src, err, tc.want)
		}
	}
	// A file that cannot be read.
	if os.Getuid() != 0 {
		os.Chmod(log, 0)
		if _, err := Correlate(reqs, []Source{{Files: []string{log}, Pattern: good}}); err == nil || err.Error() != "open "+log+": permission denied" {
			t.Errorf("unreadable: %v", err)
		}
	}
	// A corrupt gzip file.
	gz := writeFile(t, dir, "b.log.gz", "this is not a gzip file\n")
	if _, err := Correlate(reqs, []Source{{Files: []string{gz}, Pattern: good}}); err == nil || err.Error() != gz+": gzip: invalid header" {
		t.Errorf("gzip: %v", err)
	}
}

func TestLongLineSkipped(t *testing.T) {
	path := writeFile(t, t.TempDir(), "long.log", "id=a took=5\n"+strings.Repeat("x", maxLine+10)+"\nid=b took=7")
	reqs := []Request{req("op", "a", 0, 10, true), req("op", "b", 0, 10, true)}
	res, err := Correlate(reqs, []Source{{Files: []string{path}, Pattern: Pattern{Line: `id=(?P<id>\w+) took=(?P<duration>\d+)`}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lines != 3 || res.Ops[0].Matched != 2 || res.ErrorCount != 1 || !strings.HasSuffix(res.Errors[0], "long.log:2: line longer than 4194304 bytes skipped") {
		t.Errorf("lines %d, matched %d, errors %q", res.Lines, res.Ops[0].Matched, res.Errors)
	}
}

func TestRequiredLiteral(t *testing.T) {
	for expr, want := range map[string]string{
		`^(?P<start>\S+) (?P<end>\S+) INFO audit event=(?P<id>\S+)`: " INFO audit event=",
		`(?i)audit id=(?P<id>\S+)`:                                  "",
		`a|b`:                                                       "",
		`id=(?P<id>\w+) took=(?P<duration>\d+)`:                     " took=",
	} {
		if got := requiredLiteral(expr); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", expr, got, want)
		}
	}
}

func TestStats(t *testing.T) {
	vals := make([]float64, 100)
	for i := range vals {
		vals[i] = float64(100 - i) // 100 … 1
	}
	s := newStats(vals)
	want := Stats{Count: 100, Mean: 50.5, Min: 1, P50: 50, P95: 95, P99: 99, Max: 100}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if s := newStats([]float64{3, 1}); s != (Stats{Count: 2, Mean: 2, Min: 1, P50: 1, P95: 3, P99: 3, Max: 3}) {
		t.Errorf("two values: %+v", s)
	}
	if s := newStats(nil); s != (Stats{}) {
		t.Errorf("none: %+v", s)
	}
}

// The example files in testdata, and the table of their correlation.
func TestTestdataTable(t *testing.T) {
	reqs, err := ReadRequestsFile("testdata/requests.csv")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Correlate(reqs, []Source{
		{Files: []string{"testdata/audit.log"}, Pattern: auditPattern},
		{Files: []string{"testdata/network.log"}, Pattern: networkPattern},
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/table.golden")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		os.WriteFile("testdata/table.golden", buf.Bytes(), 0o644)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// Many batches: pairs span batch boundaries, errors keep their line
// numbers, and the first record wins whatever the workers' scheduling.
func TestManyBatches(t *testing.T) {
	const n = 6000 // events; 2n+ lines, several batches
	var b strings.Builder
	var reqs []Request
	line := 0
	badLine := 0
	for k := range n + 3 {
		// Start of event k, then the end of event k-3: interleaved.
		if k < n {
			fmt.Fprintf(&b, "%s S id=e%d\n", t0.Add(time.Duration(k)*time.Millisecond).Format(time.RFC3339Nano), k)
			line++
			reqs = append(reqs, req("op", fmt.Sprintf("e%d", k), float64(k), 10, true))
		}
		if j := k - 3; j >= 0 {
			ts := t0.Add(time.Duration(j)*time.Millisecond + time.Duration(j%5)*time.Millisecond).Format(time.RFC3339Nano)
			if j == 4321 {
				ts, badLine = "never", line+1
			}
			fmt.Fprintf(&b, "%s E id=e%d\n", ts, j)
			line++
		}
	}
	// Retries of every event afterwards: all duplicates.
	for k := range n {
		fmt.Fprintf(&b, "%s S id=e%d\n%s E id=e%d\n", t0.Format(time.RFC3339Nano), k, t0.Format(time.RFC3339Nano), k)
	}
	path := writeFile(t, t.TempDir(), "many.log", b.String())
	res, err := Correlate(reqs, []Source{{Files: []string{path}, Pattern: Pattern{
		Start: `^(?P<ts>\S+) S id=(?P<id>\w+)`, End: `^(?P<ts>\S+) E id=(?P<id>\w+)`}}})
	if err != nil {
		t.Fatal(err)
	}
	o := res.Ops[0]
	// Event j took j%5 ms, but event 4321's end is unreadable and its retry
	// (0 ms) counts instead.
	sum := 0.0
	for j := range n {
		if j != 4321 {
			sum += float64(j % 5)
		}
	}
	if o.Matched != n || o.Duplicates != n-1 || res.Lines != int64(4*n) || res.ErrorCount != 1 {
		t.Fatalf("matched %d, duplicates %d, lines %d, errors %q", o.Matched, o.Duplicates, res.Lines, res.Errors)
	}
	checkStats(t, "processing", o.Processing, n, sum/n, 2, 4)
	if want := fmt.Sprintf("%s:%d: end: parsing time \"never\"", path, badLine); !strings.HasPrefix(res.Errors[0], want) {
		t.Errorf("error %q, want prefix %q", res.Errors[0], want)
	}
}

// A plan embeds Sources: the pattern's fields sit beside files.
func TestSourceYAMLAndJSON(t *testing.T) {
	want := Source{Files: []string{"logs/audit.log*"}, Pattern: Pattern{
		Line: `^(?P<start>\S+) (?P<end>\S+) event=(?P<id>\S+)`, TimeLayout: "unix_ms", Location: "UTC"}}
	var y Source
	err := yaml.Unmarshal([]byte(`
files: [logs/audit.log*]
line: '^(?P<start>\S+) (?P<end>\S+) event=(?P<id>\S+)'
time_layout: unix_ms
location: UTC
`), &y)
	if err != nil || !reflect.DeepEqual(y, want) {
		t.Errorf("yaml: %+v, %v", y, err)
	}
	var j Source
	err = json.Unmarshal([]byte(`{"files":["logs/audit.log*"],"line":"^(?P<start>\\S+) (?P<end>\\S+) event=(?P<id>\\S+)","time_layout":"unix_ms","location":"UTC"}`), &j)
	if err != nil || !reflect.DeepEqual(j, want) {
		t.Errorf("json: %+v, %v", j, err)
	}
	out, _ := json.Marshal(Source{Files: []string{"a.log"}, Pattern: Pattern{Start: "s", End: "e"}})
	if string(out) != `{"files":["a.log"],"start":"s","end":"e"}` {
		t.Errorf("json out %s", out)
	}
}
