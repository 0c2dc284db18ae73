package http

import (
	"syscall"
	"unsafe"
)

// The system calls of a new connection, made raw as the loop's reads and
// writes are: through the syscall package, connect, setsockopt, getsockopt
// and close tell the runtime the thread may block (entersyscall), which
// wakes its monitor thread (sysmon) from its sleep to poll every 20 µs for
// a while. An open model opens a connection for each arrival: at 600 a
// second, sysmon's wake-ups took an eighth of perflab's CPU, on the one
// core the loop runs on. None of these calls blocks on a non-blocking
// socket without SO_LINGER.

// rawConnect starts a non-blocking connect of fd to sa (EINPROGRESS: under
// way).
func rawConnect(fd int, sa syscall.Sockaddr) error {
	var buf [syscall.SizeofSockaddrInet6]byte
	var n uintptr
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		r := (*syscall.RawSockaddrInet4)(unsafe.Pointer(&buf[0]))
		r.Family = syscall.AF_INET
		r.Port = port(a.Port)
		r.Addr = a.Addr
		n = syscall.SizeofSockaddrInet4
	case *syscall.SockaddrInet6:
		r := (*syscall.RawSockaddrInet6)(unsafe.Pointer(&buf[0]))
		r.Family = syscall.AF_INET6
		r.Port = port(a.Port)
		r.Scope_id = a.ZoneId
		r.Addr = a.Addr
		n = syscall.SizeofSockaddrInet6
	default:
		return syscall.Connect(fd, sa)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), n); errno != 0 {
		return errno
	}
	return nil
}

// port is p in network byte order, as a sockaddr holds it.
func port(p int) uint16 {
	b := [2]byte{byte(p >> 8), byte(p)}
	return *(*uint16)(unsafe.Pointer(&b[0]))
}

// rawClose closes fd.
func rawClose(fd int) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// rawSetsockoptInt sets an int option of fd.
func rawSetsockoptInt(fd, level, opt, v int) error {
	x := int32(v)
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&x)), 4, 0); errno != 0 {
		return errno
	}
	return nil
}

// rawGetsockoptInt reads an int option of fd.
func rawGetsockoptInt(fd, level, opt int) (int, error) {
	var x int32
	n := uint32(4)
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&x)), uintptr(unsafe.Pointer(&n)), 0); errno != 0 {
		return 0, errno
	}
	return int(x), nil
}
