package monitor

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// unusedPID returns a PID that names no process.
func unusedPID(t *testing.T) int {
	for pid := 4194000; pid > 1000; pid-- {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			return pid
		}
	}
	t.Fatal("no unused PID")
	return 0
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// stuck is a monitor whose source never answers: each sample lasts until
// its context ends.
type stuck struct{}

func (stuck) Spec() Spec { return Spec{Name: "stuck", Kind: "test"} }
func (stuck) Sample(ctx context.Context, _ time.Time) ([]Point, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (stuck) Close(context.Context) (*Final, error) { return nil, nil }

func TestSamplerUnreachableReportedOnce(t *testing.T) {
	pid := unusedPID(t)
	var monitors []Monitor
	for _, s := range []Spec{
		{Name: "gone", Kind: KindProcess, PID: pid},
		{Name: "scrape", Kind: KindPrometheus, URL: "http://" + closedPort(t) + "/metrics", Series: []string{"up"}},
		{Name: "host", Kind: KindHost},
	} {
		monitors = append(monitors, mustOpen(t, s))
	}
	monitors = append(monitors, stuck{})

	var (
		mu     sync.Mutex
		warned []Warning
	)
	const interval = 50 * time.Millisecond
	s := StartSampler(context.Background(), interval, monitors, func(w Warning) {
		mu.Lock()
		warned = append(warned, w)
		mu.Unlock()
	})
	time.Sleep(10 * interval)
	r := s.Stop(context.Background())

	want := map[string]string{
		"gone":   "process " + strconv.Itoa(pid) + ": no such process",
		"scrape": "connection refused",
		"stuck":  "context deadline exceeded",
	}
	if len(warned) != len(want) {
		t.Fatalf("warned %d times, want once per failing monitor: %v", len(warned), warned)
	}
	for _, w := range warned {
		if !strings.Contains(w.Message, want[w.Monitor]) {
			t.Errorf("warning %q, want it to say %q", w, want[w.Monitor])
		}
	}
	if len(r.Warnings) != len(want) {
		t.Fatalf("result warnings %v", r.Warnings)
	}
	for _, w := range r.Warnings {
		if w.Failures < 5 {
			t.Errorf("%s failed %d times in 10 intervals: was it sampled on?", w.Monitor, w.Failures)
		}
	}

	// The host monitor was sampled all along, at start, every tick and at
	// Stop, however the others fared.
	samples := 0
	points := r.Points()
	for i, p := range points {
		if p.Monitor != "host" {
			t.Errorf("a point from %s", p.Monitor)
		}
		if p.Metric == MetricLoad1 {
			samples++
		}
		if i > 0 && p.Time.Before(points[i-1].Time) {
			t.Errorf("points not in time order")
		}
	}
	if samples < 5 || samples > 12 { // fewer if a loaded machine made ticks late
		t.Errorf("host sampled %d times in 10 intervals", samples)
	}
}

// counted is a monitor that counts its samples.
type counted struct{ n *int64 }

func (c counted) Spec() Spec { return Spec{Name: "counted", Kind: "test"} }
func (c counted) Sample(ctx context.Context, now time.Time) ([]Point, error) {
	v := float64(atomic.AddInt64(c.n, 1))
	return []Point{{Time: now, Monitor: "counted", Metric: "n", Value: v}}, nil
}
func (c counted) Close(context.Context) (*Final, error) { return nil, nil }

// Mark samples at once, between the interval's ticks, so that a stage
// shorter than the interval still gets samples at its edges; a mark within a
// tenth of the interval (50 ms at most) of the last sample is skipped (too
// short a span for /proc's counters).
func TestSamplerMark(t *testing.T) {
	var n int64
	// A 2 s interval: no tick interferes, and the skip threshold is 50 ms,
	// far from both the 150 ms gaps and the skipped mark's 5 ms.
	s := StartSampler(context.Background(), 2*time.Second, []Monitor{counted{&n}}, nil)
	time.Sleep(150 * time.Millisecond)
	s.Mark()
	time.Sleep(150 * time.Millisecond)
	s.Mark()
	time.Sleep(5 * time.Millisecond)
	s.Mark() // 5 ms after the last sample: skipped
	time.Sleep(150 * time.Millisecond)
	res := s.Stop(context.Background())
	// The first sample, two marks, the last sample.
	if res.Len() != 4 {
		t.Errorf("%d samples, want 4", res.Len())
	}
}

// A sampler keeps its points packed (24 bytes a point, not 64): they come
// back the same, in time order, and analyse the same.
func TestSamplerPacksPoints(t *testing.T) {
	pts := synthetic()
	s := &Sampler{index: map[name]int32{}}
	// In two halves, the later first: the result is in time order.
	s.keep(0, pts[len(pts)/2:])
	s.keep(0, pts[:len(pts)/2])
	r := s.result()
	if r.Len() != len(pts) || len(r.names) != 10 {
		t.Fatalf("%d points, %d names", r.Len(), len(r.names))
	}
	want := append(append(pts[:0:0], pts[len(pts)/2:]...), pts[:len(pts)/2]...)
	sort.SliceStable(want, func(i, j int) bool { return want[i].Time.Before(want[j].Time) })
	for i, p := range r.Points() {
		if w := want[i]; !p.Time.Equal(w.Time) || p.Monitor != w.Monitor || p.Metric != w.Metric || p.Value != w.Value {
			t.Fatalf("point %d: %+v, want %+v", i, p, w)
		}
	}
	windows := []Window{{Name: "first", Start: at(0), End: at(50), Transactions: 10}, {Name: "all", Start: at(0), End: at(100), Transactions: 20}}
	a, b := r.Analyze(windows), Analyze(pts, nil, windows)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("packed points analyse as\n%s\nnot\n%s", ja, jb)
	}
}

