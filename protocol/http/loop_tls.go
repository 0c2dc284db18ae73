//go:build linux

package http

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perflab/perflab/metrics"
)

// https on the event loop: crypto/tls runs over tlsConn, a net.Conn whose
// socket only the loop reads and writes, so the loop never blocks.
//
// After the handshake the loop alone uses the tls.Conn. tlsConn's Read is
// a non-blocking read(2) that returns EAGAIN when the socket is empty:
// EAGAIN is a net.Error whose Temporary() is true, and crypto/tls (Go
// 1.26, conn.go, readRecordOrCCS) makes only errors that are not temporary
// sticky, keeping the bytes of a record read so far in its input buffer,
// so the next Read, after the next EPOLLIN, goes on where this one
// stopped (TestTLSRecordSplitAcrossReads). tlsConn's Write is a
// non-blocking write(2); what the socket does not take is queued and
// written on EPOLLOUT.
//
// The handshake cannot be driven that way: crypto/tls keeps the first
// error a handshake returns (Conn.handshakeErr) and cannot resume it. So
// it runs on a goroutine of its own, whose Reads wait for the ciphertext
// the loop reads from the socket and hands over. Its Writes go to the
// socket at once, non-blocking, and what the socket does not take is
// queued for the loop to write (a posted flush, then EPOLLOUT). The
// goroutine and the loop share the queues and the socket's writing under
// a mutex, which the loop also takes to mark the connection closed before
// it closes the socket: the goroutine never writes to a descriptor that
// another connection may have by then. The goroutine's last act is to
// post its result to the loop, after which it touches nothing: Loop.Post's
// mutex orders everything it did before the loop's next use of the
// tls.Conn. The request's deadline covers the handshake (the loop's
// timeout scan fails it, as any request in flight, and a failure or the
// loop's end closes tlsConn, which ends the goroutine's wait); its result,
// when it comes after that, finds the connection gone and is dropped.
//
// So a connection costs a goroutine for its handshake, and a kept-alive
// request costs one tls Write and one Read on the loop. Configurations
// and a session cache are shared per Client (loopTLS), so that a
// reconnection, after the server closed an idle connection, resumes the
// session on any loop.
type tlsConn struct {
	x      *Exchange
	fd     int
	conn   *tls.Conn
	remote net.Addr
	flush  func() // posted to the loop when the handshake queued output
	// direct is set by the loop once the handshake has succeeded: from then
	// on only the loop uses what follows, without the lock.
	direct bool

	mu     sync.Mutex
	ready  sync.Cond // in or inErr changed
	in     []byte    // ciphertext read by the loop that crypto/tls has not taken yet
	inErr  error     // what ended the input: EOF, a socket error, close
	out    []byte    // ciphertext not yet written to the socket
	posted bool      // flush is posted
	closed bool      // the loop is closing the socket
}

// loopTLS is the TLS configuration the loops of one Client share.
type loopTLS struct {
	mu     sync.Mutex
	byName map[string]*tls.Config
	cache  tls.ClientSessionCache
}

// tlsConfig returns the configuration for a server name (SNI and the name
// its certificate is verified against): the plan's certificate
// authorities and insecure_skip_verify, ALPN http/1.1 (h2 with
// http.version 2), and the client's session cache.
func (c *Client) tlsConfig(serverName string) *tls.Config {
	t := &c.loopTLS
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg := t.byName[serverName]; cfg != nil {
		return cfg
	}
	if t.byName == nil {
		t.byName = map[string]*tls.Config{}
		t.cache = tls.NewLRUClientSessionCache(0)
	}
	cfg := &tls.Config{
		ServerName:         serverName,
		RootCAs:            c.opts.RootCAs,
		InsecureSkipVerify: c.opts.InsecureSkipVerify, //nolint:gosec // opt-in, for test systems
		NextProtos:         []string{"http/1.1"},
		ClientSessionCache: t.cache,
	}
	if c.opts.HTTP2 {
		cfg.NextProtos = []string{"h2"}
	}
	t.byName[serverName] = cfg
	return cfg
}

// newTLS returns the TLS of a connection being opened to an https origin.
func (x *Exchange) newTLS(sa syscall.Sockaddr, origin []byte) *tlsConn {
	host, _, _ := net.SplitHostPort(hostPort(string(origin))) // dialled: it parses
	c := &tlsConn{x: x, fd: x.fd, remote: sockaddrAddr(sa)}
	c.ready.L = &c.mu
	c.flush = c.flushPosted
	c.conn = tls.Client(c, x.l.c.tlsConfig(strings.Trim(host, "[]")))
	return c
}

