package bus

import (
	"testing"
	"time"
)

func TestHeldBuffer(t *testing.T) {
	var h heldBuffer
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	msg := func(v string) Message { return Message{Value: []byte(v)} }

	h.put("a", msg("a1"), at(10), 10)
	h.put("b", msg("b1"), at(20), 10)
	h.put("a", msg("a2"), at(30), 10)
	if m, ok := h.take("a"); !ok || string(m.Value) != "a1" {
		t.Fatalf("take(a) = %q, %v, want the oldest, a1", m.Value, ok)
	}
	if _, ok := h.take("c"); ok {
		t.Fatal("take(c) found a message")
	}
	// a1 is claimed: expiring past its deadline drops nothing.
	if n := h.expire(at(10)); n != 0 || h.n != 2 {
		t.Fatalf("expire(10) = %d, held %d, want 0, 2", n, h.n)
	}
	if n := h.expire(at(20)); n != 1 || h.n != 1 {
		t.Fatalf("expire(20) = %d, held %d, want 1 (b1), 1", n, h.n)
	}
	if m, ok := h.take("a"); !ok || string(m.Value) != "a2" {
		t.Fatalf("take(a) = %q, %v, want a2", m.Value, ok)
	}
	if h.n != 0 || len(h.byKey) != 0 {
		t.Fatalf("held %d, byKey %v, want empty", h.n, h.byKey)
	}
	if n := h.expire(at(100)); n != 0 || len(h.queue) != 0 {
		t.Fatalf("expire(100) = %d, queue %d, want 0, 0", n, len(h.queue))
	}

	// At the bound the oldest unclaimed message makes room.
	h.put("x", msg("x"), at(10), 2)
	h.put("y", msg("y"), at(10), 2)
	h.take("x")
	if evicted := h.put("z", msg("z"), at(10), 2); evicted {
		t.Fatal("put evicted with room left")
	}
	if evicted := h.put("w", msg("w"), at(10), 2); !evicted {
		t.Fatal("put at the bound evicted nothing")
	}
	if _, ok := h.take("y"); ok {
		t.Fatal("y, the oldest, was not evicted")
	}
	if _, ok := h.take("z"); !ok {
		t.Fatal("z was evicted")
	}
}
