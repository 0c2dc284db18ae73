package ingest_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/perflab/perflab/ingest"
	"github.com/perflab/perflab/jtl"
	"github.com/perflab/perflab/k6out"
)

// BenchmarkJMeterCSV reads a JMeter CSV result file of 1,000,000 samples
// (20 labels, 50 threads, 1% failures, about 100 MB) from memory into a
// run directory: samples/s is the import's rate.
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
	b.ReportMetric(float64(n)*float64(b.N)/took.Seconds(), "samples/s")
}

// jtlStream is a JMeter CSV result file made as it is read: n samples of
// 20 labels and 50 threads over a day, 1% failures.
type jtlStream struct {
	n, i  int
	t     int64
	buf   []byte
	bytes int64
}

func (s *jtlStream) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && s.i < s.n {
		if s.i == 0 {
			s.buf = append(s.buf, "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n"...)
			s.t = 1795662000000
		}
		i := s.i
		s.t += int64(86_400_000/s.n) + int64(i%2)
		ms := 5 + (i*7919)%295
		code, msg, ok := "200", "OK", "true"
		if i%100 == 0 {
			code, msg, ok = "500", "Internal Server Error", "false"
		}
		s.buf = fmt.Appendf(s.buf, "%d,%d,GET item %d,%s,%s,users 1-%d,text,%s,,113,122,50,50,http://127.0.0.1/item,%d,0,1\n", s.t, ms, i%20, code, msg, i%50+1, ok, ms)
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.buf)
	s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	s.bytes += int64(n)
	return n, nil
}

// BenchmarkJMeterCSVDay imports a day of JMeter results from a file
// (PERFLAB_BENCH_SAMPLES samples, 10 million by default: about 1 GB; 50
// million is a 5 GB file), written first: samples/s, the file's GB, and
// the MB the Go runtime took from the system in all (the most the process
// held). Every interval of every label is written: 172,800 of them.
func BenchmarkJMeterCSVDay(b *testing.B) {
	n := 10_000_000
	if v, err := strconv.Atoi(os.Getenv("PERFLAB_BENCH_SAMPLES")); err == nil && v > 0 {
		n = v
	}
	path := filepath.Join(b.TempDir(), "day.jtl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	size, err := io.CopyBuffer(f, &jtlStream{n: n}, make([]byte, 1<<20))
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := jtl.NewReader(f, path, jtl.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, sum, err := ingest.Run(ingest.JMeter(r), "jmeter", path, ingest.Options{Out: b.TempDir()}, nil); err != nil || sum.Origin.Samples != int64(n) {
			b.Fatal(err)
		}
		f.Close()
		b.ReportMetric(float64(n)/time.Since(t0).Seconds(), "samples/s")
	}
	b.ReportMetric(float64(size)/1e9, "GB")
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Sys)/(1<<20), "MB-sys")
}

// BenchmarkK6JSON reads k6's JSON output of 100,000 requests (as k6
// v1.1.0 writes them: 9 points a request, 5 more an iteration, about 330
// MB) from memory into a run directory: requests/s is the import's rate,
// MB/s the file's.
func BenchmarkK6JSON(b *testing.B) {
	const n = 100_000
	var buf bytes.Buffer
	t := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	tags := `"tags":{"expected_response":"true","group":"","method":"GET","name":"http://127.0.0.1:8080/items/%d","proto":"HTTP/1.1","scenario":"default","status":"200","url":"http://127.0.0.1:8080/items/%d"}`
	for i := range n {
		t = t.Add(time.Duration(100+i%7) * time.Microsecond)
		stamp := t.Format(time.RFC3339Nano)
		tg := fmt.Sprintf(tags, i%20, i%20)
		for _, m := range []string{"http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting", "http_req_tls_handshaking", "http_req_sending", "http_req_waiting", "http_req_receiving", "http_req_failed"} {
			fmt.Fprintf(&buf, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%d.%06d,%s}}`+"\n", m, stamp, 1+i%40, i%1000000, tg)
		}
		for _, m := range []string{"data_sent", "data_received", "iteration_duration", "iterations"} {
			fmt.Fprintf(&buf, `{"metric":%q,"type":"Point","data":{"time":%q,"value":%d,"tags":{"group":"","scenario":"default"}}}`+"\n", m, stamp, 1+i%40)
		}
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	var took time.Duration
	for range b.N {
		t0 := time.Now()
		r, err := k6out.NewReader(bytes.NewReader(data), "out.json", ingest.K6Metrics())
		if err != nil {
			b.Fatal(err)
		}
		if _, sum, err := ingest.Run(ingest.K6(r), "k6", "out.json", ingest.Options{Out: b.TempDir()}, nil); err != nil || sum.Origin.Samples != 2*n {
			b.Fatal(err, sum.Origin)
		}
		took += time.Since(t0)
	}
	b.ReportMetric(float64(n)*float64(b.N)/took.Seconds(), "requests/s")
}
