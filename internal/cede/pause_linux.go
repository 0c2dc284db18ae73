//go:build linux

package cede

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A pauser blocks on a timerfd read through the runtime's netpoller: the
// kernel's high-resolution timer ends the pause after microseconds, where
// a Go timer's wait in an otherwise idle process ends on a whole
// millisecond (epoll_wait's timeout). Blocking makes the scheduler poll
// the network, and run what it finds ready, before it runs the pauser's
// goroutine again.
type pauser struct {
	f  *os.File // nil: time.Sleep
	rc syscall.RawConn
}

func newPauser() pauser {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return pauser{}
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil { // not seen for a timerfd
		f.Close()
		return pauser{}
	}
	return pauser{f: f, rc: rc}
}

func (p pauser) pause(d time.Duration) {
	if p.f == nil {
		time.Sleep(d)
		return
	}
	// Armed inside the read, so that the read blocks in the netpoller at
	// once rather than failing with EAGAIN first.
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	armed := false
	err := p.rc.Read(func(fd uintptr) bool {
		if !armed {
			armed = true
			return unix.TimerfdSettime(int(fd), 0, &spec, nil) != nil
		}
		var buf [8]byte
		_, err := unix.Read(int(fd), buf[:])
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if err != nil { // not seen
		time.Sleep(d)
	}
}

func (p pauser) close() {
	if p.f != nil {
		p.f.Close()
	}
}
