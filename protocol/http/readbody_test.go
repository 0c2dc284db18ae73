package http

import (
	"bytes"
	"io"
	"testing"
)

// readBody keeps a body's first keep bytes and counts the rest, whatever
// the room its buffer happens to have: a kept window exactly as long as
// the peek buffer (256 bytes) filled by one read was once taken for the
// peek buffer, which a VU that has read no long body has not made (a
// panic: index out of range).
func TestReadBodyKeepsAndCounts(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 100) // 1,600 bytes
	for _, tc := range []struct {
		name string
		cap  int   // of the VU's body buffer before the read
		keep int64 // bytes kept
	}{
		{"window of the peek buffer's size", 768, peekSize},
		{"nothing kept", 0, 0},
		{"some kept", 0, 100},
		{"all kept", 0, 4096},
		{"a window, then the rest", 512, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Scratch{body: make([]byte, 0, tc.cap)}
			// one byte at a time up to 256, then 256 at a time: reads that
			// fill the buffer they are given
			r := io.MultiReader(bytes.NewReader(body[:256]), bytes.NewReader(body[256:]))
			kept, n, err := readBody(r, tc.keep, s)
			if err != nil {
				t.Fatal(err)
			}
			want := body[:min(int(tc.keep), len(body))]
			if n != int64(len(body)) || !bytes.Equal(kept, want) {
				t.Fatalf("kept %d bytes (%q...) and counted %d; want %d kept and %d counted", len(kept), kept[:min(len(kept), 16)], n, len(want), len(body))
			}
		})
	}
}
