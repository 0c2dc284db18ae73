package monitor

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The cost of one sample per collector: go test -bench . -run '^$' ./monitor/

func benchSample(b *testing.B, m Monitor) {
	b.Helper()
	ctx := context.Background()
	if _, err := m.Sample(ctx, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Sample(ctx, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProcessPID(b *testing.B) {
	benchSample(b, mustOpen(b, Spec{Kind: KindProcess, PID: os.Getpid()}))
}

// BenchmarkProcessPattern scans every process of the machine per sample.
func BenchmarkProcessPattern(b *testing.B) {
	mark := fmt.Sprintf("perflab-monitor-bench-%d", os.Getpid())
	busyLoop(b, mark)
	pids, _ := listPIDs()
	b.Logf("%d processes", len(pids))
	benchSample(b, mustOpen(b, Spec{Kind: KindProcess, Pattern: mark}))
}

func BenchmarkHost(b *testing.B) {
	benchSample(b, mustOpen(b, Spec{Kind: KindHost}))
}

func BenchmarkCgroup(b *testing.B) {
	dir, _ := filepath.Abs("testdata/cgroup/full")
	benchSample(b, mustOpen(b, Spec{Kind: KindCgroup, Path: dir}))
}

func BenchmarkJVM(b *testing.B) {
	java := startChurn(b, churnArgs(b))
	m := mustOpen(b, Spec{Kind: KindJVM, PID: java.Process.Pid})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err := m.Sample(context.Background(), time.Now())
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal(err)
		}
	}
	benchSample(b, m)
}

// BenchmarkPrometheus scrapes a small exposition over loopback HTTP.
func BenchmarkPrometheus(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, promText, 1000, 500, 7.5)
	}))
	defer srv.Close()
	benchSample(b, mustOpen(b, Spec{Kind: KindPrometheus, URL: srv.URL, Series: []string{
		`http_requests_total{code="200"}`, "queue_depth", "latency_seconds_count",
	}}))
}

func BenchmarkPostgres(b *testing.B) {
	dsn := os.Getenv("PERFLAB_TEST_POSTGRES")
	if dsn == "" {
		b.Skip("PERFLAB_TEST_POSTGRES is not set")
	}
	benchSample(b, mustOpen(b, Spec{Kind: KindPostgres, DSN: dsn}))
}
