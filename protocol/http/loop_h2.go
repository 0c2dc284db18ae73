//go:build linux

package http

import (
	"bytes"
	"errors"
	"io"
	"math"
	nethttp "net/http"
	"strconv"
	"syscall"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/perflab/perflab/metrics"
)

// HTTP/2 on the event loop (http.version 2): h2c with prior knowledge for
// http URLs, TLS with ALPN h2 for https (loop_tls.go). As h2load -c N -m 1
// does, every VU keeps a connection of its own, with one stream open at a
// time: its requests go out one after another, each on the connection's
// next stream. (The goroutine engine's net/http instead multiplexes all
// VUs' streams over as few shared connections as the server's
// MAX_CONCURRENT_STREAMS allows.)
//
// The request is the HTTP/1.1 one the loop writes for the step
// (appendRequest, Exchange.build): its method, request-URI, Host and
// headers become the stream's pseudo-headers and header fields, encoded
// with the connection's HPACK encoder, and its body the stream's DATA.
// The response's header fields are written back into the exchange's
// response (wire.go) as an HTTP/1.1 header block ("HTTP/2.0 200 OK", a
// line a field) and its DATA kept as its body, so that Exchange.finish
// judges it, follows its redirects and keeps its cookies as it does an
// HTTP/1.1 response: one place interprets the plan for both.
//
// Frames are written and parsed by golang.org/x/net/http2's Framer, header
// blocks by its hpack. Bytes are read from the socket into the loop's
// buffer and framed there; only a frame cut by the end of a read is kept,
// per connection, until its rest arrives.
//
// Flow control: the peer's SETTINGS_INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE
// and its WINDOW_UPDATEs bound the request body's DATA; perflab offers
// windows of h2Window (as h2load's defaults) and gives back what it has
// read once half a window is used. SETTINGS and PING are acknowledged. A
// GOAWAY lets the stream in flight finish if the server took it (its id
// is at most the last one the server names), and the connection closes
// after it; a stream the server did not take, or refused
// (REFUSED_STREAM), is sent again on a new connection (on the same one
// for REFUSED_STREAM), at most h2Retries times for one request. A
// RST_STREAM of the request's stream is its failure: connection_reset
// before the response began, read in its middle, as a connection closed
// then is on HTTP/1.1.
type h2Conn struct {
	x  *Exchange
	fr *http2.Framer
	// out: frames not yet written (the Framer appends to it: Write);
	// written up to opos.
	out  []byte
	opos int
	// src is what the Framer reads next (Read); in keeps a frame that a
	// read cut, until its rest arrives.
	src, in []byte
	enc     *hpack.Encoder
	blk     headerBlock // the header block being encoded
	// blkFor is the request whose header block blk holds, unchanged while
	// the encoder's table is (h2encode); its body is at bodyAt of wbuf.
	blkFor *Request
	bodyAt int
	dec    *hpack.Decoder

	live bool // the preface is written
	// settled: the server's first SETTINGS has come. The request body
	// waits for it: a server may apply a window below the default as soon
	// as it has sent it (Go's does).
	settled bool

	// The peer's settings.
	maxFrame   int
	initWin    int64
	maxStreams uint32
	// Flow control: what the peer lets us send on the connection and on
	// the stream in flight; what we let it send (recv*), and how much of
	// it we have read since we last said so (*Used).
	sendConn, sendStream int64
	recvConn, recvStream int64
	connUsed, streamUsed int64

	nextID uint32
	goaway bool // the server sent GOAWAY: no new stream on this connection

	// The stream in flight: 0 when none.
	sid     uint32
	body    []byte // the request's DATA not yet framed
	bodyEnd bool   // END_STREAM sent
	head    uint8  // what the header block being read is (headResponse...)
	headEnd bool   // the block's HEADERS frame ends the stream
	gotHead bool   // the final response's header arrived
	ended   bool   // the response's END_STREAM arrived
	// A RST_STREAM failed the stream: the request fails with this once
	// the frames read with it are handled.
	resetKind metrics.ErrKind
	resetWhy  string
	status    int
	interim   int
	headErr   error // a header field that cannot be taken

	// The last response header block decoded, if it came in one frame,
	// and what it said (the response's header, its status, length and
	// Set-Cookie); seen: how many times in a row it was decoded (h2memo).
	memo struct {
		blk, head []byte
		status    int
		length    int64
		setCookie bool
		seen      int
		frames    int // the frames of the block being read
	}

	// Retries of the request of Exchange.seq retrySeq (h2Retries).
	retries  int
	retrySeq uint64
}

