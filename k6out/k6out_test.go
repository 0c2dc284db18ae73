package k6out

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/lines/linestest"
)

// points reads every point of src, or the first error.
func points(t *testing.T, src string, keep func(Metric) bool) ([]Point, *Reader, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(src), "out", keep)
	if err != nil {
		return nil, nil, err
	}
	var ps []Point
	for {
		p, err := r.Next()
		if errors.Is(err, io.EOF) {
			return ps, r, nil
		}
		if err != nil {
			return ps, r, err
		}
		ps = append(ps, p)
	}
}

// k6's lines: today's (a point's metric first), and before 0.40 (last).
const jsonLines = `{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time","thresholds":[],"submetrics":null},"metric":"http_req_duration"}
{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-26T05:59:14.611979235Z","value":41.660986,"tags":{"error_code":"1500","expected_response":"false","group":"","method":"GET","name":"http://127.0.0.1:18081/fail","proto":"HTTP/1.1","scenario":"browse","status":"500"}}}
{"metric":"http_req_waiting","type":"Point","data":{"time":"2026-11-26T05:59:14.611979235Z","value":40.1,"tags":{"metric":"a tag named metric","scenario":"browse"}}}
{"type":"Metric","data":{"name":"my_time","type":"trend","contains":"time","tainted":null,"thresholds":[],"submetrics":null},"metric":"my_time"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.625742514+02:00","value":5,"tags":null},"metric":"vus"}
{"type":"Point","data":{"time":"2017-05-09T14:34:45.239531499+02:00","value":459.865729,"tags":{"group":"::g","method":"GET","name":"http://test.k6.io/?ts=1494333285","scenario":"default","status":"200"}},"metric":"my_time"}
`

func TestJSON(t *testing.T) {
	keep := func(m Metric) bool { return m.Name == "http_req_duration" || m.Time() && !Builtin(m.Name) }
	ps, r, err := points(t, jsonLines, keep)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || r.Format() != "json" {
		t.Fatalf("%+v", ps)
	}
	p := ps[0]
	want := Tags{Name: "http://127.0.0.1:18081/fail", Method: "GET", Status: "500", Scenario: "browse", ExpectedResponse: "false", ErrorCode: "1500"}
	if p.Metric != "http_req_duration" || p.Value != 41.660986 || p.Tags != want || p.Line != 2 ||
		!p.Time.Equal(time.Date(2026, 11, 26, 5, 59, 14, 611979235, time.UTC)) {
		t.Errorf("%+v", p)
	}
	if p := ps[1]; p.Metric != "my_time" || p.Value != 459.865729 || p.Tags.Group != "::g" || p.Line != 6 || !r.Metric("my_time").Time() {
		t.Errorf("%+v %+v", p, r.Metric("my_time"))
	}
	if s := r.Skipped(); s["http_req_waiting"] != 1 || s["vus"] != 1 || len(s) != 2 {
		t.Errorf("skipped %v", s)
	}
}

// Bad files: each error names the file and the line.
func TestJSONErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"truncated", jsonLines + `{"metric":"vus","type":"Point","data":{"time":"2026-11-26T05:59:14Z","va`, "out:7: not a line of k6's JSON output"},
		{"summary", "{\n    \"root_group\": {}\n}\n", "out:1: k6's end-of-test summary"},
		{"handleSummary", `{"root_group":{},"metrics":{}}` + "\n", "out:1: k6's end-of-test summary"},
		{"type", `{"type":"Sample","metric":"x"}` + "\n", `out:1: type "Sample"`},
		{"no value", `{"type":"Point","metric":"x","data":{"time":"2026-11-26T05:59:14Z"}}` + "\n", "out:1: a point of x without its value"},
		{"no time", `{"type":"Point","metric":"x","data":{"value":1}}` + "\n", "out:1: a point of x without its time"},
		{"csv header", "a,b\n1,2\n", "out:1: no metric_name column"},
		{"csv cut", csvLines + "http_req_duration,1795672754,4.04", "out:5: the last line has no line end: the file is cut short"},
		{"csv cut in its last field", csvLines + "http_req_duration,1795672754,4.04,,,,true,,GET,a,HTTP/1.1,browse,,200,,,a,,", "out:5: the last line has no line end"},
		{"csv fewer fields", csvLines + "http_req_duration,1795672754,4.04\n", "out:5: 3 fields, where the header has 19"},
		{"csv time", "metric_name,timestamp,metric_value\nx,yesterday,1\n", `out:2: timestamp "yesterday"`},
		{"csv value", "metric_name,timestamp,metric_value\nx,1,fast\n", `out:2: metric_value "fast"`},
	} {
		_, _, err := points(t, c.src, nil)
		var e *Error
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &e) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := NewReader(strings.NewReader(""), "out", nil); err == nil || !strings.Contains(err.Error(), "out: empty") {
		t.Errorf("empty: %v", err)
	}
}

