package jtl

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// records reads CSV records line by line: a line without a quote is split
// at its commas, which is most of a JMeter file and several times faster
// than encoding/csv; a line with quotes (a message with a comma, a quoted
// line break) is read whole, over as many lines as its quotes span, and
// parsed by encoding/csv.
type records struct {
	br   *bufio.Reader
	line int // of the record last read
	next int // of the next line
	rec  []string
	buf  []byte
}

func newRecords(r io.Reader) *records {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	return &records{br: br, next: 1}
}

// maxRecord bounds a record spanning lines: a stray quote must not make
// the rest of a file one record.
const maxRecord = 1 << 20

// read returns the next record (reused by the next call), io.EOF after
// the last; blank lines are skipped.
func (r *records) read() ([]string, error) {
	for {
		r.line = r.next
		b, err := r.readLine()
		if len(b) == 0 && err != nil {
			return nil, err
		}
		if bytes.IndexByte(b, '"') >= 0 {
			return r.quoted(b)
		}
		b = trimEOL(b)
		if len(b) == 0 {
			continue
		}
		s := string(b)
		r.rec = r.rec[:0]
		for {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				r.rec = append(r.rec, s)
				return r.rec, nil
			}
			r.rec = append(r.rec, s[:i])
			s = s[i+1:]
		}
	}
}

// readLine reads a line, its end of line included; the slice is valid
// until the next call.
func (r *records) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.buf = append(r.buf[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = r.br.ReadSlice('\n')
			r.buf = append(r.buf, b...)
		}
		b = r.buf
	}
	if len(b) > 0 {
		r.next++
	}
	if errors.Is(err, io.EOF) && len(b) > 0 {
		err = nil
	}
	return b, err
}

// quoted reads a record with quotes: lines are added while its quotes are
// open, then encoding/csv parses it.
func (r *records) quoted(first []byte) ([]string, error) {
	rec := append([]byte(nil), first...)
	for bytes.Count(rec, []byte{'"'})%2 == 1 && len(rec) < maxRecord {
		b, err := r.readLine()
		if len(b) == 0 && err != nil {
			break // cut short: the parse says so
		}
		rec = append(rec, b...)
	}
	cr := csv.NewReader(bytes.NewReader(rec))
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	fields, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			pe.StartLine += r.line - 1
			pe.Line += r.line - 1
		}
		return nil, err
	}
	return fields, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
