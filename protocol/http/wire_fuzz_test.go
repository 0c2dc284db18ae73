package http

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// Fuzz targets of the event loop's response parser (wire.go). Run one:
//
//	go test -run='^$' -fuzz='^FuzzResponse$' -fuzztime=60s ./protocol/http/

// feedPieces feeds raw to p in pieces cut where cuts say (each byte the
// length of the next piece, 1-256), as reads would deliver it, until the
// response is whole or an error; it returns how many bytes were left over.
func feedPieces(p *response, raw, cuts []byte) (done bool, err error, left int) {
	for i := 0; len(raw) > 0; i++ {
		n := len(raw)
		if i < len(cuts) {
			n = min(n, int(cuts[i])+1)
		}
		// As the loop reads: into the buffer's free room when there is
		// some (the parser copies what it keeps within the buffer), else
		// from a buffer of its own.
		var in []byte
		if free := cap(p.buf) - len(p.buf); free >= n && n%2 == 0 {
			in = p.buf[len(p.buf) : len(p.buf)+n]
			copy(in, raw[:n])
		} else {
			in = append([]byte(nil), raw[:n]...)
		}
		raw = raw[n:]
		if done, err = p.feed(in); done || err != nil {
			break
		}
		checkBounds(p, n)
	}
	return done, err, len(raw)
}

// checkBounds checks that a response holds no more than its limits allow,
// after a read of n bytes.
func checkBounds(p *response, n int) {
	if kept := p.bodyEnd - p.headEnd; p.headEnd > 0 && int64(kept) > p.limit {
		panic(fmt.Sprintf("kept %d body bytes, limit %d", kept, p.limit))
	}
	if p.headEnd > maxHead {
		panic(fmt.Sprintf("a header of %d bytes", p.headEnd))
	}
	if p.headEnd == 0 && len(p.buf) > maxHead+n {
		panic(fmt.Sprintf("%d header bytes buffered", len(p.buf)))
	}
	if p.headEnd > 0 && len(p.buf)-p.bodyEnd > maxHead+n {
		panic(fmt.Sprintf("%d bytes of a chunk line buffered", len(p.buf)-p.bodyEnd))
	}
}

// The parser frames a response the same whether it arrives whole or in
// pieces; a body over the limit is counted in full and kept up to the
// limit; whatever the bytes, it neither panics nor holds more than its
// limits.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\n\r\nxxxxxxxx",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\nxx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nxx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000\r\nxxxx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil the server closes",
		"HTTP/1.1 200 OK\nContent-Length: 3\nX-A: b\n\nabc",
		"HTTP/1.1 200 OK\r\nX-Endless: " + strings.Repeat("y", 70<<10),
		"HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Endless: yes\r\n", 5000),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("X-Trailer: yes\r\n", 5000),
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabc",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"SMTP ready\r\n\r\n",
	} {
		f.Add([]byte(s), []byte{3, 17, 0, 255, 64}, false, uint16(4))
		f.Add([]byte(s), []byte(nil), true, uint16(1000))
	}
	f.Fuzz(func(t *testing.T, raw, cuts []byte, head bool, limit uint16) {
		var whole, split, full response
		whole.reset(head, int64(limit))
		split.reset(head, int64(limit))
		full.reset(head, 1<<40)
		wDone, wErr := whole.feed(append([]byte(nil), raw...))
		fDone, fErr := full.feed(append([]byte(nil), raw...))
		checkBounds(&whole, len(raw))
		sDone, sErr, left := feedPieces(&split, raw, cuts)
		if (wErr != nil) != (fErr != nil) || wDone != fDone {
			t.Fatalf("limit %d: done %v, %v; without a limit: done %v, %v", limit, wDone, wErr, fDone, fErr)
		}
		switch {
		case sErr != nil:
			if wErr == nil {
				t.Fatalf("in pieces: %v; whole: no error (done %v)", sErr, wDone)
			}
			return
		case sDone && left > 0:
			if wErr == nil {
				t.Fatalf("in pieces: done with %d bytes left; whole: no error", left)
			}
			return
		case wErr != nil:
			t.Fatalf("whole: %v; in pieces: done %v, no error", wErr, sDone)
		case sDone != wDone:
			t.Fatalf("whole: done %v; in pieces: done %v", wDone, sDone)
		}
		if !wDone {
			wDone, sDone = whole.eof(), split.eof()
			full.eof()
		}
		if whole.status != split.status || whole.close != split.close || whole.size != split.size || !bytes.Equal(whole.body(), split.body()) {
			t.Fatalf("whole: %d close %v %d bytes %q; in pieces: %d close %v %d bytes %q",
				whole.status, whole.close, whole.size, whole.body(), split.status, split.close, split.size, split.body())
		}
		if all := full.body(); full.size != whole.size || int64(len(all)) != full.size ||
			!bytes.Equal(whole.body(), all[:min(len(all), int(limit))]) {
			t.Fatalf("limit %d: %d bytes %q; without a limit: %d bytes %q", limit, whole.size, whole.body(), full.size, all)
		}
	})
}

// A chunked body decodes to what was encoded, however it is cut into
// chunks (with extensions and trailers or not) and however it arrives,
// within the limit of what is kept.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("hello world"), []byte{4, 0, 200}, []byte{1, 2, 3}, false, false, uint16(100))
	f.Add([]byte(strings.Repeat("0123456789abcdef", 300)), []byte{255, 255, 7}, []byte{255, 0, 17}, true, true, uint16(5))
	f.Add([]byte{}, []byte{}, []byte{}, false, true, uint16(0))
	f.Add([]byte("\r\n0\r\n\r\n"), []byte{0}, []byte{0, 0, 0}, true, false, uint16(2))
	f.Fuzz(func(t *testing.T, data, sizes, cuts []byte, ext, trailer bool, limit uint16) {
		var b bytes.Buffer
		b.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
		rest := data
		for i := 0; len(rest) > 0; i++ {
			n := len(rest)
			if i < len(sizes) {
				n = min(n, int(sizes[i])*7+1)
			}
			fmt.Fprintf(&b, "%x", n)
			if ext {
				b.WriteString(`;name="v;\r"`[:7] + "\r\n")
			} else {
				b.WriteString("\r\n")
			}
			b.Write(rest[:n])
			b.WriteString("\r\n")
			rest = rest[n:]
		}
		b.WriteString("0\r\n")
		if trailer {
			b.WriteString("Trailer-A: 1\r\nTrailer-B: 2\r\n")
		}
		b.WriteString("\r\n")
		var p response
		p.reset(false, int64(limit))
		done, err, left := feedPieces(&p, b.Bytes(), cuts)
		if !done || err != nil || left != 0 {
			t.Fatalf("done %v, %v, %d bytes left, of %q", done, err, left, b.Bytes())
		}
		if p.size != int64(len(data)) || !bytes.Equal(p.body(), data[:min(len(data), int(limit))]) {
			t.Fatalf("%d bytes %q, want %d bytes %q (limit %d)", p.size, p.body(), len(data), data, limit)
		}
	})
}
