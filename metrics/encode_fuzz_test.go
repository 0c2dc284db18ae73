package metrics

import (
	"bytes"
	"encoding/binary"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Whatever the histogram, Encode gives the library's encoding byte for
// byte, and it decodes to the same histogram: the interval log and the
// history hold what was measured.
func FuzzEncode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0})
	f.Add([]byte{0, 0, 0x80, 0xa0, 0xe5, 0xb9, 0x0d, 0})                   // 0 and highestUs
	f.Add([]byte{40, 40, 41, 41, 0xe8, 0x07, 255, 0x90, 0x4e, 1, 77, 255}) // a spread, a large count
	f.Fuzz(func(t *testing.T, data []byte) {
		h := NewHistogram()
		for len(data) > 0 {
			v, n := binary.Uvarint(data)
			if n <= 0 {
				break
			}
			data = data[n:]
			c := int64(1)
			if len(data) > 0 {
				c = int64(data[0])<<uint(data[0]%24) + 1 // counts up to the billions
				data = data[1:]
			}
			if err := h.RecordValues(int64(v%uint64(highestUs+1)), c); err != nil {
				t.Fatal(err)
			}
		}
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got := Encode(h)
		if !bytes.Equal(got, want) {
			t.Fatalf("Encode differs from the library's:\n got %s\nwant %s", got, want)
		}
		back, err := hdr.Decode(got)
		if err != nil || !back.Equals(h) {
			t.Fatalf("decoded back: %v, equal %v", err, err == nil && back.Equals(h))
		}
	})
}
