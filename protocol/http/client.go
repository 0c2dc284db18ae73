package http

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// GoTimers makes the event loop and the arrival pacer wait for their timers
// as perflab did before 2026-11-25, in the Go runtime's netpoller, which
// wakes in whole milliseconds, instead of on a timerfd: set by the
// environment variable PERFLAB_GO_TIMERS=1, for bench/start-delay.sh's
// figures of what the timerfd changed. Never needed otherwise.
var GoTimers = os.Getenv("PERFLAB_GO_TIMERS") == "1"

// Options configures a Client.
type Options struct {
	// Timeout bounds one request from dial to the last body byte.
	Timeout time.Duration
	// ConnectTimeout bounds opening a connection (default: Timeout).
	ConnectTimeout time.Duration
	// RootCAs verifies servers' certificates (default: the system's).
	RootCAs *x509.CertPool
	// KeepAlive reuses connections between requests.
	KeepAlive bool
	// MaxConnsPerHost caps open connections to one host.
	MaxConnsPerHost int
	// InsecureSkipVerify accepts any TLS certificate.
	InsecureSkipVerify bool
	// UserAgent is sent unless a step sets its own.
	UserAgent string
	// PerVU gives every VU a connection of its own (ForVU) instead of a
	// pool shared by all VUs.
	PerVU bool
	// HTTP2 sends HTTP/2 (TLS with ALPN for https, h2c for http URLs)
	// through the standard library instead of HTTP/1.1 through fasthttp.
	HTTP2 bool
	// BodyLimit is how many bytes of a response body are kept for the
	// checks and extractions that read it (default plan.DefaultBodyLimit;
	// a step's body_limit overrides it); the rest is read and counted.
	BodyLimit int64
	// ParseLimit is the largest body parsed into a tree for css, xpath
	// and the JSON paths that are not names and indexes only (default
	// plan.DefaultParseLimit); a larger one fails the extraction or check.
	ParseLimit int64
	// ServerTime, if set, reads the time the server reports it spent on
	// each response (Result.Server).
	ServerTime *ServerTime
	// Failures, if set, is where failed requests and their responses go
	// (a run's failures.jsonl), while it has room.
	Failures *FailureLog
	// Cookies is what each VU's cookie jar keeps (plan.CookiesKeep, the
	// default, plan.CookiesPerIteration, plan.CookiesOff): the jar is the
	// VU's Scratch's.
	Cookies string
}

// Client sends requests. It is safe for concurrent use by many VUs.
type Client struct {
	opts      Options
	c         *fasthttp.Client
	std       *nethttp.Client // HTTP/2
	timeout   time.Duration
	keepAlive bool
	userAgent string
	loopTLS   loopTLS // https on event loops (loop_tls.go)
}

// NewClient returns a client with connection pools sized by opts.
func NewClient(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxConnsPerHost <= 0 {
		opts.MaxConnsPerHost = 512
	}
	if opts.BodyLimit <= 0 {
		opts.BodyLimit = plan.DefaultBodyLimit
	}
	if opts.ParseLimit <= 0 {
		opts.ParseLimit = plan.DefaultParseLimit
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "perflab"
	}
	c := &fasthttp.Client{
		Name:                      opts.UserAgent,
		MaxConnsPerHost:           opts.MaxConnsPerHost,
		MaxConnWaitTimeout:        opts.Timeout,
		MaxIdemponentCallAttempts: 1,
		RetryIfErr:                func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		ReadBufferSize:            16 << 10,
		WriteBufferSize:           4 << 10,
		// Shorter than the idle timeouts of common servers (Node.js 5 s), so
		// a VU rarely reuses a connection the server has just closed.
		MaxIdleConnDuration:           4 * time.Second,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		TLSConfig:                     &tls.Config{InsecureSkipVerify: opts.InsecureSkipVerify, RootCAs: opts.RootCAs}, //nolint:gosec // opt-in, for test systems
		DialTimeout:                   dialer(opts.ConnectTimeout),
		// Bodies are read as a stream (Client.Do), so that one larger than
		// the body limit is counted without being held in memory.
		StreamResponseBody: true,
	}
	cl := &Client{opts: opts, c: c, timeout: opts.Timeout, keepAlive: opts.KeepAlive, userAgent: opts.UserAgent}
	if opts.HTTP2 {
		cl.std = newStdClient(opts)
	}
	return cl
}

// bodyLimit is the body limit of r's responses, and how much of a body to
// keep: the limit if a check or an extraction reads the body, else nothing.
func (c *Client) bodyLimit(r *Request) (limit, keep int64) {
	limit = c.opts.BodyLimit
	if r.bodyLimit > 0 {
		limit = r.bodyLimit
	}
	if r.needsBody() {
		keep = limit
	}
	return limit, c.dumpKeep(keep, limit)
}

// dropBufs are what the bytes of bodies beyond what is kept are read
// into once a body is longer than a VU's own peek buffer: shared, so that
// a VU waiting between requests holds none (16 KB each, 10,000 VUs' 160
// MB); a short body (the most common) never takes one.
var dropBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// peekSize is a VU's own buffer for the bytes of a body it does not keep.
const peekSize = 256

