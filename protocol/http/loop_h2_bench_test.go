//go:build linux

package http

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/perflab/perflab/plan"
)

// BenchmarkLoopH2: requests one after another on one HTTP/2 (h2c)
// connection of the event loop, against answerH2OK; its allocations are
// the client's.
//
//	go test -run '^$' -bench LoopH2 -benchmem ./protocol/http
func BenchmarkLoopH2(b *testing.B) {
	r, err := Compile(text("http://"+answerH2OK(b)), nil, &plan.Step{Name: "g", Method: "GET", URL: text("/item")}, 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	benchLoop(b, NewClient(Options{KeepAlive: true, Timeout: 5 * time.Second, HTTP2: true}), r)
}

// answerH2OK serves h2c: each request's stream gets a 200 with the body
// "ok", from bytes made once, so that it allocates nothing per request.
func answerH2OK(t testing.TB) string {
	settings := []byte{0, 0, 0, 4, 0, 0, 0, 0, 0}
	ack := []byte{0, 0, 0, 4, 1, 0, 0, 0, 0}
	// HEADERS (END_HEADERS): :status 200 (static index 8), content-length:
	// 2 (literal, static name 28); DATA (END_STREAM): "ok".
	resp := []byte{0, 0, 5, 1, 4, 0, 0, 0, 0, 0x88, 0x0f, 0x0d, 1, '2', 0, 0, 2, 0, 1, 0, 0, 0, 0, 'o', 'k'}
	return listen(t, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		out := make([]byte, 0, 4<<10)
		if _, err := io.ReadFull(c, buf[:24]); err != nil { // the preface
			return
		}
		c.Write(settings)
		have := 0
		for {
			n, err := c.Read(buf[have:])
			if err != nil {
				return
			}
			have += n
			at := 0
			out = out[:0]
			for have-at >= 9 {
				size := int(buf[at])<<16 | int(buf[at+1])<<8 | int(buf[at+2])
				if have-at < 9+size {
					break
				}
				typ, flags, sid := buf[at+3], buf[at+4], binary.BigEndian.Uint32(buf[at+5:])&(1<<31-1)
				switch {
				case typ == 4 && flags&1 == 0: // SETTINGS
					out = append(out, ack...)
				case typ == 1: // HEADERS: a request, whole in one frame
					at0 := len(out)
					out = append(out, resp...)
					binary.BigEndian.PutUint32(out[at0+5:], sid)
					binary.BigEndian.PutUint32(out[at0+19:], sid)
				}
				at += 9 + size
			}
			have = copy(buf, buf[at:have])
			if len(out) > 0 {
				if _, err := c.Write(out); err != nil {
					return
				}
			}
		}
	})
}
