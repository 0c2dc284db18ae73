package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

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
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	snap := h.Export()
	// The payload: the counts up to the highest non-zero one, ZigZag
	// LEB128, a run of zeros as its negated length.
	counts := snap.Counts
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
	var head [40]byte
	binary.BigEndian.PutUint32(head[0:], uint32(hdr.V2EncodingCookieBase|0x10))
	binary.BigEndian.PutUint32(head[4:], uint32(len(e.payload)))
	binary.BigEndian.PutUint32(head[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(head[12:], uint32(snap.SignificantFigures))
	binary.BigEndian.PutUint64(head[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(head[24:], uint64(snap.HighestTrackableValue))
	ratio := snap.IntegerToDoubleConversionRatio
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
