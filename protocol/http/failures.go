package http

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/metrics"
)

// FailureBytes is the most of a failed request, and of its response, that
// a FailureLog keeps: its head and its body's first bytes.
const FailureBytes = 8 << 10

// DefaultFailures is how many failed requests a FailureLog keeps unless
// told otherwise.
const DefaultFailures = 100

// MaxFailures is the most failed requests a FailureLog keeps: at
// FailureBytes of each request and of its response, up to 16 MB of
// failures.jsonl (more only by JSON's escapes), which every report reads
// whole for its samples. The log is a sample to read; the run's errors by
// kind and by message count every failure.
const MaxFailures = 1000

// A FailureLog writes failed requests and their responses, as the
// engines sent and received them, a JSON object a line (failures.jsonl):
// the first Max failures of a run, each request and response cut to
// FailureBytes, their secrets redacted (redactMessage). While it has room,
// the clients keep the first FailureBytes of every response's body, for
// the response that fails; once full, they keep what they kept before.
type FailureLog struct {
	mu    sync.Mutex
	w     io.Writer
	err   error
	max   int64
	taken atomic.Int64
}

// NewFailureLog returns a log that writes at most max failures (max ≤ 0:
// DefaultFailures; at most MaxFailures) to w.
func NewFailureLog(w io.Writer, max int) *FailureLog {
	if max <= 0 {
		max = DefaultFailures
	}
	max = min(max, MaxFailures)
	return &FailureLog{w: w, max: int64(max)}
}

// open reports whether l wants more failures (false for a nil l).
func (l *FailureLog) open() bool { return l != nil && l.taken.Load() < l.max }

// Failure is one failed request of a FailureLog.
type Failure struct {
	Time      time.Time `json:"time"`
	Stage     string    `json:"stage"`
	Scenario  string    `json:"scenario"`
	Step      string    `json:"step"`
	VU        int       `json:"vu"`
	Iteration int64     `json:"iteration"`
	Kind      string    `json:"kind"`
	// Message is what the failure is counted as (metrics.MessageOf), and
	// Detail what it said.
	Message string `json:"message"`
	Detail  string `json:"detail"`
	Status  int    `json:"status,omitempty"`
	// Request and Response are as sent and received (the response as far
	// as it came), each cut to FailureBytes, said by Truncated.
	Request           string `json:"request"`
	RequestTruncated  bool   `json:"request_truncated,omitempty"`
	Response          string `json:"response,omitempty"`
	ResponseTruncated bool   `json:"response_truncated,omitempty"`
}

// Dump is a failed request and its response, as a Result keeps them for
// a FailureLog.
type Dump struct {
	Request, Response                   []byte
	RequestTruncated, ResponseTruncated bool
}

// Write adds f, with the request and response of d, unless the log is
// full; it reports whether it did. Writing stops at the first error (Err).
func (l *FailureLog) Write(f Failure, d *Dump) bool {
	if l.taken.Add(1) > l.max {
		return false
	}
	f.Request, f.RequestTruncated = string(d.Request), d.RequestTruncated
	f.Response, f.ResponseTruncated = string(d.Response), d.ResponseTruncated
	b, err := json.Marshal(f)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		_, l.err = l.w.Write(append(b, '\n'))
	}
	return l.err == nil
}

// Err is the first error writing the log met (none for a nil l).
func (l *FailureLog) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// dumpKeep is how much of a response's body to keep when a check or an
// extraction keeps keep bytes: FailureBytes while the failure log wants
// more (within limit).
func (c *Client) dumpKeep(keep, limit int64) int64 {
	if c.opts.Failures.open() {
		return max(keep, min(limit, FailureBytes))
	}
	return keep
}

