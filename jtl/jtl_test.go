package jtl

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/lines/linestest"
)

func readAll(t *testing.T, src string, o Options) ([]Sample, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(src), "results.jtl", o)
	if err != nil {
		return nil, err
	}
	var out []Sample
	for {
		s, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
}

const header = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n"

// Lines as JMeter 5.6.3 writes them (from a run of ingest's test plan).
const rows = `1795664773311,28,GET item,200,OK,users 1-3,,true,,113,122,4,4,http://127.0.0.1:18080/item,25,0,17
1795664773525,47,POST cart,500,Internal Server Error,users 1-1,,false,,132,206,4,4,http://127.0.0.1:18080/cart,47,0,0
1795664773480,91,buy,,"Number of samples in transaction : 2, number of failing samples : 1",users 1-1,,false,,245,328,4,4,null,91,2,0
1795665024767,25,GET closed port,Non HTTP response code: org.apache.http.conn.HttpHostConnectException,"Non HTTP response message: Connect to 127.0.0.1:1 [/127.0.0.1] failed: Connection refused",shoppers 1-1,text,false,,2542,0,4,4,http://127.0.0.1:1/,0,0,25
`

func TestCSV(t *testing.T) {
	for name, src := range map[string]string{"with a header": header + rows, "without": rows, "with a byte-order mark and CRLF": "\ufeff" + strings.ReplaceAll(header+rows, "\n", "\r\n")} {
		got, err := readAll(t, src, Options{})
		if err != nil || len(got) != 4 {
			t.Fatalf("%s: %d samples, %v", name, len(got), err)
		}
		s := got[0]
		if !s.Start.Equal(time.UnixMilli(1795664773311)) || s.Elapsed != 28*time.Millisecond || s.Label != "GET item" || s.Code != "200" ||
			!s.Success || s.Thread != "users 1-3" || s.Group != "users" || s.Bytes != 113 || s.Transaction || s.Line != strings.Count(src[:strings.Index(src, "1795664773311")], "\n")+1 {
			t.Errorf("%s: %+v", name, s)
		}
		if tx := got[2]; !tx.Transaction || tx.Success || tx.Label != "buy" {
			t.Errorf("%s: the transaction: %+v", name, tx)
		}
		if c := got[3]; c.Success || !strings.HasPrefix(c.Code, "Non HTTP response code") || c.Group != "shoppers" {
			t.Errorf("%s: %+v", name, c)
		}
	}
}

func TestTimeStamps(t *testing.T) {
	src := "timeStamp,elapsed,label,success\n2026/11/26 03:46:13.311,28,a,true\n"
	got, err := readAll(t, src, Options{Location: time.UTC, EndStamps: true})
	if err != nil || len(got) != 1 {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 26, 3, 46, 13, 311e6, time.UTC).Add(-28 * time.Millisecond)
	if !got[0].Start.Equal(want) {
		t.Errorf("start %v, want %v (the end stamp less the elapsed time)", got[0].Start, want)
	}
}

// Bad files are refused with the place and what is wrong; a file cut
// short gives its samples up to the cut, then the error.
func TestBadFiles(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"empty", "", "empty"},
		{"header without success", "timeStamp,elapsed,label\n1,2,a\n", "results.jtl:1: the header line has no success column"},
		{"no header, other columns", "1795664773311,28,GET item,200\n", "results.jtl:1: no header line, and 4 columns"},
		{"tabs", "timeStamp\telapsed\tlabel\tsuccess\n", "delimited by '\\t'"},
		{"bad elapsed", header + "1795664773311,2x8,a,200,OK,t 1-1,,true,,1,1,1,1,u,1,0,1\n", "results.jtl:2: elapsed \"2x8\""},
		{"bad stamp", header + "yesterday,28,a,200,OK,t 1-1,,true,,1,1,1,1,u,1,0,1\n", "results.jtl:2: time stamp \"yesterday\""},
		{"bad success", header + "1795664773311,28,a,200,OK,t 1-1,,maybe,,1,1,1,1,u,1,0,1\n", "results.jtl:2: success \"maybe\""},
		{"cut short", header + rows + "1795664773600,30,GET it", "results.jtl:6: the last line has no line end: the file is cut short"},
		{"fewer fields", header + rows + "1795664773600,30,GET it\n", "results.jtl:6: 3 fields, fewer than the header's columns"},
		{"xml cut short", xmlResults[:strings.Index(xmlResults, "<httpSample t=\"11\"")+40], "cut short"},
		{"xml not jmeter", "<html><body/></html>", "<html> where a JMeter result file has <testResults>"},
		{"xml sample without ts", `<testResults version="1.2"><httpSample t="1" s="true" lb="a"/></testResults>`, "results.jtl:1: a sample without t, ts or s"},
	} {
		got, err := readAll(t, c.src, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.name == "cut short" && len(got) != 4 {
			t.Errorf("cut short: %d samples before the error, want 4", len(got))
		}
	}
}

