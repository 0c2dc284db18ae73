package metrics

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// DecodeInto adds a histogram in the HdrHistogram V2 compressed encoding,
// base64 (what Encode writes, and the interval log holds), into dst, a
// histogram of perflab's geometry (NewHistogram): the same counts as
// decoding it and merging it in, without a new histogram or a new zlib
// reader for each. Merging the intervals of many runs is mostly this: with
// the library's decoder each decode made its own zlib reader (about 40 KB)
// and its own histogram. An encoding of another geometry is decoded and
// merged the library's way.
func DecodeInto(dst *hdr.Histogram, enc []byte) error {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	err := d.into(dst, enc)
	if err == errGeometry {
		other, err := hdr.Decode(enc)
		if err != nil {
			return err
		}
		dst.Merge(other)
		return nil
	}
	return err
}

// DecodePacked is hdr.DecodePacked of an encoding (Encode's): a sparse
// histogram with its counts, made with the pool's zlib reader. The
// library's makes a zlib reader for each (40 KB), and judging the drift
// of a run of 12,000 intervals of 20 operations, which decodes each
// interval's histogram, allocated 4.6 GB for them: the end of a 20-minute
// run at 100 ms intervals peaked at 2.5 times the memory of its load.
func DecodePacked(enc []byte) (*hdr.PackedHistogram, error) {
	d := decoders.Get().(*decoder)
	defer decoders.Put(d)
	p := hdr.NewPacked(lowestUs, highestUs, sigDigits)
	if err := d.into(p, enc); err != nil {
		if err == errGeometry {
			return hdr.DecodePacked(enc)
		}
		return nil, err
	}
	return p, nil
}

// recorder is what a decoder records counts into: a dense or a packed
// histogram of perflab's geometry.
type recorder interface {
	RecordValues(v, n int64) error
}

// perflab's geometry as the encoding's index of counts sees it (the
// library's own formulas, for lowestUs, highestUs and sigDigits).
var geometry = sync.OnceValue(func() (g geom) {
	largest := 2 * math.Pow10(sigDigits)
	magnitude := int(math.Ceil(math.Log2(largest)))
	g.halfMagnitude = uint(max(magnitude, 1) - 1)
	g.halfCount = 1 << g.halfMagnitude
	g.unitMagnitude = uint(max(math.Floor(math.Log2(float64(lowestUs))), 0))
	g.countsLen = len(NewHistogram().Export().Counts)
	return g
})

// valueAt is the lowest value counted at index i of the counts, of a
// geometry g.
func valueAt(g geom, i int64) int64 {
	bucket := (i >> g.halfMagnitude) - 1
	sub := (i & (g.halfCount - 1)) + g.halfCount
	if bucket < 0 {
		sub -= g.halfCount
		bucket = 0
	}
	return sub << (uint(bucket) + g.unitMagnitude)
}

// geom is a histogram geometry as its counts' index sees it.
type geom struct {
	unitMagnitude, halfMagnitude uint
	halfCount                    int64
	countsLen                    int
}

type decoder struct {
	raw     []byte
	payload []byte
	head    [40]byte
	br      bytes.Reader
	zr      io.ReadCloser
}

var decoders = sync.Pool{New: func() any { return &decoder{} }}

var errEncoding = errors.New("not an HdrHistogram V2 compressed encoding")

// errGeometry is an encoding of a histogram of another geometry than
// perflab's: the caller decodes it the library's way.
var errGeometry = errors.New("another geometry")

func (d *decoder) into(dst recorder, enc []byte) error {
	n := base64.StdEncoding.DecodedLen(len(enc))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], enc)
	if err != nil {
		return err
	}
	raw := d.raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw)) & ^0xf0 != hdr.V2CompressedEncodingCookieBase {
		return errEncoding
	}
	clen := int64(int32(binary.BigEndian.Uint32(raw[4:])))
	if clen < 0 || clen > int64(len(raw)-8) {
		return fmt.Errorf("%w: compressed length %d of %d bytes", errEncoding, clen, len(raw)-8)
	}
	d.br.Reset(raw[8 : 8+clen])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.br); err != nil {
			d.zr = nil
			return err
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.br, nil); err != nil {
		return err
	}
	if _, err := io.ReadFull(d.zr, d.head[:]); err != nil {
		return fmt.Errorf("%w: %v", errEncoding, err)
	}
	h := d.head[:]
	if int32(binary.BigEndian.Uint32(h)) & ^0xf0 != hdr.V2EncodingCookieBase {
		return errEncoding
	}
	payloadLen := int64(int32(binary.BigEndian.Uint32(h[4:])))
	offset := int32(binary.BigEndian.Uint32(h[8:]))
	digits := int64(int32(binary.BigEndian.Uint32(h[12:])))
	lowest := int64(binary.BigEndian.Uint64(h[16:]))
	highest := int64(binary.BigEndian.Uint64(h[24:]))
	if offset != 0 || digits != sigDigits || lowest != lowestUs || highest != highestUs {
		return errGeometry
	}
	g := geometry()
	if payloadLen < 0 || payloadLen > int64(g.countsLen)*9 {
		return fmt.Errorf("%w: payload of %d bytes", errEncoding, payloadLen)
	}
	if int64(cap(d.payload)) < payloadLen {
		d.payload = make([]byte, payloadLen)
	}
	p := d.payload[:payloadLen]
	if _, err := io.ReadFull(d.zr, p); err != nil {
		return fmt.Errorf("%w: %v", errEncoding, err)
	}
	// Nothing after the payload; the end also checks the stream's
	// checksum.
	var one [1]byte
	if n, err := io.ReadFull(d.zr, one[:]); n != 0 || err != io.EOF {
		return fmt.Errorf("%w: data after the payload, or a bad checksum (%v)", errEncoding, err)
	}
	// The counts: ZigZag LEB128 (the ninth byte whole), a run of zeros as
	// its negated length.
	var idx int64
	for len(p) > 0 {
		var v uint64
		k := 0
		for {
			if k >= len(p) {
				return fmt.Errorf("%w: a count cut short", errEncoding)
			}
			b := p[k]
			if k == 8 {
				v |= uint64(b) << 56
				k++
				break
			}
			v |= uint64(b&0x7f) << (7 * k)
			k++
			if b&0x80 == 0 {
				break
			}
		}
		p = p[k:]
		c := int64(v>>1) ^ -int64(v&1)
		switch {
		case c < 0:
			idx -= c
		case c == 0:
			idx++
		default:
			if idx >= int64(g.countsLen) {
				return fmt.Errorf("%w: a count past the last bucket", errEncoding)
			}
			if err := dst.RecordValues(valueAt(g, idx), c); err != nil {
				return err
			}
			idx++
		}
	}
	return nil
}
