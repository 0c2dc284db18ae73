package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The alarm never wakes before its time (an iteration started early would
// be timed from its due time all the same, and look faster than it was),
// wakes at once for a time passed, and ends its wait when its context does.
func TestAlarmIsNeverEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	al := newAlarm(ctx, func() bool { return true })
	defer al.close()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		at := time.Now().Add(time.Duration(rng.Int64N(int64(2*time.Millisecond))) - 200*time.Microsecond)
		if !al.wait(at) {
			t.Fatalf("wait %d: the context has not ended", i)
		}
		if now := time.Now(); now.Before(at) {
			t.Fatalf("wait %d: woke %v before its time", i, at.Sub(now))
		}
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if al.wait(start.Add(time.Hour)) {
		t.Fatal("a wait of an hour whose context ended reported its time reached")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the wait took %v to notice its context's end", el)
	}
	if al.wait(time.Now().Add(-time.Second)) {
		t.Error("a wait after the context ended reported its time reached")
	}
}

// BenchmarkWakeLateness measures how late a waiter wakes for a time 0.2 to
// 2 ms ahead: the pacer's alarm against a Go timer, its peer (which waits
// in whole milliseconds when the process is idle). Figures: p50 and p99
// lateness in µs per op (go test -bench WakeLateness ./engine).
func BenchmarkWakeLateness(b *testing.B) {
	ctx := context.Background()
	waits := map[string]func(time.Time){
		"alarm": func() func(time.Time) {
			al := newAlarm(ctx, func() bool { return true })
			b.Cleanup(al.close)
			return func(at time.Time) { al.wait(at) }
		}(),
		"timer": func() func(time.Time) {
			tm := time.NewTimer(time.Hour)
			return func(at time.Time) { sleepUntil(ctx, tm, at) }
		}(),
	}
	for _, name := range []string{"alarm", "timer"} {
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var late []time.Duration
			for b.Loop() {
				at := time.Now().Add(200*time.Microsecond + time.Duration(rng.Int64N(int64(1800*time.Microsecond))))
				waits[name](at)
				late = append(late, time.Since(at))
			}
			slices.Sort(late)
			b.ReportMetric(float64(late[len(late)/2])/1e3, "p50-µs")
			b.ReportMetric(float64(late[len(late)*99/100])/1e3, "p99-µs")
		})
	}
}
