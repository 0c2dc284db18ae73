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
type rawIO struct{ rc syscall.RawConn }

func newRawIO(c net.Conn) (byteIO, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return connIO{c}, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	return rawIO{rc}, nil
}

func (r rawIO) write(b []byte) error { return r.move(b, r.rc.Write, syscall.SYS_WRITE) }

func (r rawIO) read(b []byte) error { return r.move(b, r.rc.Read, syscall.SYS_READ) }

// move makes the system call nr on b until it moved its byte, waiting
// (wait: the RawConn's Read or Write) while the socket is not ready.
func (r rawIO) move(b []byte, wait func(func(uintptr) bool) error, nr uintptr) error {
	var err error
	werr := wait(func(fd uintptr) bool {
		n, _, errno := syscall.RawSyscall(nr, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch {
		case errno == syscall.EAGAIN:
			return false
		case errno != 0:
			err = errno
		case n == 0:
			err = net.ErrClosed // the other end closed (a read of 0)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}
