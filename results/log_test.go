package results

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/perflab/perflab/metrics"
)

// histogramOf records the values that data encodes, three bytes a value:
// two of mantissa and one of binary exponent, over perflab's whole range.
func histogramOf(data []byte) *hdr.Histogram {
	h := metrics.NewHistogram()
	for ; len(data) >= 3; data = data[3:] {
		v := int64(binary.BigEndian.Uint16(data)) << (data[2] % 24)
		h.RecordValue(min(v, h.HighestTrackableValue())) //nolint:errcheck // in range
	}
	return h
}

// What the run directory's writer logs (Writer.logHistogram, under the
// header CreateDir writes) the reader gives back: the tag, the
// interval's start and end to the millisecond, the same histogram.
func FuzzHistogramLog(f *testing.F) {
	f.Add([]byte{1, 0, 0, 200, 3, 2, 0x80, 0x80, 4, 9, 9, 9}, "CREATE ANCHOR", uint32(520), uint32(2000), int64(1795619414503))
	f.Add([]byte{}, "", uint32(0), uint32(100), int64(0))
	f.Add([]byte{0xff, 0xff, 23, 0, 0, 0}, "a|b <script>", uint32(86_399_999), uint32(1), int64(4_102_444_800_123))
	f.Fuzz(func(t *testing.T, values []byte, name string, offsetMs, lengthMs uint32, startMs int64) {
		if startMs < 0 || startMs > 4_102_444_800_000 { // up to 2100
			return
		}
		h := histogramOf(values)
		var buf bytes.Buffer
		baseMs := startMs / 1000 * 1000
		rd := &Writer{bw: bufio.NewWriter(&buf), baseMs: baseMs}
		rd.hlog = hdr.NewHistogramLogWriter(rd.bw)
		rd.hlog.OutputStartTime(baseMs) //nolint:errcheck // a buffer
		rd.hlog.OutputBaseTime(baseMs)  //nolint:errcheck
		rd.hlog.OutputLegend()          //nolint:errcheck
		start := time.UnixMilli(startMs + int64(offsetMs))
		iv := &metrics.Interval{Start: start, End: start.Add(time.Duration(lengthMs) * time.Millisecond)}
		tag := Tag("s1", metrics.Op{Scenario: "flow", Name: name, Kind: metrics.KindStep})
		if err := rd.logHistogram(h, tag, iv); err != nil {
			t.Fatal(err)
		}
		rd.bw.Flush() //nolint:errcheck
		ivs, err := readHistogramLog(&buf)
		if err != nil {
			t.Fatalf("the log as written does not read: %v\n%s", err, buf.Bytes())
		}
		got := ivs[tag]
		if len(ivs) != 1 || len(got) != 1 {
			t.Fatalf("wrote one interval of %q, read %d tags, %d intervals under it", tag, len(ivs), len(got))
		}
		if got[0].StartMs != iv.Start.UnixMilli() || got[0].EndMs != iv.End.UnixMilli() {
			t.Fatalf("wrote %d..%d ms, read %d..%d\n%s", iv.Start.UnixMilli(), iv.End.UnixMilli(), got[0].StartMs, got[0].EndMs, buf.Bytes())
		}
		p, err := got[0].Histogram()
		if err != nil {
			t.Fatal(err)
		}
		back := metrics.NewHistogram()
		p.MergeInto(back)
		if !back.Equals(h) || back.TotalCount() != h.TotalCount() {
			t.Fatalf("histogram of %d values read back with %d, max %d, want %d", h.TotalCount(), back.TotalCount(), back.Max(), h.Max())
		}
	})
}

// The log's reader takes any bytes without panicking, and each interval
// it gives decodes or fails.
func FuzzReadHistogramLog(f *testing.F) {
	// The demo's log that the other packages' fuzz targets seed with
	// (internal/runtest, which this package's own tests cannot import).
	hlog, err := os.ReadFile(filepath.Join("..", "internal", "runtest", "testdata", "rundir", "latency.hlog"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(hlog)
	f.Add([]byte("Tag=s1/x/y,a,b,c,HISTFAAAA\n#[BaseTime: x]\n"))
	f.Add([]byte("Tag=s1/_/a,0.1,-1,0,HISTFAAAAAAA\nTag=s1/_/a,1e308,1e308,0,\n"))
	f.Fuzz(func(t *testing.T, hlog []byte) {
		ivs, err := readHistogramLog(bytes.NewReader(hlog))
		if err != nil {
			return
		}
		for _, list := range ivs {
			for _, iv := range list {
				iv.Histogram() //nolint:errcheck // any answer but a panic
			}
		}
	})
}
