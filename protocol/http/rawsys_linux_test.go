package http

import (
	"net"
	"syscall"
	"testing"
)

// rawConnect connects to the address it is given, IPv4 and IPv6: its
// sockaddr is laid out as the kernel reads it (the port in network order).
func TestRawConnect(t *testing.T) {
	for _, c := range []struct {
		network, addr string
		family        int
	}{{"tcp4", "127.0.0.1:0", syscall.AF_INET}, {"tcp6", "[::1]:0", syscall.AF_INET6}} {
		ln, err := net.Listen(c.network, c.addr)
		if err != nil {
			t.Logf("%s: %v (skipped)", c.network, err)
			continue
		}
		defer ln.Close()
		a := ln.Addr().(*net.TCPAddr)
		var sa syscall.Sockaddr
		if c.family == syscall.AF_INET {
			s := &syscall.SockaddrInet4{Port: a.Port}
			copy(s.Addr[:], a.IP.To4())
			sa = s
		} else {
			s := &syscall.SockaddrInet6{Port: a.Port}
			copy(s.Addr[:], a.IP.To16())
			sa = s
		}
		fd, err := syscall.Socket(c.family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0) // blocking: connect completes
		if err != nil {
			t.Fatal(err)
		}
		if err := rawSetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			t.Fatal(err)
		}
		if v, err := rawGetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY); err != nil || v == 0 {
			t.Fatalf("TCP_NODELAY reads back %d, %v", v, err)
		}
		if err := rawConnect(fd, sa); err != nil {
			t.Fatalf("%s: connect to %v: %v", c.network, a, err)
		}
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if got := conn.RemoteAddr().(*net.TCPAddr).IP; !got.IsLoopback() {
			t.Errorf("%s: accepted a connection from %v", c.network, got)
		}
		conn.Close()
		if err := rawClose(fd); err != nil {
			t.Fatal(err)
		}
		if err := rawClose(fd); err != syscall.EBADF {
			t.Errorf("closing twice: %v, want EBADF", err)
		}
	}
}
