package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// IntervalData is one interval histogram of an operation, kept compressed:
// a day of 10 s intervals for 20 operations is 172,800 histograms, far too
// many to hold decoded. Decode one at a time with Histogram.
type IntervalData struct {
	StartMs, EndMs int64
	enc            string // HdrHistogram V2 compressed, base64
}

// NewIntervalData wraps an encoded histogram.
func NewIntervalData(startMs, endMs int64, encoded string) *IntervalData {
	return &IntervalData{StartMs: startMs, EndMs: endMs, enc: encoded}
}

// Histogram decodes the interval's histogram into a sparse (packed)
// histogram: an interval holds a few hundred distinct values at most, and
// decoding into a dense one would allocate its whole counts array each time.
// Merge it into a dense accumulator with MergeInto.
func (d *IntervalData) Histogram() (*hdr.PackedHistogram, error) {
	return hdr.DecodePacked([]byte(d.enc))
}

// readHistogramLog reads an HdrHistogram interval log into compressed
// intervals by tag, without decoding them. It follows the log format's
// BaseTime/StartTime headers, as HdrHistogram's own readers do.
func readHistogramLog(r io.Reader) (map[string][]*IntervalData, error) {
	out := map[string][]*IntervalData{}
	var base, start float64
	var haveBase bool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case text == "":
			continue
		case strings.HasPrefix(text, "#[BaseTime: "):
			v, err := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(text, "#[BaseTime: "))[0], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			base, haveBase = v, true
			continue
		case strings.HasPrefix(text, "#[StartTime: "):
			v, err := strconv.ParseFloat(strings.Fields(strings.TrimPrefix(text, "#[StartTime: "))[0], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			start = v
			continue
		case text[0] == '#', strings.HasPrefix(text, `"StartTimestamp"`):
			continue
		}
		tag := ""
		if strings.HasPrefix(text, "Tag=") {
			i := strings.IndexByte(text, ',')
			if i < 0 {
				return nil, fmt.Errorf("line %d: malformed tag", line)
			}
			tag, text = text[4:i], text[i+1:]
		}
		f := strings.SplitN(text, ",", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: want start,length,max,histogram", line)
		}
		ts, err1 := strconv.ParseFloat(f[0], 64)
		length, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: malformed timestamps", line)
		}
		b := base
		if !haveBase {
			b = start
		}
		startMs := int64((ts + b) * 1000)
		out[tag] = append(out[tag], &IntervalData{StartMs: startMs, EndMs: startMs + int64(length*1000+0.5), enc: f[3]})
	}
	return out, sc.Err()
}
