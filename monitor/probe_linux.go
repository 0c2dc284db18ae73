//go:build linux

package monitor

import (
	"net"
	"syscall"
	"unsafe"
)

// rawIO moves one byte over a loopback connection with raw system calls,
// waiting in the netpoller for the socket to be ready: a system call made
// through the runtime's own (net.Conn's Read and Write) wakes its monitor
// thread (sysmon) from its sleep, which then polls every 20 µs for a while;
// four of them for each round trip, 20 round trips a second, kept an idle
// perflab waking about 190 times a second.
//
// Each end of the connection has its own, used by one goroutine; what its
// system call works on is in its fields, so that moving a byte allocates
// nothing (a closure made at each call would).
type rawIO struct {
	rc   syscall.RawConn
	call func(fd uintptr) bool // r.syscall, made once
	nr   uintptr
	b    []byte
	err  error
}

func newRawIO(c net.Conn) (byteIO, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return connIO{c}, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawIO{rc: rc}
	r.call = r.syscall
	return r, nil
}

func (r *rawIO) write(b []byte) error {
	r.nr, r.b, r.err = syscall.SYS_WRITE, b, nil
	return r.result(r.rc.Write(r.call))
}

func (r *rawIO) read(b []byte) error {
	r.nr, r.b, r.err = syscall.SYS_READ, b, nil
	return r.result(r.rc.Read(r.call))
}

// syscall makes the system call r.nr on r.b until it moved its byte; false
// (wait for the socket to be ready) while it would block.
func (r *rawIO) syscall(fd uintptr) bool {
	n, _, errno := syscall.RawSyscall(r.nr, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
	switch {
	case errno == syscall.EAGAIN:
		return false
	case errno != 0:
		r.err = errno
	case n == 0:
		r.err = net.ErrClosed // the other end closed (a read of 0)
	}
	return true
}

func (r *rawIO) result(werr error) error {
	r.b = nil
	if werr != nil {
		return werr
	}
	return r.err
}
