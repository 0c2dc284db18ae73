package http

import (
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// The dialer and connection wrapper mark where a transport error happened,
// so that connect, write and read failures are told apart in the results.

type dialError struct{ err error }

func (e *dialError) Error() string { return "connect: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

type writeError struct{ err error }

func (e *writeError) Error() string { return "write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// Timeout keeps a write timeout recognisable as one.
func (e *writeError) Timeout() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Timeout()
}

// Temporary is part of net.Error.
func (e *writeError) Temporary() bool { return false }

// tagConn tags its write errors. Read errors pass through untouched: the
// HTTP client reads their types (a timeout, io.EOF for "the server closed
// the connection") and Classify recognises them as they are.
type tagConn struct {
	net.Conn
	used  bool // a write deadline has been set
	local *connAddr
	// reset is set once a read has seen the connection reset.
	reset atomic.Bool
}

// connAddr is a connection's local address as fasthttp gives it to each
// response (Response.LocalAddr): by it a failed request finds out whether
// its connection was reset (resetSeen), which fasthttp's own error does
// not say: a reset before a response's first byte is io.EOF to it, as a
// close is.
type connAddr struct {
	net.Addr
	c *tagConn
}

func (c *tagConn) LocalAddr() net.Addr { return c.local }

func (c *tagConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil && errors.Is(err, syscall.ECONNRESET) {
		c.reset.Store(true)
	}
	return n, err
}

// resetSeen reports whether the connection of a response (its local
// address, fasthttp's Response.LocalAddr) was reset.
func resetSeen(local net.Addr) bool {
	a, ok := local.(*connAddr)
	return ok && a.c.reset.Load()
}

func (c *tagConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}

// SetWriteDeadline sets the read deadline as well the first time. fasthttp
// sets only the write deadline before it writes a request, and over TLS
// the first write runs the handshake, which reads: without a read
// deadline, a server that accepts the connection and never answers the
// handshake would hold the request, and its VU, forever. fasthttp sets the
// read deadline itself before it reads each response, so later requests
// need no more (and save a timer update each).
func (c *tagConn) SetWriteDeadline(t time.Time) error {
	if c.used {
		return c.Conn.SetWriteDeadline(t)
	}
	c.used = true
	return c.Conn.SetDeadline(t)
}

// dialer opens TCP connections within the connect timeout.
func dialer(connectTimeout time.Duration) func(addr string, timeout time.Duration) (net.Conn, error) {
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		if connectTimeout > 0 && (timeout <= 0 || connectTimeout < timeout) {
			timeout = connectTimeout
		}
		c, err := net.DialTimeout("tcp", addr, timeout)
		if err != nil {
			return nil, &dialError{err}
		}
		tc := &tagConn{Conn: c}
		tc.local = &connAddr{Addr: c.LocalAddr(), c: tc}
		return tc, nil
	}
}