// h2Window is the receive window perflab offers for each stream and for
// the connection, as h2load's defaults (-w 30 -W 30): a response is read
// without a WINDOW_UPDATE unless it is over half a gigabyte. Tests lower it.
var h2Window int64 = 1<<30 - 1

// h2ConnWindow is the connection's receive window: h2Window, or the
// initial 65535 if that is more.
func h2ConnWindow() int64 { return max(min(h2Window, 1<<31-1), 65535) }

// h2Retries bounds how often one request is sent again after a GOAWAY
// that left it out or a REFUSED_STREAM.
const h2Retries = 2

// h2MaxQueued bounds the request body's DATA framed ahead of the socket.
const h2MaxQueued = 64 << 10

// What the header block being read is.
const (
	headNone     = iota // none
	headResponse        // the response's (or a 1xx's)
	headTrailers        // the response's trailers: read, not kept
	headOther           // another stream's: read for HPACK's state only
)

// headerBlock is what the HPACK encoder writes to.
type headerBlock struct{ b []byte }

func (w *headerBlock) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// openH2 starts HTTP/2 on the connection x has just opened; its buffers
// are kept from the last.
func (x *Exchange) openH2() {
	h := x.h2
	if h == nil {
		h = &h2Conn{x: x}
		x.h2 = h
	}
	*h = h2Conn{x: x, out: h.out[:0], in: h.in[:0], blk: headerBlock{h.blk.b[:0]}, retries: h.retries, retrySeq: h.retrySeq,
		maxFrame: 16 << 10, initWin: 65535, maxStreams: math.MaxUint32, sendConn: 65535, nextID: 1}
	h.fr = http2.NewFramer(h, h)
	h.fr.SetReuseFrames()
	h.fr.SetMaxReadFrameSize(16 << 10) // SETTINGS_MAX_FRAME_SIZE's default, which perflab keeps
	h.enc = hpack.NewEncoder(&h.blk)
	h.dec = hpack.NewDecoder(4096, h.field)
	h.dec.SetMaxStringLength(maxHead)
}

// Write is the Framer writing a frame: it is queued.
func (h *h2Conn) Write(p []byte) (int, error) {
	h.out = append(h.out, p...)
	return len(p), nil
}

// Read is the Framer reading a frame, which h2frames made sure has
// arrived whole.
func (h *h2Conn) Read(p []byte) (int, error) {
	if len(h.src) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, h.src)
	h.src = h.src[n:]
	return n, nil
}

// h2on reports whether x's events go to HTTP/2: its connection is open
// (and its TLS, if any, has shaken hands).
func (x *Exchange) h2on() bool {
	return x.h2 != nil && (x.state == stateIdle || x.state >= stateWriting)
}

// h2spent reports whether x's connection takes no new stream.
func (x *Exchange) h2spent() bool {
	h := x.h2
	return h != nil && (h.goaway || h.nextID > 1<<31-1)
}

// preface queues what opens the connection: the client's preface, its
// settings and the connection's window.
func (h *h2Conn) preface() {
	h.out = append(h.out, http2.ClientPreface...)
	win := min(h2Window, 1<<31-1)
	h.fr.WriteSettings( //nolint:errcheck // queued in memory
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: uint32(win)})
	h.recvConn = h2ConnWindow()
	if h.recvConn > 65535 {
		h.fr.WriteWindowUpdate(0, uint32(h.recvConn-65535)) //nolint:errcheck // queued
	}
	h.live = true
}

