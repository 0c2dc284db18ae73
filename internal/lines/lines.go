// Package lines reads other tools' result files a line (or a CSV record)
// at a time in bounded memory: a line longer than MaxLine is an error
// once MaxLine bytes of it are read, whatever its length, and a last
// line without its line end is told from a whole one.
package lines

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Limits of what a result file's line may hold.
const (
	// MaxLine is the longest line or record read: 16 MiB. JMeter's and
	// k6's lines are a few hundred bytes; an XML result file that keeps
	// its responses' bodies has elements of a few MB.
	MaxLine = 16 << 20
	// MaxName is the longest text that names something in a run (a
	// label, a thread or a scenario, k6's name, group and check tags):
	// 64 KiB, enough for a URL used as a name. A name is in every
	// interval of its run, in summary.json and in the history.
	MaxName = 64 << 10
)

// ErrTooLong is a line longer than MaxLine.
var ErrTooLong = fmt.Errorf("a line longer than %d MiB: lines are limited to %d MiB (lines.MaxLine)", MaxLine>>20, MaxLine>>20)

// ErrNoLineEnd is a last line without its line end: the tools end every
// line they write, so the file was cut short, perhaps in the line's
// last field.
var ErrNoLineEnd = errors.New("the last line has no line end: the file is cut short (a file still being written, or a copy cut off)")

// Reader reads lines.
type Reader struct {
	br   *bufio.Reader
	buf  []byte
	line int // of the line last read
}

// NewReader reads r's lines; a *bufio.Reader is read as it is.
func NewReader(r io.Reader) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	return &Reader{br: br}
}

// Line is the number of the line last read, from 1.
func (r *Reader) Line() int { return r.line }

// Next reads a line, its line end included, valid until the next call;
// io.EOF after the last. A line over MaxLine is ErrTooLong; a last line
// without its line end is returned, for the caller to judge.
func (r *Reader) Next() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.buf = append(r.buf[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.buf) > MaxLine {
				r.line++
				return nil, ErrTooLong
			}
			b, err = r.br.ReadSlice('\n')
			r.buf = append(r.buf, b...)
		}
		b = r.buf
	}
	if len(b) > MaxLine {
		r.line++
		return nil, ErrTooLong
	}
	if len(b) > 0 {
		r.line++
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	return b, err
}

// Name checks a field that names something in a run (what it is: a
// label, k6's name tag) against MaxName.
func Name(what, s string) error {
	if len(s) > MaxName {
		return fmt.Errorf("a %s of %.1f KiB: names (labels, threads, k6's name, scenario, group and check tags) are limited to %d KiB (lines.MaxName)", what, float64(len(s))/(1<<10), MaxName>>10)
	}
	return nil
}
