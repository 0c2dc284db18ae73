//go:build linux

package engine

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/monoclock"
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
	rc    syscall.RawConn
	t0    time.Time // a reading of time.Now ...
	mono0 int64     // ... and CLOCK_MONOTONIC's at that instant, in ns (monoclock.Now)
	stop  func() bool
	timer *time.Timer // where no timerfd could be made
	ctx   context.Context
	// wakeLate is how late the timerfd's wake-ups come, on average (a
	// moving mean, at most maxWakeLate): on a virtual machine whose idle
	// CPU the hypervisor parks, tens of microseconds. While quiet says
	// that no request is in flight, a wait longer than twice that wakes
	// that much early and spins until its time, holding the P for those
	// few microseconds: the wake-up's latency no longer delays the
	// arrival, and no response waits for the spin.
	wakeLate int64
	quiet    func() bool
}

// newAlarm returns an alarm whose waits end early when ctx does; quiet (or
// nil) says when no request is in flight.
func newAlarm(ctx context.Context, quiet func() bool) *alarm {
	a := &alarm{ctx: ctx, quiet: quiet}
	fd, err := -1, error(unix.ENOTSUP)
	if !phttp.GoTimers {
		fd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	}
	if err != nil {
		a.timer = time.NewTimer(time.Hour)
		return a
	}
	a.f = os.NewFile(uintptr(fd), "timerfd")
	if a.rc, err = a.f.SyscallConn(); err != nil { // not seen for a timerfd
		a.f.Close()
		a.f, a.timer = nil, time.NewTimer(time.Hour)
		return a
	}
	a.t0, a.mono0 = monoclock.Now()
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
	// Early by the usual lateness of a wake-up when the wait is long, and
	// nothing is in flight whose response the spin below would hold up.
	early := time.Duration(a.wakeLate)
	if d-time.Since(a.t0) <= 2*early || a.quiet == nil || !a.quiet() {
		early = 0
	}
	ok, err := a.ring(d - early)
	switch {
	case err != nil: // not seen (a valid descriptor and time): a Go timer from now on
		a.stop()
		a.f.Close()
		a.timer = time.NewTimer(time.Hour)
		return sleepUntil(a.ctx, a.timer, t)
	case !ok:
		return false
	}
	late := min(time.Since(a.t0)-(d-early), maxWakeLate)
	a.wakeLate += (int64(late) - a.wakeLate) / 16
	if time.Since(a.t0) < d {
		if !a.quiet() { // a request went out meanwhile: no spinning
			return a.wait(t)
		}
		for time.Since(a.t0) < d { // a few microseconds: the P is ours
		}
	}
	return a.ctx.Err() == nil
}

// ring waits until d after t0 on the timerfd; false if the context ended
// first. The timer is armed inside the read, so that the read waits in the
// netpoller at once rather than failing with EAGAIN first: one system call
// fewer per wait. mono0 is t0's instant to within a few hundred
// nanoseconds either way: a ring that comes before d is spun out in wait.
func (a *alarm) ring(d time.Duration) (bool, error) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(a.mono0 + int64(d))}
	var err error
	armed := false
	rerr := a.rc.Read(func(fd uintptr) bool {
		if !armed {
			armed = true
			err = unix.TimerfdSettime(int(fd), unix.TFD_TIMER_ABSTIME, &spec, nil)
			return err != nil
		}
		var buf [8]byte
		_, err = unix.Read(int(fd), buf[:])
		return err != unix.EAGAIN && err != unix.EINTR
	})
	switch {
	case errors.Is(rerr, os.ErrDeadlineExceeded):
		return false, nil
	case rerr != nil:
		return false, rerr
	}
	return err == nil, err
}

// maxWakeLate bounds how early the alarm wakes (alarm.wakeLate).
const maxWakeLate = 100 * time.Microsecond

// close releases the alarm.
func (a *alarm) close() {
	if a.timer != nil {
		a.timer.Stop()
		return
	}
	a.stop()
	a.f.Close()
}
