package bus

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// benchMessages returns n messages keyed by the JSON field id, and the keys.
func benchMessages(n int) ([]Message, []string) {
	msgs, keys := make([]Message, n), make([]string, n)
	for i := range n {
		keys[i] = "req-" + strconv.Itoa(i)
		msgs[i] = Message{Topic: "replies", Key: keys[i], Value: []byte(`{"id":"` + keys[i] + `","status":"ok","amount":12.5}`)}
	}
	return msgs, keys
}

// BenchmarkAwaiterMatch is the Awaiter's own cost for one reply: Register,
// match the arriving message by a JSON field, Wait, on one goroutine.
func BenchmarkAwaiterMatch(b *testing.B) {
	msgs, keys := benchMessages(b.N)
	a := NewAwaiter(newStubSub(), AwaiterConfig{Key: byID()})
	defer a.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w, err := a.Register(keys[i])
		if err != nil {
			b.Fatal(err)
		}
		a.dispatch(&msgs[i])
		if _, err := w.Wait(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAwaiterEarly is BenchmarkAwaiterMatch with every message
// arriving before its key is registered, so held first.
func BenchmarkAwaiterEarly(b *testing.B) {
	msgs, keys := benchMessages(b.N)
	a := NewAwaiter(newStubSub(), AwaiterConfig{Key: byID()})
	defer a.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		a.dispatch(&msgs[i])
		w, err := a.Register(keys[i])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Wait(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAwaiterParallel has concurrent virtual users register, send
// their reply through the subscription to the consuming goroutine, and
// wait with a timeout: the cost per matched message with goroutine
// hand-offs, as in a load test.
func BenchmarkAwaiterParallel(b *testing.B) {
	msgs, keys := benchMessages(b.N)
	sub := newStubSub()
	a := NewAwaiter(sub, AwaiterConfig{Key: byID()})
	defer a.Close()
	ctx := context.Background()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			w, err := a.Register(keys[i])
			if err != nil {
				b.Error(err)
				return
			}
			sub.ch <- msgs[i]
			if _, err := w.Wait(ctx, DefaultHold); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
