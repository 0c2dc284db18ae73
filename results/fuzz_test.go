package results_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/results"
	"github.com/perflab/perflab/store"
)

// summary.json read, written and read again is what was read, and writes
// the same bytes.
func FuzzSummaryJSON(f *testing.F) {
	summary, _, _, _ := runtest.SeedRunDir(f)
	f.Add(summary)
	var b bytes.Buffer
	s := results.Summarize(runtest.Fixture(), runtest.Host)
	s.Labels = map[string]string{"release": "Goldenrod"}
	s.WriteJSON(&b) //nolint:errcheck // a buffer
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"perflab-summary/1","stages":[{"operations":[{"name":"a|b <i>","latency_ms":{"p50":1e300}}]}],"labels":{"":"\u0000"}}`))
	// Where encoding/json's Unmarshal is lenient: names in another case
	// or twice, invalid UTF-8, null, numbers in an exponent's form, a
	// time's offset written out; and what it refuses: a second value.
	for _, src := range []string{`{"FORMAT":"a","Run_ID":"x","run_id":"y","labels":{"k":"a","k":"b"}}`, "{\"error\":\"\xff\xfe\"}",
		`{"stages":null,"total":{"count":1e2},"start":"2026-01-01T00:00:00+00:00"}`, `{} {}`, `{"stages":[{"index":1.5}]}`} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var s1 results.Summary
		err := json.Unmarshal(src, &s1)
		// ReadDir's decoder, reading as it goes, reads what Unmarshal reads.
		if s, derr := results.DecodeSummary(bytes.NewReader(src)); (err == nil) != (derr == nil) {
			t.Fatalf("Unmarshal: %v; DecodeSummary: %v\n%s", err, derr, src)
		} else if err == nil && normalTimes(*s) != normalTimes(s1) {
			t.Fatalf("DecodeSummary read another summary than Unmarshal:\n%s\n%s", normalTimes(*s), normalTimes(s1))
		}
		if err != nil {
			return
		}
		var w1 bytes.Buffer
		if err := s1.WriteJSON(&w1); err != nil {
			return // a value JSON cannot hold, such as an infinite float from a huge number
		}
		var s2 results.Summary
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
func normalTimes(s results.Summary) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// perflab import of any run directory fails or records the run, which
// then reads back from the history with its stages and operations.
func FuzzImportRunDir(f *testing.F) {
	summary, hlog, intervals, resources := runtest.SeedRunDir(f)
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
		var s results.Summary
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
		dir := runtest.WriteFiles(t, scratch, map[string][]byte{"summary.json": b, "latency.hlog": hlog, results.IntervalsCSV: intervals, "resources.csv": resources})
		id, err := results.Import(st, dir, map[string]string{"release": "fuzz"})
		if err != nil {
			return
		}
		rd, err := results.FromStore(st, id)
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

// totals.jsonl, a run directory's file like any other, is read whole or
// refused: what reads back summarises, merges, and writes the same again.
func FuzzReadTotals(f *testing.F) {
	for _, run := range []*metrics.Run{runtest.Fixture(), runtest.OpenRun()} {
		var b bytes.Buffer
		if err := results.WriteTotals(&b, results.TotalsOf(run)); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add([]byte(`{"part":"stage","index":1,"name":"s","operations":[{"name":"a","kind":"step","scenario":"s","stats":{"count":-3,"ok":{"n":2,"sum_ns":-1,"min_ns":5,"max_ns":1},"hist":"HISTFAAAACl42pNpmSzMwMDAxQABzFCaEUoz2X+AiLEwAQAzVAL/"}}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		tot, err := results.ReadTotals(bytes.NewReader(src))
		if err != nil {
			return
		}
		for _, ph := range tot.Stages {
			merged := metrics.NewStats()
			for _, st := range ph.Totals {
				st.Summarize(time.Second)
				merged.Merge(st)
			}
			merged.Summarize(time.Second)
		}
		var w1 bytes.Buffer
		if err := results.WriteTotals(&w1, tot); err != nil {
			t.Fatalf("read, then not written: %v", err)
		}
		back, err := results.ReadTotals(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("written, then not read: %v\n%s", err, w1.Bytes())
		}
		var w2 bytes.Buffer
		if err := results.WriteTotals(&w2, back); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("written twice, differs (%v)", err)
		}
	})
}
