package metrics

import (
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Decoding into a histogram adds exactly the counts decoding and merging
// would: over perflab's whole range, twice over, and for an encoding of
// another geometry.
func TestDecodeInto(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for k := 0; k < 50; k++ {
		a, b := NewHistogram(), NewHistogram()
		for i := 0; i < r.IntN(5000); i++ {
			a.RecordValue(int64(r.ExpFloat64() * float64(int64(1)<<r.IntN(31)))) //nolint:errcheck // clamped below
			b.RecordValue(max(1, r.Int64N(highestUs)))                           //nolint:errcheck
		}
		want := NewHistogram()
		want.Merge(a)
		want.Merge(b)
		got := NewHistogram()
		if err := DecodeInto(got, Encode(a)); err != nil {
			t.Fatal(err)
		}
		if err := DecodeInto(got, Encode(b)); err != nil {
			t.Fatal(err)
		}
		if !got.Equals(want) || got.TotalCount() != want.TotalCount() || string(Encode(got)) != string(Encode(want)) {
			t.Fatalf("run %d: decoded into, %d values; merged, %d", k, got.TotalCount(), want.TotalCount())
		}
	}
	// Another geometry goes the library's way.
	other := hdr.New(1, 1000, 2)
	other.RecordValue(500) //nolint:errcheck
	enc, err := other.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	got := NewHistogram()
	if err := DecodeInto(got, enc); err != nil || got.TotalCount() != 1 || got.Max() < 495 || got.Max() > 505 {
		t.Errorf("another geometry: %v, %d values, max %d", err, got.TotalCount(), got.Max())
	}
	for _, bad := range []string{"", "HISTFAAAA", "HISTFAAAACl42pNpmSzMwMDAxQABzFCaEUoz2X+AiLEwAQAzVAL/"[:30], "not base64!"} {
		if err := DecodeInto(NewHistogram(), []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func BenchmarkDecodeInto(b *testing.B) {
	h := NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		h.RecordValue(int64(2000 * (0.5 + r.Float64()))) //nolint:errcheck
	}
	enc := Encode(h)
	dst := NewHistogram()
	b.Run("DecodeInto", func(b *testing.B) {
		for b.Loop() {
			DecodeInto(dst, enc) //nolint:errcheck
		}
	})
	b.Run("DecodePacked+MergeInto", func(b *testing.B) {
		for b.Loop() {
			p, _ := hdr.DecodePacked(enc)
			p.MergeInto(dst)
		}
	})
}
