package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"reflect"
	"sync"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Encode returns h in the HdrHistogram V2 compressed encoding, base64: the
// form of interval logs and of the run history, byte for byte what h.Encode
// gives. It exists because h.Encode makes a new zlib compressor for every
// histogram (about 800 KB), which at every interval's end made the garbage
// collector and the collector's goroutine hold up the load: with one CPU,
// an arrival due meanwhile started milliseconds late. Encode reuses its
// compressors and buffers.
func Encode(h *hdr.Histogram) []byte {
	enc, _ := encode(h)
	return enc
}

// Digest is what an interval's end writes of a histogram of perflab's
// geometry: its encoding (Encode's) and its Quantiles, its maximum taken
// from the counts the encoding reads rather than from the library's Max,
// which walks every bucket.
func Digest(h *hdr.Histogram) ([]byte, Quantiles) {
	enc, last := encode(h)
	n := h.TotalCount()
	if n == 0 {
		return enc, Quantiles{}
	}
	ps := h.ValueAtPercentilesSlice([]float64{50, 95, 99})
	return enc, Quantiles{N: n, P50: ps[0], P95: ps[1], P99: ps[2], Max: highestAt(geometry(), int64(last))}
}

// highestAt is the highest value counted at index i of the counts, of a
// geometry g (what the library's Max gives for a histogram whose last
// count is at i).
func highestAt(g geom, i int64) int64 {
	bucket := (i >> g.halfMagnitude) - 1
	if bucket < 0 {
		bucket = 0
	}
	return valueAt(g, i) + (int64(1) << (uint(bucket) + g.unitMagnitude)) - 1
}

// encode is Encode, and the index of the last non-zero count (-1: none).
func encode(h *hdr.Histogram) ([]byte, int) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	// The payload: the counts up to the highest non-zero one, ZigZag
	// LEB128, a run of zeros as its negated length.
	counts := countsOf(h)
	last := len(counts) - 1
	for last >= 0 && counts[last] == 0 {
		last--
	}
	e.payload = e.payload[:0]
	for i := 0; i <= last; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i <= last && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.payload = binary.AppendUvarint(e.payload, uint64((c<<1)^(c>>63)))
	}
	// An empty histogram still encodes one zero count, as h.Encode does.
	if last < 0 {
		e.payload = append(e.payload, 0)
	}
	return e.frame(h.SignificantFigures(), h.LowestTrackableValue(), h.HighestTrackableValue(), conversionRatio(h)), last
}

// countsOffset and ratioOffset are where a histogram keeps its counts and
// its conversion ratio, found once by reflection (noOffset: not found, in
// a version of the library that keeps them otherwise). The library gives
// its counts only as a copy (Export), and copying 190 KB for each
// histogram of each interval made most of what an interval's end
// allocated: at 20 operations and 100 ms intervals, about 40 MB a second,
// and the garbage collector's work with it.
var countsOffset, ratioOffset = fieldOffset("counts", reflect.TypeFor[[]int64]()), fieldOffset("conversionRatio", reflect.TypeFor[float64]())

const noOffset = ^uintptr(0)

func fieldOffset(name string, t reflect.Type) uintptr {
	f, ok := reflect.TypeFor[hdr.Histogram]().FieldByName(name)
	if !ok || f.Type != t {
		return noOffset
	}
	return f.Offset
}

// countsOf is h's counts, to be read only: the library's own slice where
// it can be found (countsOffset), else a copy.
func countsOf(h *hdr.Histogram) []int64 {
	if countsOffset == noOffset {
		return h.Export().Counts
	}
	return *(*[]int64)(unsafe.Add(unsafe.Pointer(h), countsOffset))
}

// conversionRatio is the ratio h exports (that of a decoded stream; 0:
// unset), without copying its counts where it can be found.
func conversionRatio(h *hdr.Histogram) float64 {
	if ratioOffset == noOffset {
		return h.Export().IntegerToDoubleConversionRatio
	}
	return *(*float64)(unsafe.Add(unsafe.Pointer(h), ratioOffset))
}

// frame is the encoding of e.payload: the header, compressed, base64.
func (e *encoder) frame(sigFigures, lowest, highest int64, ratio float64) []byte {
	var head [40]byte
	binary.BigEndian.PutUint32(head[0:], uint32(hdr.V2EncodingCookieBase|0x10))
	binary.BigEndian.PutUint32(head[4:], uint32(len(e.payload)))
	binary.BigEndian.PutUint32(head[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(head[12:], uint32(sigFigures))
	binary.BigEndian.PutUint64(head[16:], uint64(lowest))
	binary.BigEndian.PutUint64(head[24:], uint64(highest))
	if ratio == 0 { // unset: the library writes 1
		ratio = 1
	}
	binary.BigEndian.PutUint64(head[32:], math.Float64bits(ratio))
	e.z.Reset()
	e.z.Write(make([]byte, 8)) //nolint:errcheck // a bytes.Buffer takes anything
	e.zw.Reset(&e.z)
	e.zw.Write(head[:])   //nolint:errcheck // as above
	e.zw.Write(e.payload) //nolint:errcheck
	e.zw.Close()          //nolint:errcheck
	out := e.z.Bytes()
	binary.BigEndian.PutUint32(out[0:], uint32(hdr.V2CompressedEncodingCookieBase|0x10))
	binary.BigEndian.PutUint32(out[4:], uint32(len(out)-8))
	enc := make([]byte, base64.StdEncoding.EncodedLen(len(out)))
	base64.StdEncoding.Encode(enc, out)
	return enc
}

type encoder struct {
	payload []byte
	z       bytes.Buffer
	zw      *zlib.Writer
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.zw, _ = zlib.NewWriterLevel(&e.z, zlib.BestCompression) // a valid level
	return e
}}
