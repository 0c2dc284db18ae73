package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	nethttp "net/http"
	"strings"
	"time"

	"github.com/perflab/perflab/metrics"
)

// The standard library's client sends HTTP/2: over TLS (negotiated with
// ALPN) for https URLs, and unencrypted with prior knowledge (h2c) for http
// URLs. HTTP/1.1 goes through fasthttp, which is cheaper per request.

func newStdClient(opts Options) *nethttp.Client {
	var p nethttp.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	dial := dialer(opts.ConnectTimeout)
	tr := &nethttp.Transport{
		Protocols:           &p,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: opts.InsecureSkipVerify, RootCAs: opts.RootCAs}, //nolint:gosec // opt-in
		MaxConnsPerHost:     opts.MaxConnsPerHost,
		MaxIdleConnsPerHost: opts.MaxConnsPerHost,
		DisableKeepAlives:   !opts.KeepAlive,
		DisableCompression:  true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dial(addr, opts.Timeout)
		},
	}
	return &nethttp.Client{
		Transport:     tr,
		CheckRedirect: func(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse },
	}
}

// doStd sends the request with the standard library's client.
func (c *Client) doStd(r *Request, vars Vars, s *Scratch) Result {
	b, err := r.appendURL(s.buf[:0], vars)
	if err != nil {
		return Result{Err: notSentKind(err), Detail: err.Error()}
	}
	u := string(b)
	var body io.Reader
	if r.body != nil {
		if b, err = r.body.AppendTo(b[:0], vars); err != nil {
			return Result{Err: notSentKind(err), Detail: err.Error()}
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	req, err := nethttp.NewRequestWithContext(ctx, string(r.method), u, body)
	if err != nil {
		return Result{Err: notSentKind(err), Detail: err.Error()}
	}
	req.Header.Set("User-Agent", c.userAgent)
	if err := r.eachHeader(vars, func(name, value string) {
		if strings.EqualFold(name, "Host") {
			req.Host = value
		}
		req.Header.Set(name, value)
	}); err != nil {
		return Result{Err: notSentKind(err), Detail: err.Error()}
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	start := time.Now()
	resp, err := c.std.Do(req)
	if err != nil {
		return Result{Start: start, Latency: time.Since(start), Err: classifyStd(ctx, err), Detail: err.Error()}
	}
	// Read the body fully; keep it only when a check or extraction needs it.
	limit, keep := c.bodyLimit(r)
	kept, n, err := readBody(resp.Body, keep, s)
	resp.Body.Close()
	lat := time.Since(start)
	if err != nil {
		return Result{Start: start, Latency: lat, Status: resp.StatusCode, Bytes: int(n), Err: classifyStd(ctx, err), Detail: err.Error()}
	}
	res := Result{Start: start, Status: resp.StatusCode, Bytes: int(n), Latency: lat}
	header := func(name string) ([]byte, bool) {
		v, ok := resp.Header[nethttp.CanonicalHeaderKey(name)]
		if !ok || len(v) == 0 {
			return nil, false
		}
		return []byte(v[0]), true
	}
	c.serverTime(&res, header)
	v := view{body: kept}
	if r.reads&readsHeaders != 0 {
		var b bytes.Buffer
		b.WriteString(resp.Proto + " " + resp.Status + "\r\n")
		resp.Header.Write(&b) //nolint:errcheck // a buffer takes every write
		v.headers = b.Bytes()
	}
	if r.reads&readsURL != 0 {
		v.url = []byte(u)
	}
	r.judge(&res, &v, header, vars, limit)
	r.keepLast(s, header, kept)
	return res
}

func classifyStd(ctx context.Context, err error) metrics.ErrKind {
	if ctx.Err() != nil {
		return metrics.Timeout
	}
	return Classify(err)
}

// needsBody reports whether the response body is read by a check or an
// extraction.
func (r *Request) needsBody() bool { return r.bodyUse != metrics.OK || r.keepBody }

// readsBody says what reads the response body: a check (CheckFailed,
// "check"), an extraction (ExtractFailed, "extract from"), or nothing
// (OK). The kind is that of the error when the body was over its limit.
func (r *Request) readsBody() (metrics.ErrKind, string) {
	if _, body := r.that.reads(); body || len(r.contains) > 0 || len(r.jsonChecks) > 0 {
		return metrics.CheckFailed, "check"
	}
	if _, body := r.extract.reads(); body {
		return metrics.ExtractFailed, "extract from"
	}
	return metrics.OK, ""
}
