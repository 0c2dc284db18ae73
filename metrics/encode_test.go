package metrics

import (
	"bytes"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Encode must give what hdrhistogram-go's own Encode gives, byte for
// byte: empty, one value, values at both ends of the range, long runs of
// zeros and counts that need several bytes.
func TestEncodeIsTheLibrarysEncoding(t *testing.T) {
	cases := map[string]func(h *hdr.Histogram){
		"empty": func(*hdr.Histogram) {},
		"one":   func(h *hdr.Histogram) { h.RecordValue(1) },
		"ends": func(h *hdr.Histogram) {
			h.RecordValue(0)
			h.RecordValue(highestUs)
		},
		"spread": func(h *hdr.Histogram) {
			for v := int64(1); v < 5_000_000; v = v*11/10 + 1 {
				h.RecordValues(v, v%1000+1)
			}
			h.RecordValues(77, 1<<40)
		},
	}
	for name, fill := range cases {
		h := NewHistogram()
		fill(h)
		want, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		got := Encode(h)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Encode differs from the library's:\n got %s\nwant %s", name, got, want)
		}
		back, err := hdr.Decode(got)
		if err != nil || !back.Equals(h) {
			t.Errorf("%s: decoded back: %v, equal %v", name, err, err == nil && back.Equals(h))
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	h := NewHistogram()
	for v := int64(40); v < 400; v++ {
		h.RecordValues(v, v)
	}
	b.Run("perflab", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Encode(h)
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Encode(hdr.V2CompressedEncodingCookieBase) //nolint:errcheck
		}
	})
}

// Digest's encoding is Encode's, and its quantiles QuantilesOf's, the
// maximum the library's own, across the range of values.
func TestDigest(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for round := range 200 {
		h := NewHistogram()
		n := r.IntN(300)
		scale := []int64{1, 3, 100, 2048, 70_000, 5_000_000, highestUs}[round%7]
		for range n {
			h.RecordValue(1 + r.Int64N(scale))
		}
		enc, q := Digest(h)
		if string(enc) != string(Encode(h)) || q != QuantilesOf(h) || q.Max != h.Max() && n > 0 {
			t.Fatalf("round %d (%d values up to %d): %+v, want %+v (max %d)", round, n, scale, q, QuantilesOf(h), h.Max())
		}
	}
}
