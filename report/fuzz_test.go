package report

import (
	"io"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/judge"
	"github.com/perflab/perflab/results"
)

// A run directory's reader takes any files without panicking, and a run
// it reads renders in every report format, drifts and compares.
func FuzzReadRunDir(f *testing.F) {
	summary, hlog, intervals, resources := runtest.SeedRunDir(f)
	f.Add(summary, hlog, intervals, resources)
	f.Add(summary, []byte("Tag=s1/x/y,a,b,c,HISTFAAAA\n#[BaseTime: x]\n"), []byte("stage\n1,2"), []byte("t,x\n"))
	f.Add([]byte(`{"format":"perflab-summary/1","stages":[{"index":1,"operations":[{"name":"a","kind":"step","count":-5}]}]}`),
		[]byte("Tag=s1/_/a,0.1,-1,0,HISTFAAAAAAA\nTag=s1/_/a,1e308,1e308,0,\n"), []byte{}, []byte{})
	scratch := f.TempDir()
	f.Fuzz(func(t *testing.T, summary, hlog, intervals, resources []byte) {
		dir := runtest.WriteFiles(t, scratch, map[string][]byte{"summary.json": summary, "latency.hlog": hlog, results.IntervalsCSV: intervals, "resources.csv": resources})
		rd, err := results.ReadDir(dir)
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
		windows := []judge.Window{}
		for _, w := range []string{"first:2h", "last:10s"} {
			if win, err := judge.ParseWindow(w); err == nil {
				windows = append(windows, win)
			}
		}
		judge.WindowWarnings(rd, windows)
		WriteWindows(io.Discard, judge.Windows(rd, windows)) //nolint:errcheck
		if d := judge.Longevity(rd, judge.LongevityOptions{}); d != nil {
			WriteDrift(io.Discard, d) //nolint:errcheck
			rd.Summary.Drift = d
			WriteHTML(io.Discard, rd)             //nolint:errcheck
			WriteMarkdown(io.Discard, rd.Summary) //nolint:errcheck
		}
		if rc, err := judge.Compare([]*results.Run{rd}, []*results.Run{rd}, 75, 0.05, 0.05); err == nil {
			WriteComparison(io.Discard, rc) //nolint:errcheck
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
	_, hlog, intervals, _ := runtest.SeedRunDir(f)
	manifest := []byte(`{"format":"perflab-summary/1","run_id":"r","plan":"demo","start":"2026-11-25T10:00:00Z","host":"h","pid":1,"labels":{"a":"b"},"stages":[{"index":1,"name":"users=1"}]}`)
	f.Add(manifest, hlog, intervals)
	// Cut short where a kill cuts them: in the middle of a line.
	f.Add(manifest, hlog[:len(hlog)*2/3], intervals[:len(intervals)/2])
	f.Add([]byte(`{}`), []byte("Tag=s1/_/a,0.1,1,0,HISTFAAAAAAA"), []byte("stage,scenario,operation,kind,interval,start_ms,end_ms,count,errors\n1,_,a,step,0,1,2,3,4\n"))
	scratch := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, hlog, intervals []byte) {
		dir := runtest.WriteFiles(t, scratch, map[string][]byte{results.ManifestFile: manifest, "latency.hlog": hlog, results.IntervalsCSV: intervals})
		rd, err := results.ReadDir(dir)
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
		judge.Longevity(rd, judge.LongevityOptions{})
	})
}