// h2write is Exchange.write on HTTP/2: the request's stream opens (when
// the server lets one more open), its body goes as the windows let it, and
// what is queued is written.
func (x *Exchange) h2write() {
	h := x.h2
	if !h.live {
		if x.tls != nil && x.tls.conn.ConnectionState().NegotiatedProtocol != "h2" {
			x.fail(metrics.TLS, "tls: the server did not negotiate HTTP/2 (ALPN h2)")
			return
		}
		h.preface()
	}
	if !x.h2start() || !x.h2push() {
		return
	}
	if x.readable {
		x.readable = false
		x.h2read()
	}
}

// h2start opens the request's stream if it waits for one and the server
// lets one more open; it returns false when the request failed.
func (x *Exchange) h2start() bool {
	if x.state != stateWriting || x.h2.sid != 0 || x.h2.maxStreams == 0 {
		return true
	}
	if err := x.h2open(); err != nil {
		x.fail(metrics.NotSent, err.Error())
		return false
	}
	x.state = stateReading
	return true
}

// h2open opens the request's stream: its header block from the request
// in wbuf, then its body, framed as the windows allow.
func (x *Exchange) h2open() error {
	h := x.h2
	var body []byte
	if x.built != nil && h.blkFor == x.built { // the same bytes, encoded the same
		body = x.wbuf[h.bodyAt:]
	} else {
		body = x.h2encode()
	}
	if h.nextID > 1<<31-1 {
		return errors.New("http2: stream ids used up") // h2spent closes the connection first
	}
	h.sid, h.nextID = h.nextID, h.nextID+2
	h.body, h.bodyEnd = body, len(body) == 0
	h.sendStream, h.recvStream, h.streamUsed = h.initWin, min(h2Window, 1<<31-1), 0
	h.head, h.gotHead, h.ended, h.status, h.interim, h.headErr, h.resetWhy = headNone, false, false, 0, 0, nil, ""
	blk := h.blk.b
	first := min(len(blk), h.maxFrame)
	h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h.sid, BlockFragment: blk[:first], EndStream: h.bodyEnd, EndHeaders: first == len(blk)}) //nolint:errcheck // queued
	for blk = blk[first:]; len(blk) > 0; {
		n := min(len(blk), h.maxFrame)
		h.fr.WriteContinuation(h.sid, n == len(blk), blk[:n]) //nolint:errcheck // queued
		blk = blk[n:]
	}
	return nil
}

// h2encode encodes the header block of the request in wbuf into h.blk
// and returns its body. A literal request (Exchange.build) whose every
// field was found in the encoder's tables encodes the same until the
// tables change, which they did not: its block is kept for it (blkFor).
func (x *Exchange) h2encode() (body []byte) {
	h, l := x.h2, x.l
	line, rest, _ := bytes.Cut(x.wbuf, []byte("\r\n"))
	method, line, _ := bytes.Cut(line, []byte(" "))
	uri, _, _ := bytes.Cut(line, []byte(" "))
	head, body, _ := bytes.Cut(rest, []byte("\r\n\r\n"))
	var authority []byte
	for hs := head; len(hs) > 0; {
		var f []byte
		f, hs, _ = bytes.Cut(hs, []byte("\r\n"))
		if name, v, _ := bytes.Cut(f, []byte(": ")); equalFold(name, "Host") {
			authority = v
		}
	}
	scheme := "http"
	if x.tls != nil {
		scheme = "https"
	}
	h.blk.b = h.blk.b[:0]
	enc := h.enc
	enc.WriteField(hpack.HeaderField{Name: ":method", Value: l.h2value(method)})       //nolint:errcheck // to memory
	enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: scheme})                  //nolint:errcheck
	enc.WriteField(hpack.HeaderField{Name: ":authority", Value: l.h2value(authority)}) //nolint:errcheck
	enc.WriteField(hpack.HeaderField{Name: ":path", Value: l.h2value(uri)})            //nolint:errcheck
	fields := 4
	for hs := head; len(hs) > 0; {
		var f []byte
		f, hs, _ = bytes.Cut(hs, []byte("\r\n"))
		name, v, _ := bytes.Cut(f, []byte(": "))
		n := l.h2name(name)
		switch n {
		case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue // the connection's own (RFC 9113 8.2.2); host is :authority
		case "te":
			if !bytes.EqualFold(v, []byte("trailers")) {
				continue
			}
		}
		enc.WriteField(hpack.HeaderField{Name: n, Value: l.h2value(v)}) //nolint:errcheck
		fields++
	}
	// Each field indexed, in one byte (0x80 | an index below 127): no
	// field was added to the table.
	h.blkFor = nil
	if len(h.blk.b) == fields && x.built != nil && indexedOnly(h.blk.b) {
		h.blkFor, h.bodyAt = x.built, len(x.wbuf)-len(body)
	}
	return body
}

