package report

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/store"
)

// seedRunDir is a real run directory, of the demo (perflab demo --label
// release=fuzz-seed), as the fuzz targets' seed.
func seedRunDir(f *testing.F) (summary, hlog, intervals, resources []byte) {
	f.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "rundir", name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	return read("summary.json"), read("latency.hlog"), read(IntervalsCSV), read("resources.csv")
}

// writeRunDir lays the files of a run directory in dir (one directory
// for all the inputs of a fuzz process: a new one each time is slower).
func writeRunDir(t *testing.T, dir string, files map[string][]byte) string {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// summary.json read, written and read again is what was read, and writes
// the same bytes.
func FuzzSummaryJSON(f *testing.F) {
	summary, _, _, _ := seedRunDir(f)
	f.Add(summary)
	var b bytes.Buffer
	s := Summarize(fixture(), host)
	s.Labels = map[string]string{"release": "Goldenrod"}
	s.WriteJSON(&b) //nolint:errcheck // a buffer
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"perflab-summary/1","stages":[{"operations":[{"name":"a|b <i>","latency_ms":{"p50":1e300}}]}],"labels":{"":"\u0000"}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		var s1 Summary
		if json.Unmarshal(src, &s1) != nil {
			return
		}
		var w1 bytes.Buffer
		if err := s1.WriteJSON(&w1); err != nil {
			return // a value JSON cannot hold, such as an infinite float from a huge number
		}
		var s2 Summary
		if err := json.Unmarshal(w1.Bytes(), &s2); err != nil {
			t.Fatalf("summary.json as written does not read: %v\n%s", err, w1.Bytes())
		}
		if !reflect.DeepEqual(normalTimes(s1), normalTimes(s2)) {
			t.Fatalf("read, written and read: not the same summary\n%s", w1.Bytes())
		}
		var w2 bytes.Buffer
		if err := s2.WriteJSON(&w2); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("written twice, differs (%v):\n%s\n---\n%s", err, w1.Bytes(), w2.Bytes())
		}
	})
}

// normalTimes compares times by instant and zone offset, not by the
// *Location pointer each decoding makes.
func normalTimes(s Summary) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// histogramOf records the values that data encodes, three bytes a value:
// two of mantissa and one of binary exponent, over perflab's whole range.
func histogramOf(data []byte) *hdr.Histogram {
	h := metrics.NewHistogram()
	for ; len(data) >= 3; data = data[3:] {
		v := int64(binary.BigEndian.Uint16(data)) << (data[2] % 24)
		h.RecordValue(min(v, h.HighestTrackableValue())) //nolint:errcheck // in range
	}
	return h
}

// What the run directory's writer logs (RunDir.logHistogram, under the
// header CreateRunDir writes) the reader gives back: the tag, the
// interval's start and end to the millisecond, the same histogram.
func FuzzHistogramLog(f *testing.F) {
	f.Add([]byte{1, 0, 0, 200, 3, 2, 0x80, 0x80, 4, 9, 9, 9}, "CREATE ANCHOR", uint32(520), uint32(2000), int64(1795619414503))
	f.Add([]byte{}, "", uint32(0), uint32(100), int64(0))
	f.Add([]byte{0xff, 0xff, 23, 0, 0, 0}, "a|b <script>", uint32(86_399_999), uint32(1), int64(4_102_444_800_123))
	f.Fuzz(func(t *testing.T, values []byte, name string, offsetMs, lengthMs uint32, startMs int64) {
		if startMs < 0 || startMs > 4_102_444_800_000 { // up to 2100
			return
		}
		h := histogramOf(values)
		var buf bytes.Buffer
		baseMs := startMs / 1000 * 1000
		rd := &RunDir{bw: bufio.NewWriter(&buf), baseMs: baseMs}
		rd.hlog = hdr.NewHistogramLogWriter(rd.bw)
		rd.hlog.OutputStartTime(baseMs) //nolint:errcheck // a buffer
		rd.hlog.OutputBaseTime(baseMs)  //nolint:errcheck
		rd.hlog.OutputLegend()          //nolint:errcheck
		start := time.UnixMilli(startMs + int64(offsetMs))
		iv := &metrics.Interval{Start: start, End: start.Add(time.Duration(lengthMs) * time.Millisecond)}
		tag := Tag("s1", metrics.Op{Scenario: "flow", Name: name, Kind: metrics.KindStep})
		if err := rd.logHistogram(h, tag, iv); err != nil {
			t.Fatal(err)
		}
		rd.bw.Flush() //nolint:errcheck
		ivs, err := readHistogramLog(&buf)
		if err != nil {
			t.Fatalf("the log as written does not read: %v\n%s", err, buf.Bytes())
		}
		got := ivs[tag]
		if len(ivs) != 1 || len(got) != 1 {
			t.Fatalf("wrote one interval of %q, read %d tags, %d intervals under it", tag, len(ivs), len(got))
		}
		if got[0].StartMs != iv.Start.UnixMilli() || got[0].EndMs != iv.End.UnixMilli() {
			t.Fatalf("wrote %d..%d ms, read %d..%d\n%s", iv.Start.UnixMilli(), iv.End.UnixMilli(), got[0].StartMs, got[0].EndMs, buf.Bytes())
		}
		p, err := got[0].Histogram()
		if err != nil {
			t.Fatal(err)
		}
		back := metrics.NewHistogram()
		p.MergeInto(back)
		if !back.Equals(h) || back.TotalCount() != h.TotalCount() {
			t.Fatalf("histogram of %d values read back with %d, max %d, want %d", h.TotalCount(), back.TotalCount(), back.Max(), h.Max())
		}
	})
}

