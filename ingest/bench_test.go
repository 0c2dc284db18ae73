package ingest_test

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/jtl"
)

// BenchmarkJMeterCSV reads a JMeter CSV result file of 1,000,000 samples
// (20 labels, 50 threads, 1% failures, about 100 MB) from memory into a
// run directory: samples/s is the import's rate; MB-heap the most the
// heap held at the end of each interval written.
func BenchmarkJMeterCSV(b *testing.B) {
	const n = 1_000_000
	var buf bytes.Buffer
	buf.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	t := int64(1795662000000)
	for i := range n {
		t += int64(i % 3)
		ms := 5 + (i*7919)%295
		code, msg, ok := "200", "OK", "true"
		if i%100 == 0 {
			code, msg, ok = "500", "Internal Server Error", "false"
		}
		fmt.Fprintf(&buf, "%d,%d,GET item %d,%s,%s,users 1-%d,text,%s,,113,122,50,50,http://127.0.0.1/item,%d,0,1\n", t, ms, i%20, code, msg, i%50+1, ok, ms)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var took time.Duration
	for range b.N {
		out := b.TempDir()
		t0 := time.Now()
		r, err := jtl.NewReader(bytes.NewReader(data), "big.jtl", jtl.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, sum, err := ingest.Run(ingest.JMeter(r), "jmeter", "big.jtl", ingest.Options{Out: out}, nil); err != nil || sum.Origin.Samples != n {
			b.Fatal(err)
		}
		took += time.Since(t0)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(n)*float64(b.N)/took.Seconds(), "samples/s")
}