// indexedOnly reports whether each byte of a header block is an indexed
// field of one byte.
func indexedOnly(b []byte) bool {
	for _, c := range b {
		if c < 0x80 || c == 0xff {
			return false
		}
	}
	return true
}

// h2name is a header name as HTTP/2 sends it, in lower case; h2value a
// value as a string. The HPACK encoder keeps the strings it indexes, so
// they are made once and kept by the loop (at most h2Strings of each).
func (l *Loop) h2name(b []byte) string { return intern(&l.h2names, b, bytes.ToLower) }

func (l *Loop) h2value(b []byte) string { return intern(&l.h2values, b, nil) }

// intern is the string of b (made by conv, if not nil), from *m, where it
// is kept when made.
func intern(m *map[string]string, b []byte, conv func([]byte) []byte) string {
	if s, ok := (*m)[string(b)]; ok {
		return s
	}
	if *m == nil || len(*m) >= h2Strings {
		*m = map[string]string{}
	}
	s := string(b)
	if conv != nil {
		s = string(conv(b))
	}
	(*m)[string(b)] = s
	return s
}

// h2Strings bounds the strings a loop keeps for HPACK (h2name).
const h2Strings = 4096

// h2push frames the request's body as far as the windows let it and
// writes what is queued, until the socket takes no more; it returns false
// when the request failed (x may be sending its next request by then).
func (x *Exchange) h2push() bool {
	h := x.h2
	for {
		for h.sid != 0 && !h.bodyEnd && h.settled && len(h.out)-h.opos < h2MaxQueued {
			n := int(min(int64(len(h.body)), int64(h.maxFrame), h.sendConn, h.sendStream))
			if n <= 0 && len(h.body) > 0 {
				break // until a WINDOW_UPDATE
			}
			end := n == len(h.body)
			h.fr.WriteData(h.sid, end, h.body[:n]) //nolint:errcheck // queued
			h.body, h.bodyEnd = h.body[n:], end
			h.sendConn -= int64(n)
			h.sendStream -= int64(n)
		}
		queued := len(h.out) - h.opos
		if err := x.h2flush(); err != nil {
			x.fail(metrics.Write, "write: "+err.Error())
			return false
		}
		if queued < h2MaxQueued || x.h2pending() || h.sid == 0 || h.bodyEnd || !h.settled {
			return true
		}
	}
}

// h2flush writes the queued frames until the socket takes no more (the
// rest goes on EPOLLOUT).
func (x *Exchange) h2flush() error {
	h := x.h2
	if x.tls != nil {
		if h.opos < len(h.out) {
			if _, err := x.tls.conn.Write(h.out[h.opos:]); err != nil {
				return err
			}
		}
		h.out, h.opos = h.out[:0], 0
		return x.tls.writeOut()
	}
	for h.opos < len(h.out) {
		n, err := rawWrite(x.fd, h.out[h.opos:])
		switch {
		case err == nil:
			h.opos += n
		case errors.Is(err, syscall.EAGAIN):
			return nil
		case errors.Is(err, syscall.EINTR):
		default:
			return err
		}
	}
	h.out, h.opos = h.out[:0], 0
	return nil
}

