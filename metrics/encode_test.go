package metrics

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

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

// DigestCounts, made from counts by value, is Digest of the histogram
// that holds them; FromCounts is AddN of each outcome, its digest the
// histogram's.
func TestDigestCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for round := range 300 {
		scale := []int64{1, 3, 100, 2048, 70_000, 5_000_000, 2 * highestUs}[round%7]
		var outs []Outcome
		dense := NewStats()
		for range r.IntN(400) {
			o := Outcome{Latency: time.Duration(r.Int64N(scale*1000) + int64(r.IntN(2))*500), N: 1 + r.Int64N(5)}
			if r.IntN(10) == 0 {
				o.Kind = []ErrKind{Timeout, HTTP5xx, NotSent}[r.IntN(3)]
			}
			outs = append(outs, o)
			dense.AddN(o.Latency, o.Kind, 7, o.N)
		}
		got := FromCounts(outs, 7*int64(len(outs)))
		enc, q := got.Digest()
		wantEnc, wantQ := Digest(dense.Hist)
		if string(enc) != string(wantEnc) || q != wantQ {
			t.Fatalf("round %d: digest %+v, want %+v", round, q, wantQ)
		}
		if got.Count != dense.Count || got.Errors != dense.Errors || got.OK != dense.OK || got.Failed != dense.Failed || got.Bytes != dense.Bytes || got.Clamped != dense.Clamped {
			t.Fatalf("round %d: %+v\nwant %+v", round, got, dense)
		}
	}
}

// Counting a latency at its Bucket changes no histogram, and the buckets
// are few: a histogram of a million distinct ns values from 0 to 100 ms
// has at most ~8,200 buckets.
func TestBucket(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	exact, bucketed := NewStats(), NewStats()
	seen := map[time.Duration]bool{}
	for i := range 1_000_000 {
		lat := time.Duration(r.Int64N(int64(100 * time.Millisecond)))
		if i%1000 == 0 {
			lat = time.Duration(r.Int64N(int64(2 * time.Hour))) // clamped at the top
		}
		b := Bucket(lat)
		if Bucket(b) != b || b > max(lat, 500)+500 || b < 0 { // below 1 µs, the histogram counts 1 µs
			t.Fatalf("Bucket(%d) = %d; its Bucket %d", lat, b, Bucket(b))
		}
		seen[b] = true
		exact.AddN(lat, OK, 0, 1)
		bucketed.AddN(b, OK, 0, 1)
	}
	if !exact.Hist.Equals(bucketed.Hist) || exact.Clamped != bucketed.Clamped || exact.Clamped == 0 {
		t.Errorf("histograms differ: p50 %d, %d; clamped %d, %d", exact.Hist.ValueAtQuantile(50), bucketed.Hist.ValueAtQuantile(50), exact.Clamped, bucketed.Clamped)
	}
	if len(seen) > 8200+1000 {
		t.Errorf("%d distinct buckets", len(seen))
	}
}

// The counts and ratio Encode reads in place are the library's own, and
// encoding a histogram allocates nothing of its size (a copy of its
// counts is 190 KB).
func TestEncodeReadsTheCountsInPlace(t *testing.T) {
	if countsOffset == noOffset || ratioOffset == noOffset {
		t.Fatal("the library's Histogram has no counts []int64 or conversionRatio float64 field: Encode copies the counts (Export)")
	}
	h := NewHistogram()
	for v := int64(1); v < 5000; v += 7 {
		h.RecordValue(v) //nolint:errcheck // within range
	}
	if got, want := countsOf(h), h.Export().Counts; !slices.Equal(got, want) {
		t.Fatal("countsOf differs from the library's Export")
	}
	if raceEnabled {
		t.Skip("the race detector empties pools at random: allocations are not counted")
	}
	Encode(h) // the pool's encoder, made
	if a := testing.AllocsPerRun(20, func() { Encode(h) }); a > 4 {
		t.Errorf("Encode made %v allocations", a)
	}
	// Counted with the collector off (a collection empties the pool, and
	// the encoder, 800 KB, is made again: on a busy machine one fell among
	// the ten and counted 81,911 bytes a histogram), the least of three
	// rounds (the count is the process's: another goroutine may allocate).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	per := uint64(1 << 62)
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 10 {
			Encode(h)
		}
		runtime.ReadMemStats(&after)
		per = min(per, (after.TotalAlloc-before.TotalAlloc)/10)
	}
	if per > 16<<10 {
		t.Errorf("Encode allocated %d bytes a histogram, want a few KB", per)
	}
}

// raceEnabled is set under -race (race_test.go).
var raceEnabled bool
