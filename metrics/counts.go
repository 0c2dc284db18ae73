package metrics

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
	"time"
)

// Count is how many values were recorded at one value, in µs.
type Count struct{ Us, N int64 }

// DigestCounts is Digest of a histogram of perflab's geometry that holds
// counts (in order of value, each within the histogram's range), made
// without the histogram: the same encoding, byte for byte, and the same
// quantiles. An imported interval holds a few hundred distinct values of
// the histogram's 23,000 buckets; a dense histogram would be cleared,
// filled, copied and walked for each.
func DigestCounts(cs []Count) ([]byte, Quantiles) {
	g := geometry()
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.payload = e.payload[:0]
	zig := func(c int64) { e.payload = binary.AppendUvarint(e.payload, uint64((c<<1)^(c>>63))) }
	var q Quantiles
	prev, idx, cnt := int64(-1), int64(-1), int64(0)
	put := func() {
		switch gap := idx - prev - 1; {
		case gap == 1:
			zig(0)
		case gap > 1:
			zig(-gap)
		}
		zig(cnt)
		prev = idx
	}
	for _, c := range cs {
		if c.N <= 0 {
			continue
		}
		q.N += c.N
		i := countsIndex(g, c.Us)
		if i != idx && cnt > 0 {
			put()
			cnt = 0
		}
		idx, cnt = i, cnt+c.N
	}
	if cnt > 0 {
		put()
	}
	if q.N == 0 {
		e.payload = append(e.payload, 0) // an empty histogram encodes one zero count
		return e.frame(sigDigits, lowestUs, highestUs, 1), q
	}
	// The quantiles as the library finds them: the first bucket whose
	// cumulative count reaches the percentile's rank, its highest value.
	ps := [...]float64{50, 95, 99}
	var ranks [3]int64
	for k, p := range ps {
		ranks[k] = percentileRank(p, q.N)
	}
	var at [3]int64
	k, cum := 0, int64(0)
	idx, cnt = -1, 0
	flush := func() {
		cum += cnt
		for k < len(ps) && cum >= ranks[k] {
			at[k] = highestAt(g, idx)
			k++
		}
	}
	for _, c := range cs {
		if c.N <= 0 {
			continue
		}
		if i := countsIndex(g, c.Us); i != idx {
			if cnt > 0 {
				flush()
			}
			idx, cnt = i, 0
		}
		cnt += c.N
	}
	flush()
	q.P50, q.P95, q.P99, q.Max = at[0], at[1], at[2], highestAt(g, idx)
	return e.frame(sigDigits, lowestUs, highestUs, 1), q
}

// percentileRank is the library's: the count a percentile reaches, in
// [1, n].
func percentileRank(p float64, n int64) int64 {
	rank := (p/100)*float64(n) + 0.5
	if !(rank >= 1) {
		return 1
	}
	if rank >= float64(n) {
		return n
	}
	return int64(rank)
}

// countsIndex is where the library counts value v (µs) in a histogram of
// geometry g.
func countsIndex(g geom, v int64) int64 {
	subBucketMask := (2*g.halfCount - 1) << g.unitMagnitude
	bucket := int64(64-bits.LeadingZeros64(uint64(v|subBucketMask))) - int64(g.unitMagnitude) - int64(g.halfMagnitude+1)
	sub := v >> uint(bucket+int64(g.unitMagnitude))
	return ((bucket + 1) << g.halfMagnitude) + sub - g.halfCount
}

// Bucket is the lowest latency that the histograms count in the same
// bucket as lat: counting a success at Bucket(lat) instead of lat changes
// no histogram, only the exact moments (Stats.OK), which a caller that
// counts by Bucket keeps apart. Values counted by Bucket are few however
// fine the latencies (k6's are to the ns): at most the histogram's
// buckets. A latency above the histograms' top is its own, so that it
// is counted as clamped.
func Bucket(lat time.Duration) time.Duration {
	us, clamped := histUs(max(int64(lat), 0))
	if clamped {
		return lat
	}
	g := geometry()
	return time.Duration(valueAt(g, countsIndex(g, us))) * time.Microsecond
}

// Outcome is how many operations of a closed model had one latency and
// one outcome.
type Outcome struct {
	Latency time.Duration
	Kind    ErrKind
	N       int64
}

// FromCounts makes an interval's statistics from outcomes counted by
// value (another tool's, to the millisecond): what AddN of each makes,
// but with the histogram only as its digest (DigestCounts), which Digest
// gives. They are for writing (results, the history), not for merging:
// Hist is nil.
func FromCounts(os []Outcome, bytes int64) *Stats {
	s := &Stats{Bytes: bytes}
	var ok, ko []Count
	for _, o := range os {
		if us, timed := s.countN(o.Latency, o.Kind, 0, o.N); timed && o.Kind == OK {
			ok = append(ok, Count{us, o.N})
		} else if timed {
			ko = append(ko, Count{us, o.N})
		}
	}
	byValue := func(a, b Count) int { return cmp.Compare(a.Us, b.Us) }
	slices.SortFunc(ok, byValue)
	enc, q := DigestCounts(ok)
	s.digest = &digest{enc, q}
	if len(ko) > 0 {
		slices.SortFunc(ko, byValue)
		enc, q := DigestCounts(ko)
		s.failDigest = &digest{enc, q}
	}
	return s
}

// digest is a histogram's encoding and quantiles, for statistics that
// have no histogram (FromCounts).
type digest struct {
	enc []byte
	q   Quantiles
}

// Digest is Digest(s.Hist), or the digest FromCounts made.
func (s *Stats) Digest() ([]byte, Quantiles) {
	if s.digest != nil {
		return s.digest.enc, s.digest.q
	}
	return Digest(s.Hist)
}

// FailDigest is Digest(s.FailHist), or the digest FromCounts made; false
// when no failed operation was timed.
func (s *Stats) FailDigest() ([]byte, Quantiles, bool) {
	switch {
	case s.failDigest != nil:
		return s.failDigest.enc, s.failDigest.q, true
	case s.FailHist == nil || s.Failed.N == 0:
		return nil, Quantiles{}, false
	}
	enc, q := Digest(s.FailHist)
	return enc, q, true
}
