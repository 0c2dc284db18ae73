// Package monoclock pairs a time.Time with the kernel's CLOCK_MONOTONIC
// reading of the same instant, for code that arms a timerfd (absolute
// CLOCK_MONOTONIC times) for moments it keeps as offsets from a time.Time.
//
// Reading the two clocks one after the other leaves whatever ran between
// the reads in every alarm armed from them: an allocation that met a
// garbage collection between them once made an event loop's timers ring
// 100-500 µs late for a whole run (its start delay's median rose from 1 to
// over 100 µs), and the loop's estimate of its wake-ups' lateness took the
// offset for the hypervisor's.
package monoclock

import (
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// Now returns time.Now() and CLOCK_MONOTONIC's reading, in nanoseconds, at
// the same instant: the monotonic clock is read just before and just after
// time.Now, and of three tries the one whose reads are closest is kept
// (a preemption between reads widens one try, rarely three), with the
// instant taken as their midpoint. Go's monotonic clock is
// CLOCK_MONOTONIC, so time.Since(t) and the kernel's clock minus mono then
// agree to within half that gap, well under a microsecond.
func Now() (t time.Time, mono int64) {
	best := int64(math.MaxInt64)
	for range 3 {
		var a, b unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &a) //nolint:errcheck // cannot fail for CLOCK_MONOTONIC
		now := time.Now()
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &b) //nolint:errcheck // as above
		if gap := b.Nano() - a.Nano(); gap < best {
			best, t, mono = gap, now, a.Nano()+gap/2
		}
	}
	return t, mono
}

// Mono is CLOCK_MONOTONIC's reading now, in nanoseconds.
func Mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) //nolint:errcheck // cannot fail for CLOCK_MONOTONIC
	return ts.Nano()
}