// What JMeter 5.6.3 writes as XML (from a run of ingest's test plan): a
// Transaction Controller that generates a parent sample holds its steps'
// samples; an HTTP sample holds its sub-results (part of it) and its
// assertions' results.
const xmlResults = `<?xml version="1.0" encoding="UTF-8"?>
<testResults version="1.2">
<sample t="43" it="0" lt="0" ct="0" ts="1795665039189" s="false" lb="browse" rc="200" rm="Number of samples in transaction : 1, number of failing samples : 1" tn="shoppers 1-2" dt="" by="126" sby="122" ng="4" na="4">
  <httpSample t="43" it="0" lt="43" ct="0" ts="1795665039189" s="false" lb="GET list" rc="200" rm="OK" tn="shoppers 1-2" dt="" by="126" sby="122" ng="4" na="4">
    <assertionResult>
      <name>listed</name>
      <failure>true</failure>
      <error>false</error>
      <failureMessage>Test failed: text expected to contain /&quot;items&quot;/</failureMessage>
    </assertionResult>
    <java.net.URL>http://127.0.0.1:18081/list</java.net.URL>
  </httpSample>
</sample>
<httpSample t="11" it="0" lt="8" ct="1" ts="1795665039107" s="true" lb="GET item" rc="200" rm="OK" tn="shoppers 1-1" dt="" by="126" sby="122" ng="4" na="4">
  <httpSample t="5" it="0" lt="5" ct="1" ts="1795665039107" s="true" lb="GET item-0" rc="302" rm="Found" tn="shoppers 1-1" dt="" by="0" sby="122" ng="4" na="4"/>
  <httpSample t="6" it="0" lt="6" ct="0" ts="1795665039112" s="true" lb="GET item-1" rc="200" rm="OK" tn="shoppers 1-1" dt="" by="126" sby="122" ng="4" na="4"/>
  <assertionResult>
    <name>in stock</name>
    <failure>false</failure>
    <error>false</error>
  </assertionResult>
  <java.net.URL>http://127.0.0.1:18081/item</java.net.URL>
</httpSample>
</testResults>
`

func TestXML(t *testing.T) {
	got, err := readAll(t, xmlResults, Options{})
	if err != nil || len(got) != 3 {
		t.Fatalf("%d samples, %v", len(got), err)
	}
	list, browse, item := got[0], got[1], got[2]
	if list.Label != "GET list" || list.Transaction || list.Success || list.Failure != `Test failed: text expected to contain /"items"/` || list.Line != 4 {
		t.Errorf("the step of the parent sample: %+v", list)
	}
	if browse.Label != "browse" || !browse.Transaction || browse.Group != "shoppers" || !browse.Start.Equal(time.UnixMilli(1795665039189)) || browse.Elapsed != 43*time.Millisecond {
		t.Errorf("the parent sample: %+v", browse)
	}
	if item.Label != "GET item" || !item.Success || item.Elapsed != 11*time.Millisecond || item.Failure != "" {
		t.Errorf("the sample with sub-results: %+v", item)
	}
}

// A quoted field may hold commas, quotes and line breaks; the lines after
// it keep their numbers.
func TestQuotedFields(t *testing.T) {
	src := header + `1795664773311,28,GET item,500,"Server says ""no"", twice",users 1-3,,false,"line one
line two",113,122,4,4,http://x/item,25,0,17
1795664773312,29,GET item,200,OK,users 1-3,,true,,113,122,4,4,http://x/item,25,0,17
1795664773313,2x,GET item,200,OK,users 1-3,,true,,113,122,4,4,http://x/item,25,0,17
`
	got, err := readAll(t, src, Options{})
	if len(got) != 2 || got[0].Message != `Server says "no", twice` || got[0].Failure != "line one\nline two" || got[1].Line != 4 {
		t.Errorf("%+v", got)
	}
	if err == nil || !strings.Contains(err.Error(), "results.jtl:5: elapsed \"2x\"") {
		t.Errorf("error %v, want it on line 5", err)
	}
}