// readBody reads a response body to its end, keeping its first keep bytes
// in s.body; it returns them and the body's size.
func readBody(body io.Reader, keep int64, s *Scratch) ([]byte, int64, error) {
	if cap(s.body) > 1<<20 { // one large response does not pin its buffer
		s.body = nil
	}
	kept, n := s.body[:0], int64(0)
	var drop *[]byte // the bytes beyond keep land here
	defer func() {
		s.body = kept
		if drop != nil {
			dropBufs.Put(drop)
		}
	}()
	for {
		var buf []byte
		peeking := false // buf is the VU's peek buffer
		if room := keep - int64(len(kept)); room > 0 {
			if len(kept) == cap(kept) {
				kept = slices.Grow(kept, int(min(room, int64(max(len(kept), 512)))))
			}
			buf = kept[len(kept):int(min(int64(cap(kept)), keep))]
		} else if drop != nil {
			buf = *drop
		} else {
			g := s.goroutine()
			if g.peek == nil {
				g.peek = make([]byte, peekSize)
			}
			buf, peeking = g.peek, true
		}
		m, err := body.Read(buf)
		n += int64(m)
		if peeking && m == peekSize {
			drop = dropBufs.Get().(*[]byte) // a long body
		}
		if int64(len(kept)) < keep {
			kept = kept[:len(kept)+m]
		}
		if err == io.EOF {
			return kept, n, nil
		}
		if err != nil {
			return kept, n, err
		}
	}
}

// Timeout bounds one request (Options.Timeout, or its default).
func (c *Client) Timeout() time.Duration { return c.timeout }

// ForVU returns the client a VU uses: c itself with a shared pool, or a
// client with one connection of the VU's own (Options.PerVU).
func (c *Client) ForVU() *Client {
	if !c.opts.PerVU {
		return c
	}
	o := c.opts
	o.PerVU, o.MaxConnsPerHost = false, 1
	return NewClient(o)
}

// CloseIdleConnections closes pooled connections.
func (c *Client) CloseIdleConnections() {
	c.c.CloseIdleConnections()
	if c.std != nil {
		c.std.CloseIdleConnections()
	}
}

// connectKind is the error kind of a connection that could not be opened,
// on either engine: generator_limit when this host is out of file
// descriptors or local ports (EMFILE, ENFILE, EADDRNOTAVAIL: not the
// target's failure), connection_refused, else connect (the connect
// timeout, an unreachable network).
func connectKind(err error) metrics.ErrKind {
	switch {
	case metrics.IsGeneratorLimit(err):
		return metrics.GeneratorLimit
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.ConnRefused
	}
	return metrics.Connect
}

// lookupKind is the error kind of a name that could not be looked up, on
// either engine: generator_limit when the resolver could not open its
// socket for want of a descriptor or a port (its error says so in text
// only), else dns.
func lookupKind(err error) metrics.ErrKind {
	if metrics.IsGeneratorLimit(err) || metrics.NamesGeneratorLimit(err.Error()) {
		return metrics.GeneratorLimit
	}
	return metrics.DNS
}

// describe says what a transport error of the pooled client was in the
// event loop's words, so that the same failure reads the same on either
// engine (metrics.MessageOf); reset says whether its connection was seen
// reset (resetSeen). The rest read as their errors do.
func describe(err error, reset bool) string {
	var de *dialError
	var dnsErr *net.DNSError
	var errno syscall.Errno
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &dnsErr):
		return dnsErr.Error()
	case errors.As(err, &de) && errors.As(err, &ne) && ne.Timeout():
		return "connect: timeout"
	case errors.As(err, &de) && errors.As(err, &errno):
		return "connect: " + errno.Error()
	case reset && (err == fasthttp.ErrConnectionClosed || err == io.EOF || errors.Is(err, syscall.ECONNRESET)):
		return "read: connection reset by peer"
	case err == fasthttp.ErrConnectionClosed, err == io.EOF:
		return "the server closed the connection before responding"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection mid-response"
	case errors.Is(err, fasthttp.ErrTimeout):
		return "timeout"
	case strings.HasPrefix(msg, "error when reading response headers: "):
		return "malformed response"
	}
	return msg
}

// Classify maps a transport error to an error kind: where it happened
// (connect, TLS, write, read) and what it was (refused, reset, timeout).
func Classify(err error) metrics.ErrKind {
	var dnsErr *net.DNSError
	var tlsRec tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var de *dialError
	var we *writeError
	switch {
	case err == nil:
		return metrics.OK
	case errors.As(err, &dnsErr):
		return lookupKind(err)
	case errors.As(err, &de), errors.Is(err, syscall.ECONNREFUSED), metrics.IsGeneratorLimit(err):
		return connectKind(err)
	case errors.As(err, &tlsRec), errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.Is(err, fasthttp.ErrTLSHandshakeTimeout), strings.Contains(err.Error(), "tls:"):
		return metrics.TLS
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		// Every connection allowed to the host was busy for the whole
		// timeout: the request was never sent.
		return metrics.NotSent
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, os.ErrDeadlineExceeded):
		return metrics.Timeout
	case errors.As(err, &we):
		return metrics.Write
	case errors.Is(err, syscall.ECONNRESET), err == fasthttp.ErrConnectionClosed, err == io.EOF:
		// The server closed or reset the connection before answering.
		return metrics.ConnReset
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), strings.Contains(err.Error(), "when reading response"):
		// A response cut short or malformed.
		return metrics.Read
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return metrics.Timeout
	}
	return metrics.Other
}
