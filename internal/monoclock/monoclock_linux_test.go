package monoclock

import (
	"testing"
	"time"
)

// offset is how far mono, paired with t, is from the kernel's clock read
// against time.Since(t) now: bracketed as Now brackets, closest of five.
func offset(t time.Time, mono int64) time.Duration {
	best, off := time.Duration(1<<62), time.Duration(0)
	for range 5 {
		a := time.Since(t)
		m := Mono()
		b := time.Since(t)
		if b-a < best {
			best, off = b-a, time.Duration(m-mono)-(a+b)/2
		}
	}
	return off
}

// The pair agrees with the clocks read later, however long after: the
// offset is a few hundred nanoseconds (the bound is 100 µs, for a machine
// busy enough to preempt every one of the tries), where reading the
// clocks apart leaves the gap between the reads (a sleep of 2 ms here,
// as a collection between them would).
func TestNowPairsTheClocks(t *testing.T) {
	tm, mono := Now()
	time.Sleep(2 * time.Millisecond)
	if off := offset(tm, mono); off < -100*time.Microsecond || off > 100*time.Microsecond {
		t.Fatalf("CLOCK_MONOTONIC paired with time.Now is %v off", off)
	}
	// The check fails the pairing it guards against.
	apart := time.Now()
	time.Sleep(2 * time.Millisecond)
	late := Mono()
	if off := offset(apart, late); off > -time.Millisecond {
		t.Fatalf("clocks read 2 ms apart are %v off; the check cannot see an offset", off)
	}
}