func sockaddrAddr(sa syscall.Sockaddr) net.Addr {
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: a.Addr[:], Port: a.Port}
	case *syscall.SockaddrInet6:
		return &net.TCPAddr{IP: a.Addr[:], Port: a.Port}
	}
	return &net.TCPAddr{}
}

// handshakes counts the handshakes' goroutines, for tests.
var handshakes atomic.Int64

// handshake starts the handshake on a connection just opened; readable
// says whether the server has sent something already.
func (c *tlsConn) handshake(readable bool) {
	c.x.state = stateHandshaking
	l := c.x.l
	handshakes.Add(1)
	go func() {
		err := c.conn.Handshake()
		handshakes.Add(-1)
		l.Post(func() { c.handshaken(err) })
	}()
	if readable {
		c.feed()
	}
}

// handshaken runs on the loop when the handshake has ended: the request
// is written, or fails.
func (c *tlsConn) handshaken(err error) {
	x := c.x
	if x.tls != c {
		return // the request failed, or its connection closed, meanwhile
	}
	if err != nil {
		x.fail(handshakeKind(err), "tls handshake: "+err.Error())
		return
	}
	c.direct = true
	x.state = stateWriting
	x.readable = len(c.in) > 0 || c.inErr != nil
	x.write()
}

// handshakeKind classifies a failed handshake as the pooled client does
// (Classify): the server closing or resetting the connection is
// connection_reset; anything else, a certificate that does not verify
// included, is tls.
func handshakeKind(err error) metrics.ErrKind {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return metrics.ConnReset
	case errors.Is(err, syscall.ETIMEDOUT):
		return metrics.Timeout
	}
	return metrics.TLS
}

// event handles the socket's readiness during the handshake.
func (c *tlsConn) event(events uint32, in bool) {
	if events&(syscall.EPOLLOUT|syscall.EPOLLERR) != 0 {
		c.mu.Lock()
		err := c.writeOut()
		c.mu.Unlock()
		if err != nil {
			c.endInput(err)
		}
	}
	if in {
		c.feed()
	}
}

// maxHandshakeInput bounds what the loop reads for a handshake: a server
// sends a few KB of certificates.
const maxHandshakeInput = 1 << 20

// feed reads what the socket has and hands it to the handshake.
func (c *tlsConn) feed() {
	rb := c.x.l.rbuf
	for {
		n, err := rawRead(c.fd, rb)
		switch {
		case errors.Is(err, syscall.EAGAIN):
			return
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			c.endInput(err)
			return
		case n == 0:
			c.endInput(io.EOF)
			return
		}
		c.mu.Lock()
		if len(c.in)+n > maxHandshakeInput && c.inErr == nil {
			c.inErr = errors.New("tls: the server sent over 1 MB in the handshake")
		}
		if c.inErr != nil {
			c.mu.Unlock()
			return
		}
		c.in = append(c.in, rb[:n]...)
		c.ready.Signal()
		c.mu.Unlock()
	}
}

// endInput ends the handshake's input with err, unless it has ended.
func (c *tlsConn) endInput(err error) {
	c.mu.Lock()
	if c.inErr == nil {
		c.inErr = err
	}
	c.ready.Signal()
	c.mu.Unlock()
}

// flushPosted writes, on the loop, what the handshake queued, unless the
// connection has closed meanwhile (its descriptor's number may be another
// connection's by now).
func (c *tlsConn) flushPosted() {
	if c.x.tls != c {
		return
	}
	c.mu.Lock()
	c.posted = false
	err := c.writeOut()
	c.mu.Unlock()
	if err != nil {
		c.endInput(err)
	}
}

// writeOut writes the queued ciphertext until the socket takes no more.
// During the handshake c.mu must be held.
func (c *tlsConn) writeOut() error {
	for len(c.out) > 0 {
		n, err := rawWrite(c.fd, c.out)
		switch {
		case err == nil:
			c.out = c.out[:copy(c.out, c.out[n:])]
		case errors.Is(err, syscall.EAGAIN):
			return nil // on EPOLLOUT
		case errors.Is(err, syscall.EINTR):
		default:
			return err
		}
	}
	return nil
}