const csvLines = `metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata
http_reqs,1795672754,1.000000,,,,true,,GET,GET /items/{id},HTTP/1.1,browse,,200,,,GET /items/{id},,
http_req_duration,1795672754,100.879771,,request timeout,1050,false,,GET,http://127.0.0.1:18081/slow,,browse,,0,,,http://127.0.0.1:18081/slow,,
checks,1795672754,1.000000,"status, 200",,,,::g,,,,browse,,,,,,,
`

func TestCSV(t *testing.T) {
	ps, r, err := points(t, csvLines, func(m Metric) bool { return m.Name != "http_reqs" })
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || r.Format() != "csv" || r.Skipped()["http_reqs"] != 1 {
		t.Fatalf("%+v %v", ps, r.Skipped())
	}
	want := Tags{Name: "http://127.0.0.1:18081/slow", Method: "GET", Status: "0", Scenario: "browse", ExpectedResponse: "false", ErrorCode: "1050", Error: "request timeout"}
	if p := ps[0]; p.Metric != "http_req_duration" || p.Value != 100.879771 || p.Tags != want || p.Line != 3 || p.Time.Unix() != 1795672754 {
		t.Errorf("%+v", p)
	}
	if p := ps[1]; p.Tags.Check != "status, 200" || p.Tags.Group != "::g" || p.Line != 4 {
		t.Errorf("%+v", p)
	}
	// k6's time formats (K6_CSV_TIME_FORMAT).
	at := time.Date(2026, 11, 26, 5, 59, 14, 123456789, time.UTC)
	for s, want := range map[string]time.Time{
		"1795672754": at.Truncate(time.Second), "1795672754123": at.Truncate(time.Millisecond),
		"1795672754123456": at.Truncate(time.Microsecond), "1795672754123456789": at,
		"2026-11-26T05:59:14.123456789Z": at,
	} {
		if got, err := csvTime(s); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v, want %v", s, got, err, want)
		}
	}
}

// A 300 MB line, of JSON or CSV, is refused with its line once
// lines.MaxLine (16 MiB) of it is read; a name tag over lines.MaxName
// (64 KiB) is refused as a name.
func TestLongLinesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		src  *linestest.Endless
		want string
	}{
		{"json", &linestest.Endless{Head: jsonLines + `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-26T05:59:14Z","value":1,"tags":{"name":"`, C: 'x', N: 300 << 20, Tail: "\"}}}\n"},
			"out:7: a line longer than 16 MiB: lines are limited to 16 MiB (lines.MaxLine)"},
		{"csv", &linestest.Endless{Head: csvLines + "http_req_duration,1795672754,4.04,,,,true,,GET,", C: 'x', N: 300 << 20, Tail: ",HTTP/1.1,browse,,200,,,a,,\n"},
			"out:5: a line longer than 16 MiB"},
	} {
		r, err := NewReader(c.src, "out", nil)
		linestest.Refused(t, c.name, c.src, func() error {
			if err == nil {
				_, err = r.Next()
			}
			return err
		}, c.want)
	}
	name := strings.Repeat("n", 65<<10)
	for format, src := range map[string]string{
		"json": `{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-26T05:59:14Z","value":1,"tags":{"name":"` + name + `"}}}` + "\n",
		"csv":  csvLines + "http_req_duration,1795672754,4.04,,,,true,,GET," + name + ",HTTP/1.1,browse,,200,,,a,,\n",
	} {
		_, _, err := points(t, src, nil)
		if err == nil || !strings.HasSuffix(err.Error(), ": a name tag of 65.0 KiB: names (labels, threads, k6's name, scenario, group and check tags) are limited to 64 KiB (lines.MaxName)") {
			t.Errorf("%s: %v", format, err)
		}
	}
}