// A run directory's reader takes any files without panicking, and a run
// it reads renders in every report format, drifts and compares.
func FuzzReadRunDir(f *testing.F) {
	summary, hlog, intervals, resources := seedRunDir(f)
	f.Add(summary, hlog, intervals, resources)
	f.Add(summary, []byte("Tag=s1/x/y,a,b,c,HISTFAAAA\n#[BaseTime: x]\n"), []byte("stage\n1,2"), []byte("t,x\n"))
	f.Add([]byte(`{"format":"perflab-summary/1","stages":[{"index":1,"operations":[{"name":"a","kind":"step","count":-5}]}]}`),
		[]byte("Tag=s1/_/a,0.1,-1,0,HISTFAAAAAAA\nTag=s1/_/a,1e308,1e308,0,\n"), []byte{}, []byte{})
	scratch := f.TempDir()
	f.Fuzz(func(t *testing.T, summary, hlog, intervals, resources []byte) {
		// The log alone, whatever the summary.
		if ivs, err := readHistogramLog(bytes.NewReader(hlog)); err == nil {
			for _, list := range ivs {
				for _, iv := range list {
					iv.Histogram() //nolint:errcheck // any answer but a panic
				}
			}
		}
		dir := writeRunDir(t, scratch, map[string][]byte{"summary.json": summary, "latency.hlog": hlog, IntervalsCSV: intervals, "resources.csv": resources})
		rd, err := ReadRunDir(dir)
		if err != nil {
			return
		}
		for _, ivs := range rd.Intervals {
			for _, iv := range ivs {
				iv.Histogram() //nolint:errcheck // any answer but a panic
			}
		}
		for _, write := range []func(io.Writer) error{
			func(w io.Writer) error { return WriteMarkdown(w, rd.Summary) },
			func(w io.Writer) error { return WriteHTML(w, rd) },
			func(w io.Writer) error { return WriteSummaryJUnit(w, rd.Summary) },
			func(w io.Writer) error { return WriteTable(w, rd.Summary) },
		} {
			write(io.Discard) //nolint:errcheck // any answer but a panic
		}
		for _, table := range CSVTables {
			WriteCSVTable(io.Discard, rd, table) //nolint:errcheck
		}
		// perflab drift and compare read the same run.
		windows := []Window{}
		for _, w := range []string{"first:2h", "last:10s"} {
			if win, err := ParseWindow(w); err == nil {
				windows = append(windows, win)
			}
		}
		WindowWarnings(rd, windows)
		WriteDrift(io.Discard, Drift(rd, 95, windows), 95) //nolint:errcheck
		if rc, err := CompareRuns([]*RunData{rd}, []*RunData{rd}, 75, 0.05, 0.05); err == nil {
			WriteComparison(io.Discard, rc) //nolint:errcheck
		}
	})
}