// A long run's points go to a file a few thousand at a time, each
// monitor's apart, and come back the same, in time order: memory holds a
// block of each monitor's at most, however long the run.
func TestSamplerSpillsPoints(t *testing.T) {
	old := spillAt
	spillAt = 7
	defer func() { spillAt = old }()
	pts := synthetic()
	var api, host []Point
	for _, p := range pts {
		if p.Monitor == "api" {
			api = append(api, p)
		} else {
			host = append(host, p)
		}
	}
	s := &Sampler{index: map[name]int32{}}
	// As two monitors' goroutines keep theirs: a sample's points at a
	// time, interleaved.
	for i := 0; i < 11; i++ {
		s.keep(0, api[i*8:(i+1)*8])
		s.keep(1, host[i*2:(i+1)*2])
	}
	r := s.result()
	defer r.Close()
	if r.Len() != len(pts) {
		t.Fatalf("%d points, want %d", r.Len(), len(pts))
	}
	for i, ps := range r.series {
		if len(ps.mem) >= spillAt || ps.spilled == 0 {
			t.Errorf("monitor %d: %d points in memory, %d spilled; want fewer than %d in memory", i, len(ps.mem), ps.spilled, spillAt)
		}
	}
	want := slices.Clone(pts)
	sort.SliceStable(want, func(i, j int) bool { return want[i].Time.Before(want[j].Time) })
	for range 2 { // read twice: the file stays
		got := r.Points()
		if len(got) != len(want) {
			t.Fatalf("read back %d points, want %d", len(got), len(want))
		}
		for i, p := range got {
			if w := want[i]; !p.Time.Equal(w.Time) || p.Monitor != w.Monitor || p.Metric != w.Metric || p.Value != w.Value {
				t.Fatalf("point %d: %+v, want %+v", i, p, w)
			}
		}
	}
	windows := []Window{{Name: "all", Start: at(0), End: at(100), Transactions: 20}}
	ja, _ := json.Marshal(r.Analyze(windows))
	jb, _ := json.Marshal(Analyze(pts, nil, windows))
	if string(ja) != string(jb) {
		t.Errorf("spilled points analyse as\n%s\nnot\n%s", ja, jb)
	}
}
