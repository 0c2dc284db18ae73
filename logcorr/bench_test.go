package logcorr

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const benchLines = 1_000_000

// writeBenchLog writes benchLines lines with line(i) and returns the path
// and its size.
func writeBenchLog(b *testing.B, line func(w *bufio.Writer, i int)) (string, int64) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range benchLines {
		line(w, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

func benchRequests(n int) []Request {
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = req(fmt.Sprintf("op%d", i%4), fmt.Sprintf("ev-%d", i), float64(i), 20, true)
	}
	return reqs
}

func runBench(b *testing.B, reqs []Request, src Source, size int64) {
	b.SetBytes(size)
	b.ResetTimer()
	var res *Result
	for b.Loop() {
		var err error
		if res, err = Correlate(reqs, []Source{src}); err != nil {
			b.Fatal(err)
		}
	}
	if res.Lines != benchLines {
		b.Fatalf("read %d lines", res.Lines)
	}
	b.ReportMetric(float64(benchLines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkLinePattern: an audit log of 1M lines, 80% audit records (a
// tenth of them of the 100,000 requests), 20% other lines.
func BenchmarkLinePattern(b *testing.B) {
	t := t0
	path, size := writeBenchLog(b, func(w *bufio.Writer, i int) {
		ts := t.Add(time.Duration(i) * time.Millisecond)
		if i%5 == 4 {
			fmt.Fprintf(w, "%s DEBUG rules engine loaded rule set %d for tenant t-%d\n", ts.Format("2006-01-02T15:04:05.000Z07:00"), i%97, i%13)
			return
		}
		fmt.Fprintf(w, "%s %s INFO audit event=ev-%d rule=r%d status=done\n",
			ts.Format("2006-01-02T15:04:05.000Z07:00"), ts.Add(12*time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"), i, i%7)
	})
	reqs := benchRequests(100_000)
	runBench(b, reqs, Source{Files: []string{path}, Pattern: auditPattern}, size)
}

// BenchmarkStartEndPattern: a network log of 1M lines, the recv and sent
// lines of 500,000 events interleaved (100,000 of them requests).
func BenchmarkStartEndPattern(b *testing.B) {
	path, size := writeBenchLog(b, func(w *bufio.Writer, i int) {
		ts := t0.Add(time.Duration(i) * time.Millisecond)
		// Event k starts at line 2k-(k%2)*... : starts and ends alternate
		// with a lag of 3 events.
		k, verb := i/2, "recv"
		if i%2 == 1 {
			k, verb = i/2-3, "sent"
		}
		if k < 0 {
			k, verb = 1_000_000+i, "sent" // an end with no start, of no request
		}
		fmt.Fprintf(w, "%s [net] %s id=ev-%d len=%d\n", ts.Format("2006-01-02 15:04:05.000"), verb, k, 64+i%100)
	})
	reqs := benchRequests(100_000)
	runBench(b, reqs, Source{Files: []string{path}, Pattern: networkPattern}, size)
}
