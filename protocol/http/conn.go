package http

import (
	"errors"
	"net"
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
	used bool // a write deadline has been set
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
		return &tagConn{Conn: c}, nil
	}
}