// dump keeps the request and the response of a failed result for the
// failure log, if it wants more: the request as sent, the response's
// head and the first bytes of its body (body, of the res.Bytes the body
// had).
func (c *Client) dump(res *Result, req, head, body []byte) {
	switch {
	case res.Err == metrics.OK, res.Err == metrics.NotSent, res.Err == metrics.InvalidRequest, !c.opts.Failures.open():
		return // a success, or nothing was sent
	}
	d := &Dump{}
	d.Request, d.RequestTruncated = cut(redactMessage(req))
	if len(head) > 0 || len(body) > 0 {
		resp := append(make([]byte, 0, len(head)+len(body)), head...)
		if resp = append(resp, body...); len(head) > 0 { // a body without its head is no message to read
			resp = redactMessage(resp)
		}
		d.Response, d.ResponseTruncated = cut(resp)
		d.ResponseTruncated = d.ResponseTruncated || len(body) < res.Bytes
	}
	res.Dump = d
}

// cut is b cut to FailureBytes, and whether it was.
func cut(b []byte) ([]byte, bool) {
	if len(b) > FailureBytes {
		return b[:FailureBytes], true
	}
	return b, false
}

// urlHeaders are the headers whose values are URLs, which may carry
// secrets in their query (a Location to ?access_token=...).
var urlHeaders = []string{"Location", "Content-Location", "Referer", "Origin"}

// redactMessage is a copy of an HTTP message (its head, and what it has of
// its body), its secrets redacted: the values of the headers whose names
// are secrets (secret.Name: Authorization, Cookie, Set-Cookie, X-Api-Key,
// X-Auth-Token ...); in the request-target of its first line and in the
// headers that carry a URL (Location, Referer ...), the URL's password
// and the values of the query parameters of secret names; in a body
// that is a form (application/x-www-form-urlencoded) or JSON (a Content-Type
// of json), the values of the fields and keys of secret names. Any other
// body is copied as it is.
func redactMessage(msg []byte) []byte {
	if len(msg) == 0 {
		return nil
	}
	out := make([]byte, 0, len(msg))
	rest := msg
	var ctype string
	for first := true; len(rest) > 0; first = false {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			nl = len(rest) - 1
		}
		line := rest[:nl+1]
		rest = rest[nl+1:]
		text := bytes.TrimRight(line, "\r\n")
		if len(text) == 0 { // the end of the head: the body follows
			out = append(out, line...)
			return append(out, redactBody(ctype, rest)...)
		}
		if first {
			out = append(out, redactRequestLine(text)...)
			out = append(out, line[len(text):]...)
			continue
		}
		colon := bytes.IndexByte(text, ':')
		if colon <= 0 {
			out = append(out, line...)
			continue
		}
		name, value := string(text[:colon]), strings.TrimSpace(string(text[colon+1:]))
		switch {
		case secret.Name(name):
			value = secret.Redacted
		case slices.ContainsFunc(urlHeaders, func(h string) bool { return strings.EqualFold(h, name) }):
			value = secret.URL(value)
		case strings.EqualFold(name, "Content-Type"):
			ctype = strings.ToLower(value)
			out = append(out, line...)
			continue
		default:
			out = append(out, line...)
			continue
		}
		out = append(out, text[:colon+1]...)
		out = append(out, ' ')
		out = append(out, value...)
		out = append(out, line[len(text):]...)
	}
	return out
}

// redactRequestLine redacts the request-target of a request line (METHOD
// TARGET VERSION), secret.URL; a status line has none, and is as it was.
func redactRequestLine(line []byte) []byte {
	method, rest, ok := bytes.Cut(line, []byte(" "))
	target, version, _ := bytes.Cut(rest, []byte(" "))
	if !ok || bytes.HasPrefix(method, []byte("HTTP/")) {
		return line
	}
	out := append(append([]byte(nil), method...), ' ')
	out = append(out, secret.URL(string(target))...)
	if len(version) > 0 {
		out = append(append(out, ' '), version...)
	}
	return out
}

// redactBody redacts the fields of a form, or the keys of a JSON text, of
// secret names, by the message's Content-Type (in lower case).
func redactBody(ctype string, body []byte) []byte {
	mediaType, _, _ := strings.Cut(ctype, ";")
	switch mediaType = strings.TrimSpace(mediaType); {
	case mediaType == "application/x-www-form-urlencoded":
		return secret.Form(body)
	case strings.HasSuffix(mediaType, "/json"), strings.HasSuffix(mediaType, "+json"):
		return secret.JSON(body)
	}
	return body
}
