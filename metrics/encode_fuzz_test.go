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
		into := NewHistogram()
		if err := DecodeInto(into, got); err != nil || !into.Equals(h) || into.TotalCount() != h.TotalCount() {
			t.Fatalf("decoded into: %v, %d values of %d", err, into.TotalCount(), h.TotalCount())
		}
	})
}

// DecodeInto takes any bytes (an interval log is input like any other):
// an error, or the counts the library's decoder finds.
func FuzzDecodeInto(f *testing.F) {
	h := NewHistogram()
	for _, v := range []int64{1, 5, 2000, 123456, highestUs} {
		h.RecordValue(v) //nolint:errcheck // in range
	}
	f.Add(Encode(h))
	f.Add(Encode(NewHistogram()))
	f.Add([]byte("HISTFAAAACl42pNpmSzMwMDAxQABzFCaEUoz2X+AiLEwAQAzVAL/"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := NewHistogram()
		if err := DecodeInto(got, data); err != nil {
			return
		}
		want, err := hdr.Decode(data)
		if err != nil {
			t.Fatalf("decoded into without an error, the library's decoder refuses it: %v", err)
		}
		if want.LowestTrackableValue() == lowestUs && want.HighestTrackableValue() == highestUs && want.SignificantFigures() == sigDigits &&
			(!got.Equals(want) || got.TotalCount() != want.TotalCount()) {
			t.Fatalf("decoded into %d values, the library %d", got.TotalCount(), want.TotalCount())
		}
	})
}
