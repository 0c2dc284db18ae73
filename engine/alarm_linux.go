//go:build linux

package engine

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	phttp "github.com/perflab/perflab/protocol/http"
)

// An alarm wakes the arrival pacer at an iteration's due time to within
// microseconds. A Go timer cannot: when the process is otherwise idle the
// runtime waits for its next timer in epoll_wait, whose timeout is in whole
// milliseconds, rounded up below one, so an iteration due 0.3 ms from now
// starts 1 ms from now, and the iterations of an arrival-rate model start
// on a 1 ms grid, late by up to a millisecond. The alarm is a timerfd,
// armed for the absolute due time on CLOCK_MONOTONIC (the clock of Go's
// monotonic readings) and read through the runtime's netpoller: the
// kernel's high-resolution timer ends the wait, not the netpoller's
// timeout. A timerfd also has no timer slack, which a sleep has (50 µs).
type alarm struct {
	f     *os.File // nil with timer
	fd    int
	t0    time.Time // a reading of time.Now ...
	mono0 int64     // ... and of CLOCK_MONOTONIC just after it, in ns
	stop  func() bool
	timer *time.Timer // where no timerfd could be made
	ctx   context.Context
}

// newAlarm returns an alarm whose waits end early when ctx does.
func newAlarm(ctx context.Context) *alarm {
	a := &alarm{ctx: ctx}
	fd, err := -1, error(unix.ENOTSUP)
	if !phttp.GoTimers {
		fd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	}
	if err != nil {
		a.timer = time.NewTimer(time.Hour)
		return a
	}
	a.fd, a.f = fd, os.NewFile(uintptr(fd), "timerfd")
	a.t0 = time.Now()
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) //nolint:errcheck // cannot fail for CLOCK_MONOTONIC
	a.mono0 = ts.Nano()
	// A read deadline in the past ends the wait in progress and every later one.
	a.stop = context.AfterFunc(ctx, func() { a.f.SetReadDeadline(time.Unix(1, 0)) }) //nolint:errcheck // a file the netpoller took
	return a
}

// wait returns at t (a time with a monotonic reading), at once if t has
// passed; false if the context ended first.
func (a *alarm) wait(t time.Time) bool {
	if a.timer != nil {
		return sleepUntil(a.ctx, a.timer, t)
	}
	d := t.Sub(a.t0)
	if a.ctx.Err() != nil || time.Since(a.t0) >= d {
		return a.ctx.Err() == nil
	}
	// mono0 was read after t0: the alarm may ring a few hundred
	// nanoseconds after t, never before.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(a.mono0 + int64(d))}
	err := unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &spec, nil)
	var buf [8]byte
	for err == nil {
		if _, err = a.f.Read(buf[:]); err == nil {
			return a.ctx.Err() == nil
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return false
		}
		if errors.Is(err, unix.EINTR) {
			err = nil
		}
	}
	// Not seen (a valid descriptor and time): a Go timer from now on.
	a.stop()
	a.f.Close()
	a.timer = time.NewTimer(time.Hour)
	return sleepUntil(a.ctx, a.timer, t)
}

// close releases the alarm.
func (a *alarm) close() {
	if a.timer != nil {
		a.timer.Stop()
		return
	}
	a.stop()
	a.f.Close()
}