// h2pending reports whether written bytes wait for the socket.
func (x *Exchange) h2pending() bool {
	if x.tls != nil {
		return len(x.tls.out) > 0
	}
	return x.h2.opos < len(x.h2.out)
}

// h2event handles the readiness of an HTTP/2 connection, between requests
// too: the server's PINGs, SETTINGS and GOAWAY are read whenever they come.
func (x *Exchange) h2event(events uint32, in bool) {
	if events&(syscall.EPOLLOUT|syscall.EPOLLERR) != 0 && (x.h2pending() || x.h2.sid != 0 && !x.h2.bodyEnd && x.h2.settled) {
		if !x.h2push() {
			return
		}
	}
	if in {
		x.h2read()
	}
}

// h2read reads what the connection has, and handles its frames.
func (x *Exchange) h2read() {
	read := 0
	for {
		rb := x.l.rbuf
		n, kind, err := x.readConn(rb)
		switch {
		case err == nil && n > 0:
		case err == syscall.EAGAIN: //nolint:errorlint // readConn returns it as is
			return
		case err != nil:
			x.h2lost(kind, "read: "+err.Error())
			return
		default: // closed
			if x.state == stateIdle {
				x.closeConn()
			} else {
				x.closedEarly(x.h2.gotHead)
			}
			return
		}
		if !x.h2frames(rb[:n]) {
			return
		}
		if read += n; read >= readTurn {
			x.l.readLater(x)
			return
		}
	}
}

// h2lost ends the connection for an error: the request in flight fails.
func (x *Exchange) h2lost(kind metrics.ErrKind, detail string) {
	if x.state == stateIdle {
		x.closeConn()
		return
	}
	x.fail(kind, detail)
}

// h2frames handles the whole frames of what was read (b), keeping a
// frame it cuts for the next read; it returns false once x is done with
// this connection's bytes (the response is whole, the request failed).
func (x *Exchange) h2frames(b []byte) bool {
	h := x.h2
	if len(h.in) > 0 {
		h.in = append(h.in, b...)
		b = h.in
	}
	h.src = b
	for len(h.src) >= 9 {
		n := int(h.src[0])<<16 | int(h.src[1])<<8 | int(h.src[2])
		if n <= 16<<10 && len(h.src) < 9+n {
			break // the Framer refuses a longer frame from its header alone
		}
		f, err := h.fr.ReadFrame()
		if err != nil {
			h.src = nil
			x.h2lost(metrics.Read, "http2: "+frameError(h.fr, err))
			return false
		}
		if !x.h2frame(f) {
			return false
		}
	}
	if len(h.src) > 0 { // copy, as b may be the loop's buffer
		h.in = h.in[:copy(h.in[:cap(h.in)], h.src)]
		if len(h.in) < len(h.src) {
			h.in = append(h.in, h.src[len(h.in):]...)
		}
	} else {
		h.in = h.in[:0]
	}
	h.src = nil
	if x.h2pending() || len(h.out) > 0 {
		if err := x.h2flush(); err != nil {
			x.h2lost(metrics.Write, "write: "+err.Error())
			return false
		}
	}
	switch {
	case h.ended:
		x.h2done()
		return false
	case h.resetWhy != "":
		res := x.failure(h.resetKind, h.resetWhy)
		x.h2stream()
		x.complete(res)
		return false
	}
	return true
}

// frameError says what the Framer found wrong.
func frameError(fr *http2.Framer, err error) string {
	if d := fr.ErrorDetail(); d != nil {
		return err.Error() + ": " + d.Error()
	}
	return err.Error()
}

