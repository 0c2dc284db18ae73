package cede

import (
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// With one P, a goroutine woken by the netpoller (as the event loop and
// the arrival pacer are, by their timerfd) runs at a slicer's first pause:
// work cut by a slicer holds it up for a slice at most, where a goroutine
// that never blocks would hold it until sysmon preempts it (10 ms).
func TestPointLetsANetpollWaiterRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// A long pause: the slicer's own wake-up comes after the scheduler
	// has polled the network, however busy the machine (cede.Pause).
	pauseFor = 50 * time.Millisecond
	defer func() { pauseFor = Pause }()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var ran atomic.Bool
	parked := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		close(parked)
		var b [1]byte
		r.Read(b[:]) //nolint:errcheck // the byte, or the pipe's end
		ran.Store(true)
	}()
	<-parked // it runs until it blocks in Read, in the netpoller
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	s := New()
	defer s.Close()
	// Work, cut into slices, until the reader has run.
	for !ran.Load() && s.Pauses() < 100 {
		for start := time.Now(); time.Since(start) < Slice; {
		}
		s.Point()
	}
	if !ran.Load() || s.Pauses() != 1 {
		t.Fatalf("the reader ran: %v, after %d pauses; want after the first", ran.Load(), s.Pauses())
	}
	<-done
}

// A nil slicer, as a collector's Stop has, never pauses.
func TestNilSlicer(t *testing.T) {
	var s *Slicer
	s.Start()
	s.Point()
	s.Close()
	if s.Pauses() != 0 {
		t.Fatal("a nil slicer paused")
	}
}
