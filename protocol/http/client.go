package http

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/perflab/perflab/metrics"
)

// Options configures a Client.
type Options struct {
	// Timeout bounds one request from dial to the last body byte.
	Timeout time.Duration
	// KeepAlive reuses connections between requests.
	KeepAlive bool
	// MaxConnsPerHost caps open connections to one host.
	MaxConnsPerHost int
	// InsecureSkipVerify accepts any TLS certificate.
	InsecureSkipVerify bool
	// UserAgent is sent unless a step sets its own.
	UserAgent string
}

// Client sends requests. It is safe for concurrent use by many VUs.
type Client struct {
	c         *fasthttp.Client
	timeout   time.Duration
	keepAlive bool
	userAgent string
}

// NewClient returns a client with connection pools sized by opts.
func NewClient(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxConnsPerHost <= 0 {
		opts.MaxConnsPerHost = 512
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "perflab"
	}
	c := &fasthttp.Client{
		Name:                          opts.UserAgent,
		MaxConnsPerHost:               opts.MaxConnsPerHost,
		MaxConnWaitTimeout:            opts.Timeout,
		MaxIdemponentCallAttempts:     1,
		RetryIfErr:                    func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		ReadBufferSize:                16 << 10,
		WriteBufferSize:               4 << 10,
		MaxIdleConnDuration:           30 * time.Second,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		TLSConfig:                     &tls.Config{InsecureSkipVerify: opts.InsecureSkipVerify}, //nolint:gosec // opt-in, for test systems
	}
	return &Client{c: c, timeout: opts.Timeout, keepAlive: opts.KeepAlive, userAgent: opts.UserAgent}
}

// CloseIdleConnections closes pooled connections.
func (c *Client) CloseIdleConnections() { c.c.CloseIdleConnections() }

// Classify maps a transport error to an error kind.
func Classify(err error) metrics.ErrKind {
	var dnsErr *net.DNSError
	var tlsRec tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case err == nil:
		return metrics.OK
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout),
		errors.Is(err, fasthttp.ErrTLSHandshakeTimeout), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, fasthttp.ErrNoFreeConns):
		return metrics.Timeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return metrics.ConnRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, fasthttp.ErrConnectionClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return metrics.ConnReset
	case errors.As(err, &dnsErr):
		return metrics.DNS
	case errors.As(err, &tlsRec), errors.As(err, &certErr), strings.Contains(err.Error(), "tls:"):
		return metrics.TLS
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return metrics.Timeout
	}
	return metrics.Other
}
