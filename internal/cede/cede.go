// Package cede lets bookkeeping that runs beside the load (closing an
// interval, writing it, the monitors) give the CPU to the goroutines that
// start iterations and read responses, in slices short enough that no
// iteration waits long for it.
//
// Go's scheduler runs a goroutine until it blocks: one that becomes ready
// meanwhile (the event loop or the arrival pacer, woken by their timerfd
// through the netpoller) waits for the running one to block, or for sysmon
// to preempt it after 10 ms. With GOMAXPROCS=1, as the benchmarks run, a
// millisecond of histogram merging and encoding at each interval's end
// thus started every iteration due in that millisecond late. runtime.Gosched
// does not help: the scheduler takes the yielding goroutine back from its
// run queue before it polls the network. A Slicer blocks instead, for a few
// microseconds, once a slice of work has run: the scheduler then polls the
// network, and whatever is ready runs first.
package cede

import "time"

// Slice is how much work a Slicer lets run between two pauses: an
// iteration due meanwhile starts at most about this late because of it.
const Slice = 40 * time.Microsecond

// Pause is how long a Slicer blocks when nothing else is ready to run:
// long enough that its own wake-up is not yet due when the scheduler polls
// the network (a few microseconds after it blocks), for the netpoller
// hands the scheduler the last-ready goroutine first, and the slicer's
// would run again before one woken earlier.
const Pause = 25 * time.Microsecond

// pauseFor is Pause; tests lengthen it.
var pauseFor = Pause

// A Slicer cuts a goroutine's work into slices (Point). Its zero value is
// not ready: use New. It is used by one goroutine at a time.
type Slicer struct {
	since  time.Time
	pauser pauser
	pauses int
}

// New returns a slicer whose first slice starts now. Close it when done.
func New() *Slicer { return &Slicer{since: time.Now(), pauser: newPauser()} }

// Point is a place where the work can pause: when the slice since the last
// pause (or New, or Start) has run out, it blocks for a moment so that the
// goroutines that are ready run first. A nil Slicer never pauses.
func (s *Slicer) Point() {
	if s == nil || time.Since(s.since) < Slice {
		return
	}
	s.pauser.pause(pauseFor)
	s.pauses++
	s.since = time.Now()
}

// Start begins a slice: the time the goroutine spent blocked elsewhere
// (waiting for its next tick) is not work.
func (s *Slicer) Start() {
	if s != nil {
		s.since = time.Now()
	}
}

// Pauses is how many times Point paused.
func (s *Slicer) Pauses() int {
	if s == nil {
		return 0
	}
	return s.pauses
}

// Close releases what the slicer holds.
func (s *Slicer) Close() {
	if s != nil {
		s.pauser.close()
	}
}