// A file cut short anywhere in its last line, or anywhere before the end
// of its XML, is refused with the line, whatever the cut leaves: JMeter
// ends every CSV line, and a CSV line cut in its last fields has all its
// fields (a Connect of 17 cut to 1).
func TestCutAnywhereRefused(t *testing.T) {
	src := header + rows
	last := strings.LastIndex(src[:len(src)-1], "\n") + 1
	for cut := last + 1; cut < len(src); cut++ {
		got, err := readAll(t, src[:cut], Options{})
		if err == nil || !strings.HasPrefix(err.Error(), "results.jtl:5: ") {
			t.Errorf("cut at %d (%q): %d samples, %v", cut, src[cut-5:cut], len(got), err)
		}
	}
	for cut := 1; cut < len(xmlResults)-1; cut++ { // the last byte is a line end after </testResults>
		if got, err := readAll(t, xmlResults[:cut], Options{}); err == nil {
			t.Errorf("XML cut at %d (%q): %d samples, no error", cut, xmlResults[max(cut-10, 0):cut], len(got))
		}
	}
	if got, err := readAll(t, xmlResults[:len(xmlResults)-1], Options{}); err != nil || len(got) != 3 {
		t.Errorf("XML without its last line end: %d samples, %v", len(got), err)
	}
}

// A 300 MB label is refused once lines.MaxLine (16 MiB) of it is read,
// in CSV and in XML, with its line; a label over lines.MaxName (64 KiB)
// is refused as a name, as is a thread name.
func TestLongFieldsRefused(t *testing.T) {
	const big = 300 << 20
	for _, c := range []struct {
		name string
		src  *linestest.Endless
		want string
	}{
		{"csv", &linestest.Endless{Head: header + rows + "1795664773600,30,", C: 'x', N: big, Tail: ",200,OK,u 1-1,,true,,1,1,1,1,u,1,0,1\n"},
			"results.jtl:6: a line longer than 16 MiB: lines are limited to 16 MiB (lines.MaxLine)"},
		{"csv, quoted", &linestest.Endless{Head: header + rows + "1795664773600,30,\"", C: 'x', N: big, Tail: "\",200,OK,u 1-1,,true,,1,1,1,1,u,1,0,1\n"},
			"results.jtl:6: a line longer than 16 MiB"},
		{"xml", &linestest.Endless{Head: "<testResults>\n<httpSample t=\"1\" ts=\"1\" s=\"true\" lb=\"", C: 'x', N: big, Tail: "\"/></testResults>\n"},
			"results.jtl:2: an element or a text longer than 16 MiB"},
		{"xml text", &linestest.Endless{Head: "<testResults>\n<httpSample t=\"1\" ts=\"1\" s=\"true\" lb=\"a\"><responseData>", C: 'x', N: big, Tail: "</responseData></httpSample></testResults>\n"},
			"results.jtl:2: an element or a text longer than 16 MiB"},
	} {
		r, err := NewReader(c.src, "results.jtl", Options{})
		linestest.Refused(t, c.name, c.src, func() error {
			if err == nil {
				_, err = r.Next()
			}
			return err
		}, c.want)
	}
	label := strings.Repeat("l", 65<<10)
	for _, c := range []struct{ name, src, what string }{
		{"csv label", header + "1795664773600,30," + label + ",200,OK,u 1-1,,true,,1,1,1,1,u,1,0,1\n", "label"},
		{"xml label", "<testResults>\n<httpSample t=\"1\" ts=\"1\" s=\"true\" lb=\"" + label + "\"/>\n</testResults>\n", "label"},
		{"csv thread", header + "1795664773600,30,a,200,OK," + label + " 1-1,,true,,1,1,1,1,u,1,0,1\n", "thread name"},
	} {
		_, err := readAll(t, c.src, Options{})
		want := "results.jtl:2: a " + c.what + " of 65.0 KiB: names (labels, threads, k6's name, scenario, group and check tags) are limited to 64 KiB (lines.MaxName)"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", c.name, err, want)
		}
	}
}