// close ends the connection's TLS; a handshake waiting for input ends.
func (c *tlsConn) close() {
	if c.direct {
		return
	}
	c.mu.Lock()
	c.inErr, c.closed = net.ErrClosed, true
	c.ready.Signal()
	c.mu.Unlock()
}

// writeTLS is Exchange.write for TLS: crypto/tls encrypts the whole
// request at once, and the state moves on when the socket has taken it.
func (x *Exchange) writeTLS() {
	c := x.tls
	if x.wpos < len(x.wbuf) {
		if _, err := c.conn.Write(x.wbuf[x.wpos:]); err != nil {
			x.fail(metrics.Write, "write: "+err.Error())
			return
		}
		x.wpos = len(x.wbuf)
	}
	if err := c.writeOut(); err != nil {
		x.fail(metrics.Write, "write: "+err.Error())
		return
	}
	if len(c.out) > 0 {
		return // the next EPOLLOUT goes on
	}
	x.state = stateReading
	if x.readable {
		x.read()
	}
}

// read is the plaintext counterpart of rawRead for Exchange.read: EAGAIN
// until a whole record has arrived, 0 bytes when the server closed the
// connection, and a tlsError when the record layer failed.
func (c *tlsConn) read(b []byte) (int, error) {
	n, err := c.conn.Read(b)
	if n > 0 {
		return n, nil // an error comes again with the next Read
	}
	if err == syscall.EAGAIN { //nolint:errorlint // returned as is: the common case, kept cheap
		if len(c.out) > 0 { // a post-handshake message's answer (a key update)
			c.writeOut() //nolint:errcheck // a broken socket fails the next read or write
		}
		return 0, err
	}
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0, syscall.EAGAIN // not returned for a non-empty b; never taken as the end
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return 0, nil // closed, with or without close_notify
	case errors.As(err, &errno):
		return 0, errno
	}
	return 0, &tlsError{err}
}

// tlsError is a failure of the record layer (a bad record, an alert from
// the server): kind tls, as the pooled client classifies it.
type tlsError struct{ err error }

func (e *tlsError) Error() string { return e.err.Error() }
func (e *tlsError) Unwrap() error { return e.err }

// readKind classifies a read error other than a reset or a timeout.
func readKind(err error) metrics.ErrKind {
	var te *tlsError
	if errors.As(err, &te) {
		return metrics.TLS
	}
	return metrics.Read
}

// Read is crypto/tls reading ciphertext. After the handshake it reads the
// socket (what the loop read for the handshake and crypto/tls did not take
// comes first); during the handshake it waits for the loop to hand
// ciphertext over.
func (c *tlsConn) Read(b []byte) (int, error) {
	if c.direct {
		if len(c.in) > 0 {
			n := copy(b, c.in)
			if c.in = c.in[n:]; len(c.in) == 0 {
				c.in = nil
			}
			return n, nil
		}
		n, err := rawRead(c.fd, b)
		switch {
		case err != nil:
			return 0, err // EAGAIN, EINTR: temporary, crypto/tls tries again on the next Read
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.in) == 0 && c.inErr == nil {
		c.ready.Wait()
	}
	if len(c.in) == 0 {
		return 0, c.inErr
	}
	n := copy(b, c.in)
	c.in = c.in[:copy(c.in, c.in[n:])]
	return n, nil
}

// Write is crypto/tls writing ciphertext: to the socket at once; what it
// does not take is queued, written by the loop.
func (c *tlsConn) Write(b []byte) (int, error) {
	if !c.direct {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return 0, net.ErrClosed
		}
	}
	n := 0
	if len(c.out) == 0 {
		var err error
		if n, err = rawWrite(c.fd, b); err != nil {
			if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR) {
				return 0, err
			}
			n = 0
		}
		if n == len(b) {
			return n, nil
		}
	}
	c.out = append(c.out, b[n:]...)
	if c.direct {
		return len(b), c.writeOut()
	}
	if !c.posted { // the loop writes the rest, and on EPOLLOUT
		c.posted = true
		c.x.l.Post(c.flush)
	}
	return len(b), nil
}

func (c *tlsConn) Close() error                     { return nil } // the loop closes the socket
func (c *tlsConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *tlsConn) RemoteAddr() net.Addr             { return c.remote }
func (c *tlsConn) SetDeadline(time.Time) error      { return nil } // the loop's timeout scan bounds the request
func (c *tlsConn) SetReadDeadline(time.Time) error  { return nil }
func (c *tlsConn) SetWriteDeadline(time.Time) error { return nil }
