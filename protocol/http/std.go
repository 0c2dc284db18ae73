package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"net/url"
	"strings"
	"syscall"
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

// doStd sends the request with the standard library's client, following
// its redirects and digest challenges.
func (c *Client) doStd(r *Request, vars Vars, s *Scratch) Result {
	s.begin()
	// One deadline for the whole exchange, as on the other engines.
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	var start time.Time
	for {
		req, reqBody, err := c.stdRequest(ctx, r, vars, s)
		if err != nil {
			return s.failed(start, 0, 0, notSentKind(err), err.Error())
		}
		sent := time.Now()
		if start.IsZero() {
			start = sent
		}
		// The body sent, for the failure log.
		var sentBody []byte
		if c.opts.Failures.open() {
			sentBody = reqBody
		}
		resp, err := c.std.Do(req)
		if err != nil {
			return c.stdFailed(s.failed(start, 0, 0, classifyStd(ctx, err), describeStd(ctx, err)), req, sentBody, nil, nil)
		}
		again, kind, detail := c.follow(r, s, s.buf, resp.StatusCode, stdHeaders(resp.Header))
		// Read the body fully; keep it only when a check or extraction needs it.
		limit, keep := c.bodyLimit(r)
		switch {
		case again:
			keep = 0
		case kind != metrics.OK:
			keep = c.dumpKeep(0, limit)
		}
		kept, n, err := readBody(resp.Body, keep, s)
		resp.Body.Close()
		if err != nil {
			return c.stdFailed(s.failed(start, resp.StatusCode, n, classifyStd(ctx, err), describeStd(ctx, err)), req, sentBody, resp, kept)
		}
		if again {
			s.hop(Hop{Start: sent, Latency: time.Since(sent), Status: resp.StatusCode, Bytes: int(n), Auth: resp.StatusCode == 401})
			continue
		}
		if kind != metrics.OK {
			return c.stdFailed(s.failed(start, resp.StatusCode, n, kind, detail), req, sentBody, resp, kept)
		}
		res := Result{Start: start, Status: resp.StatusCode, Bytes: int(n), Latency: time.Since(start)}
		header := func(name string) ([]byte, bool) {
			v, ok := resp.Header[nethttp.CanonicalHeaderKey(name)]
			if !ok || len(v) == 0 {
				return nil, false
			}
			return []byte(v[0]), true
		}
		v := view{body: kept}
		if r.reads&readsHeaders != 0 {
			var b bytes.Buffer
			b.WriteString(resp.Proto + " " + resp.Status + "\r\n")
			resp.Header.Write(&b) //nolint:errcheck // a buffer takes every write
			v.headers = b.Bytes()
		}
		if r.reads&readsURL != 0 {
			v.url = append([]byte(nil), s.buf...)
		}
		c.settle(r, s, &res, &v, header, vars, limit)
		if res.Err != metrics.OK {
			res = c.stdFailed(res, req, sentBody, resp, kept)
		}
		return res
	}
}

// stdFailed is res with its request (its body sentBody) and response (resp, its body's first bytes body; nil if none came) for
// the failure log (Client.dump), as HTTP/1.1 would write them.
func (c *Client) stdFailed(res Result, req *nethttp.Request, sentBody []byte, resp *nethttp.Response, body []byte) Result {
	if !c.opts.Failures.open() {
		return res
	}
	var out, head bytes.Buffer
	out.WriteString(req.Method + " " + req.URL.String() + " HTTP/2.0\r\n")
	req.Header.Write(&out) //nolint:errcheck // a buffer takes every write
	out.WriteString("\r\n")
	out.Write(sentBody)
	if resp != nil {
		head.WriteString(resp.Proto + " " + resp.Status + "\r\n")
		resp.Header.Write(&head) //nolint:errcheck // a buffer takes every write
		head.WriteString("\r\n")
	}
	c.dump(&res, out.Bytes(), head.Bytes(), body)
	return res
}

// stdRequest makes the exchange's next request, and returns its body;
// its URL stays in s.buf. The body is a buffer of its own, not s.body:
// net/http may read it after Do returns (an HTTP/2 stream's writer goes
// on sending it after an early answer, a 401 of a digest challenge),
// while s.body takes the response and the next request is built.
func (c *Client) stdRequest(ctx context.Context, r *Request, vars Vars, s *Scratch) (*nethttp.Request, []byte, error) {
	b, err := r.appendNextURL(s.buf[:0], vars, s)
	s.buf = b
	if err != nil {
		return nil, nil, err
	}
	var body io.Reader
	var data []byte
	if r.sendsBody(s) {
		if data, err = r.appendBody(nil, vars); err != nil {
			return nil, nil, err
		}
		body = bytes.NewReader(data)
	}
	method := r.methodOf(s)
	req, err := nethttp.NewRequestWithContext(ctx, string(method), string(b), body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", c.userAgent)
	sh, err := r.sessionHeaders(s, vars, method, b)
	if err != nil {
		return nil, nil, err
	}
	if err := r.eachHeader(vars, &sh, func(name, value string) {
		if strings.EqualFold(name, "Host") {
			req.Host = value
		}
		req.Header.Set(name, value)
	}); err != nil {
		return nil, nil, err
	}
	if r.contentType != "" && body != nil {
		req.Header.Set("Content-Type", r.contentType)
	}
	return req, data, nil
}

// stdHeaders are a response's headers as the standard library keeps them.
type stdHeaders nethttp.Header

func (h stdHeaders) setsCookies() bool { return len(h["Set-Cookie"]) > 0 }

func (h stdHeaders) first(name string) ([]byte, bool) {
	v := nethttp.Header(h).Values(name)
	if len(v) == 0 {
		return nil, false
	}
	return []byte(v[0]), true
}

func (h stdHeaders) values(name string) [][]byte {
	var out [][]byte
	for _, v := range nethttp.Header(h).Values(name) {
		out = append(out, []byte(v))
	}
	return out
}

func classifyStd(ctx context.Context, err error) metrics.ErrKind {
	if ctx.Err() != nil {
		return metrics.Timeout
	}
	return Classify(err)
}

// describeStd says what an error of the standard library's client was,
// without the request's method and URL around it (a *url.Error): the
// same words as the other engines' (describe).
func describeStd(ctx context.Context, err error) string {
	if ctx.Err() != nil {
		return "timeout"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return describe(err, errors.Is(err, syscall.ECONNRESET))
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
