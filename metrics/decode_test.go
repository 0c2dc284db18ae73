package metrics

import (
	"math/rand/v2"
	"runtime"
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

// DecodePacked gives the library's packed histogram of an encoding, the
// same counts, figures and encoding, for perflab's geometry and another,
// with a pooled zlib reader: its allocations do not include one (40 KB).
func TestDecodePacked(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for k := 0; k < 50; k++ {
		h := NewHistogram()
		for i := 0; i < r.IntN(3000); i++ {
			h.RecordValue(int64(r.ExpFloat64() * float64(int64(1)<<r.IntN(31)))) //nolint:errcheck // clamped below
		}
		enc := Encode(h)
		want, err := hdr.DecodePacked(enc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodePacked(enc)
		if err != nil {
			t.Fatal(err)
		}
		if got.TotalCount() != want.TotalCount() || got.Max() != want.Max() || got.Min() != want.Min() || got.Mean() != want.Mean() || got.Populated() != want.Populated() {
			t.Fatalf("run %d: %d values, max %d, min %d, mean %v; the library's %d, %d, %d, %v", k, got.TotalCount(), got.Max(), got.Min(), got.Mean(), want.TotalCount(), want.Max(), want.Min(), want.Mean())
		}
		for _, p := range []float64{0, 50, 90, 95, 99, 99.9, 100} {
			if got.ValueAtPercentile(p) != want.ValueAtPercentile(p) {
				t.Fatalf("run %d: p%g %d, the library's %d", k, p, got.ValueAtPercentile(p), want.ValueAtPercentile(p))
			}
		}
		a, b := NewHistogram(), NewHistogram()
		got.MergeInto(a)
		want.MergeInto(b)
		if !a.Equals(b) {
			t.Fatalf("run %d: merged, the histograms differ", k)
		}
	}
	other := hdr.New(1, 1000, 2)
	other.RecordValue(500) //nolint:errcheck
	enc, err := other.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := DecodePacked(enc); err != nil || p.TotalCount() != 1 {
		t.Errorf("another geometry: %v", err)
	}
	if _, err := DecodePacked([]byte("not base64!")); err == nil {
		t.Error("not an encoding: no error")
	}
	if raceEnabled {
		return // the race detector empties pools at random
	}
	enc = Encode(NewHistogram())
	DecodePacked(enc) //nolint:errcheck // the pool's decoder, made
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		if _, err := DecodePacked(enc); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 20; per > 16<<10 {
		t.Errorf("DecodePacked allocated %d bytes a histogram, want a few KB", per)
	}
}