// h2frame handles one frame; it returns false once x is done with this
// connection's bytes.
func (x *Exchange) h2frame(f http2.Frame) bool {
	h := x.h2
	switch f := f.(type) {
	case *http2.DataFrame:
		n := int64(f.Length)
		if h.recvConn -= n; h.recvConn < 0 {
			x.h2lost(metrics.Read, "http2: the server sent past the connection's window")
			return false
		}
		if h.connUsed += n; h.connUsed >= h2ConnWindow()/2 {
			h.fr.WriteWindowUpdate(0, uint32(h.connUsed)) //nolint:errcheck // queued
			h.recvConn += h.connUsed
			h.connUsed = 0
		}
		if f.StreamID != h.sid || h.sid == 0 || h.ended {
			return true // a stream left behind
		}
		if !h.gotHead {
			x.fail(metrics.Read, "http2: DATA before the response's header")
			return false
		}
		if h.recvStream -= n; h.recvStream < 0 {
			x.h2lost(metrics.Read, "http2: the server sent past the stream's window")
			return false
		}
		x.resp.keep(f.Data())
		if f.StreamEnded() {
			return x.h2ended()
		}
		if h.streamUsed += n; h.streamUsed >= min(h2Window, 1<<31-1)/2 {
			h.fr.WriteWindowUpdate(h.sid, uint32(h.streamUsed)) //nolint:errcheck // queued
			h.recvStream += h.streamUsed
			h.streamUsed = 0
		}
	case *http2.HeadersFrame:
		switch {
		case f.StreamID != h.sid || h.sid == 0 || h.ended:
			h.head = headOther
		case h.gotHead:
			h.head = headTrailers
		default:
			h.head = headResponse
		}
		h.headEnd, h.memo.frames = f.StreamEnded(), 0
		if h.head == headResponse && f.HeadersEnded() && h.memo.seen >= h2MemoAfter && bytes.Equal(f.HeaderBlockFragment(), h.memo.blk) {
			return x.h2memo()
		}
		return x.h2block(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.ContinuationFrame:
		return x.h2block(f.HeaderBlockFragment(), f.HeadersEnded())
	case *http2.RSTStreamFrame:
		if f.StreamID != h.sid || h.sid == 0 || h.ended {
			return true
		}
		if f.ErrCode == http2.ErrCodeRefusedStream && !h.gotHead { // not processed: again
			return x.h2retry(false, "the server refused the stream (REFUSED_STREAM)")
		}
		h.resetKind, h.resetWhy = metrics.ConnReset, "the server reset the stream before responding: "+f.ErrCode.String()
		if h.gotHead {
			h.resetKind, h.resetWhy = metrics.Read, "the server reset the stream mid-response: "+f.ErrCode.String()
		}
		h.sid, h.body, h.bodyEnd = 0, nil, true // its frames still to come are left behind
	case *http2.SettingsFrame:
		if f.IsAck() {
			return true
		}
		if err := f.ForeachSetting(h.setting); err != nil {
			x.h2lost(metrics.Read, "http2: "+err.Error())
			return false
		}
		h.fr.WriteSettingsAck() //nolint:errcheck // queued
		h.settled = true
		return x.h2start() && x.h2push() // a request may wait for MAX_CONCURRENT_STREAMS, a body for the window
	case *http2.PingFrame:
		if !f.IsAck() {
			h.fr.WritePing(true, f.Data) //nolint:errcheck // queued
		}
	case *http2.WindowUpdateFrame:
		inc := int64(f.Increment)
		switch f.StreamID {
		case 0:
			h.sendConn += inc
			if h.sendConn > 1<<31-1 {
				x.h2lost(metrics.Read, "http2: WINDOW_UPDATE past 2^31-1")
				return false
			}
		case h.sid:
			h.sendStream += inc
		default:
			return true
		}
		return x.h2push()
	case *http2.GoAwayFrame:
		h.goaway = true
		switch {
		case x.state == stateIdle:
			x.closeConn()
			return false
		case h.ended || h.resetWhy != "":
		case h.sid == 0 || h.sid > f.LastStreamID: // not sent yet, or not taken
			return x.h2retry(true, "the server closed the connection without taking the request (GOAWAY "+f.ErrCode.String()+")")
		}
		x.resp.close = true // the connection closes once the response is whole
	case *http2.PushPromiseFrame:
		x.h2lost(metrics.Read, "http2: PUSH_PROMISE, which perflab disabled")
		return false
	}
	return true
}

// setting applies one of the server's settings.
func (h *h2Conn) setting(s http2.Setting) error {
	if err := s.Valid(); err != nil {
		return err
	}
	switch s.ID {
	case http2.SettingInitialWindowSize:
		h.sendStream += int64(s.Val) - h.initWin // RFC 9113 6.9.2
		h.initWin = int64(s.Val)
	case http2.SettingMaxFrameSize:
		h.maxFrame = int(s.Val)
	case http2.SettingMaxConcurrentStreams:
		h.maxStreams = s.Val
	case http2.SettingHeaderTableSize:
		h.enc.SetMaxDynamicTableSizeLimit(s.Val)
		h.blkFor = nil // the next block says the table's new size
	}
	return nil
}

// h2block reads a fragment of a header block, which ends with end.
func (x *Exchange) h2block(frag []byte, end bool) bool {
	h := x.h2
	h.dec.SetEmitEnabled(h.head == headResponse)
	h.memo.frames++
	if _, err := h.dec.Write(frag); err != nil {
		x.h2lost(metrics.Read, "http2: the response's header block: "+err.Error())
		return false
	}
	if !end {
		return true
	}
	if err := h.dec.Close(); err != nil {
		x.h2lost(metrics.Read, "http2: the response's header block: "+err.Error())
		return false
	}
	head := h.head
	h.head = headNone
	if head != headResponse || h.headErr != nil || h.status < 200 || h.memo.frames > 1 {
		h.memo.seen = 0 // the table changed otherwise than by the block kept
	}
	switch {
	case head == headOther:
		return true
	case head == headTrailers && !h.headEnd:
		x.fail(metrics.Read, "http2: trailers that do not end the stream")
		return false
	case head == headTrailers:
		return x.h2ended()
	}
	p := &x.resp
	switch {
	case h.headErr != nil:
		x.fail(metrics.Read, h.headErr.Error())
		return false
	case h.status == 0:
		x.fail(metrics.Read, "malformed response: no :status")
		return false
	case h.status < 200: // 100 Continue, 103 Early Hints: the real response follows
		if h.interim++; h.interim > maxInterim {
			x.fail(metrics.Read, "response has over 16 interim (1xx) responses")
			return false
		}
		h.status = 0
		p.buf, p.length, p.setCookie = p.buf[:0], -1, false
		return true
	}
	if m := &h.memo; m.frames == 1 {
		if bytes.Equal(frag, m.blk) {
			m.seen++
		} else {
			m.blk, m.seen = append(m.blk[:0], frag...), 1
		}
		m.head, m.status, m.length, m.setCookie = append(m.head[:0], p.buf...), h.status, p.length, p.setCookie
	}
	return x.h2head()
}

// h2head ends the response's header: its body follows, or the stream
// has ended.
func (x *Exchange) h2head() bool {
	h, p := x.h2, &x.resp
	p.buf = append(p.buf, "\r\n"...)
	p.headEnd, p.bodyEnd = len(p.buf), len(p.buf)
	h.gotHead = true
	return !h.headEnd || x.h2ended()
}

// h2MemoAfter is how many times in a row a response header block is
// decoded before it is taken as kept (h2memo): 129 decodes of one block
// add its entries to the decoder's table 129 times, each entry at least
// 32 bytes, over the 4,096 bytes the table holds (perflab never offers
// more); the table then holds only the block's entries, the last that
// fit, and it holds the same after each further decode of the block.
const h2MemoAfter = 130

// h2memo takes a response header block that is the one decoded the last
// h2MemoAfter times or more, as it was decoded then, without decoding it:
// nginx, for one, sends the same block (five fields added to the table)
// for every response of a second. Decoding it would change nothing: the
// fields it refers to in the table and the entries it adds are those of
// the last time (h2MemoAfter), so the table is the same with it or
// without it.
func (x *Exchange) h2memo() bool {
	h, p, m := x.h2, &x.resp, &x.h2.memo
	h.head = headNone
	p.buf = append(p.buf[:0], m.head...)
	h.status, p.status, p.length, p.setCookie = m.status, m.status, m.length, m.setCookie
	return x.h2head()
}

// field takes a header field of the response: its status line, then a
// line a field, as HTTP/1.1 writes them.
func (h *h2Conn) field(f hpack.HeaderField) {
	p := &h.x.resp
	if h.headErr != nil {
		return
	}
	if f.IsPseudo() {
		if f.Name != ":status" || h.status != 0 || len(p.buf) > 0 {
			h.headErr = errors.New("malformed response: pseudo-header " + f.Name)
			return
		}
		code, err := strconv.Atoi(f.Value)
		if err != nil || code < 100 || code > 999 {
			h.headErr = errors.New("malformed response: :status " + strconv.Quote(f.Value))
			return
		}
		h.status, p.status = code, code
		p.buf = append(p.buf, "HTTP/2.0 "...)
		p.buf = strconv.AppendInt(p.buf, int64(code), 10)
		if t := nethttp.StatusText(code); t != "" {
			p.buf = append(p.buf, ' ')
			p.buf = append(p.buf, t...)
		}
		p.buf = append(p.buf, "\r\n"...)
		return
	}
	switch {
	case h.status == 0:
		h.headErr = errors.New("malformed response: a header field before :status")
		return
	case len(p.buf)+len(f.Name)+len(f.Value) > maxHead:
		h.headErr = errors.New("response header over 64 KiB")
		return
	case !validField(f.Value):
		h.headErr = errors.New("malformed response: header " + f.Name + " has a control character")
		return
	}
	p.buf = append(p.buf, f.Name...)
	p.buf = append(p.buf, ": "...)
	p.buf = append(p.buf, f.Value...)
	p.buf = append(p.buf, "\r\n"...)
	switch f.Name {
	case "set-cookie":
		p.setCookie = true
	case "content-length":
		if n, ok := atoi([]byte(f.Value)); ok {
			p.length = n
		}
	}
}

// validField reports whether a value can be written as an HTTP/1.1
// header line's.
func validField(v string) bool {
	for i := range len(v) {
		if c := v[i]; c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

// h2ended is the response's END_STREAM: the response is whole once the
// frames read with it are handled (h2frames). A Content-Length the body
// does not have fails it.
func (x *Exchange) h2ended() bool {
	p := &x.resp
	x.h2.ended = true
	if p.length >= 0 && !p.noBody && p.status != 204 && p.status != 304 && p.size != p.length {
		x.fail(metrics.Read, "response body of "+strconv.FormatInt(p.size, 10)+" bytes, but Content-Length "+strconv.FormatInt(p.length, 10))
		return false
	}
	return true
}

// h2done hands over the whole response: the stream closes, and finish
// judges it as an HTTP/1.1 response.
func (x *Exchange) h2done() {
	h := x.h2
	if !h.bodyEnd { // the server answered before the whole body came: stop sending it
		h.fr.WriteRSTStream(h.sid, http2.ErrCodeCancel) //nolint:errcheck // queued
		if err := x.h2flush(); err != nil {
			x.fail(metrics.Write, "write: "+err.Error())
			return
		}
	}
	x.h2stream()
	x.finish()
}

// h2stream forgets the stream in flight.
func (x *Exchange) h2stream() {
	h := x.h2
	h.sid, h.body, h.bodyEnd, h.ended, h.head = 0, nil, true, false, headNone
}

// h2retry sends the request in flight again, which the server did not
// process: on a new connection after a GOAWAY (closing), else on this one.
func (x *Exchange) h2retry(closing bool, why string) bool {
	h := x.h2
	if h.retrySeq != x.seq {
		h.retrySeq, h.retries = x.seq, 0
	}
	if h.retries++; h.retries > h2Retries {
		x.fail(metrics.ConnReset, why+", "+strconv.Itoa(h2Retries)+" times")
		return false
	}
	h.sid, h.body, h.bodyEnd = 0, nil, true
	if !closing { // on this connection: its other frames are read on
		gen := x.gen
		x.transmit(x.l.now())
		return x.gen == gen && x.fd >= 0
	}
	x.closeConn()
	x.transmit(x.l.now())
	return false
}