// perflab import of any run directory fails or records the run, which
// then reads back from the history with its stages and operations.
func FuzzImportRunDir(f *testing.F) {
	summary, hlog, intervals, resources := seedRunDir(f)
	f.Add(summary, hlog, intervals, resources)
	f.Add([]byte(`{"format":"perflab-summary/1","run_id":"x","stages":[{"index":1,"name":"s","operations":[{"name":"a","kind":"step","scenario":"f"}]}]}`),
		[]byte("Tag=s1/f/a,0,1,0,HISTFAAAACl42pNpmSzMwMDAxQABzFCaEUoz2X+AiLEwAQAzVAL/\n"), []byte{}, []byte{})
	st, err := store.Open(filepath.Join(f.TempDir(), "perflab.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	runs, scratch := 0, f.TempDir()
	f.Fuzz(func(t *testing.T, summary, hlog, intervals, resources []byte) {
		var s Summary
		if json.Unmarshal(summary, &s) != nil {
			return
		}
		// Each import a new id: the history refuses a run it has.
		runs++
		s.RunID = strings.Repeat("r", 1+runs%3) + "-" + time.Now().Format("150405.000000000")
		b, err := json.Marshal(s)
		if err != nil {
			return
		}
		dir := writeRunDir(t, scratch, map[string][]byte{"summary.json": b, "latency.hlog": hlog, IntervalsCSV: intervals, "resources.csv": resources})
		id, err := ImportRunDir(st, dir, map[string]string{"release": "fuzz"})
		if err != nil {
			return
		}
		rd, err := FromStore(st, id)
		if err != nil {
			t.Fatalf("imported %s, read back: %v", id, err)
		}
		if rd.Summary.RunID != s.RunID || len(rd.Summary.Stages) != len(s.Stages) || rd.Summary.Labels["release"] != "fuzz" {
			t.Fatalf("imported %s with %d stages, read back %s with %d, labels %v", s.RunID, len(s.Stages), rd.Summary.RunID, len(rd.Summary.Stages), rd.Summary.Labels)
		}
		for i := range s.Stages {
			if len(rd.Summary.Stages[i].Operations) != len(s.Stages[i].Operations) {
				t.Fatalf("stage %d: %d operations imported, %d read back", i, len(s.Stages[i].Operations), len(rd.Summary.Stages[i].Operations))
			}
		}
	})
}

// Escaped text has no character that could end a Markdown table cell,
// open code, a link or HTML, nor a line break.
func FuzzMarkdownEscape(f *testing.F) {
	for _, s := range []string{"a|b <script>alert(1)</script> `x`", `\|`, "[x](javascript:y)", "&lt;", "line\nbreak\r\n", "GET /items?id=1&x=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range []string{mdEscape(s), strings.TrimSuffix(strings.TrimPrefix(mdCode(s), "<code>"), "</code>")} {
			if strings.ContainsAny(e, "|<>`[]\\\n\r") && e != mdCode(s) {
				t.Fatalf("%q escaped as %q", s, e)
			}
		}
		if c := mdCode(s); strings.HasPrefix(c, "`") && (strings.Count(c, "`") != 2 || strings.ContainsAny(c, "|\\\n\r")) {
			t.Fatalf("%q as code: %q", s, c)
		}
	})
}

// A run directory without summary.json (a killed run) is rebuilt from
// run.json, latency.hlog and intervals.csv, whatever they hold: an error,
// or a killed run's summary that every renderer and drift can take.
func FuzzReadKilledRunDir(f *testing.F) {
	_, hlog, intervals, _ := seedRunDir(f)
	manifest := []byte(`{"format":"perflab-summary/1","run_id":"r","plan":"demo","start":"2026-11-25T10:00:00Z","host":"h","pid":1,"labels":{"a":"b"},"stages":[{"index":1,"name":"users=1"}]}`)
	f.Add(manifest, hlog, intervals)
	// Cut short where a kill cuts them: in the middle of a line.
	f.Add(manifest, hlog[:len(hlog)*2/3], intervals[:len(intervals)/2])
	f.Add([]byte(`{}`), []byte("Tag=s1/_/a,0.1,1,0,HISTFAAAAAAA"), []byte("stage,scenario,operation,kind,interval,start_ms,end_ms,count,errors\n1,_,a,step,0,1,2,3,4\n"))
	scratch := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, hlog, intervals []byte) {
		dir := writeRunDir(t, scratch, map[string][]byte{ManifestFile: manifest, "latency.hlog": hlog, IntervalsCSV: intervals})
		rd, err := ReadRunDir(dir)
		if err != nil {
			return
		}
		if rd.Summary.Status != "killed" {
			t.Fatalf("status %q, want killed (nothing holds the log)", rd.Summary.Status)
		}
		if rd.Summary.Duration < 0 {
			t.Fatalf("duration %g", rd.Summary.Duration)
		}
		for _, write := range []func(io.Writer) error{
			func(w io.Writer) error { return WriteMarkdown(w, rd.Summary) },
			func(w io.Writer) error { return WriteHTML(w, rd) },
			func(w io.Writer) error { return WriteTable(w, rd.Summary) },
		} {
			write(io.Discard) //nolint:errcheck // any answer but a panic
		}
		Drift(rd, 95, nil)
	})
}
