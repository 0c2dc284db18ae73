package lines

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// CSV reads CSV records line by line: a line without a quote is split
// at its commas, which is most of a result file and several times faster
// than encoding/csv; a line with quotes (a message with a comma, a quoted
// line break) is read whole, over as many lines as its quotes span, and
// parsed by encoding/csv. A record is at most MaxLine bytes, and the last
// must end with a line end (ErrNoLineEnd).
type CSV struct {
	r    *Reader
	line int // of the record last read
	rec  []string
}

// NewCSV reads r's CSV records; a *bufio.Reader is read as it is.
func NewCSV(r io.Reader) *CSV { return &CSV{r: NewReader(r)} }

// Line is the line of the record last read (of its first line), or of
// the line an error is on.
func (c *CSV) Line() int { return c.line }

// Read returns the next record (reused by the next call), io.EOF after
// the last; blank lines are skipped. A parse error is a *csv.ParseError
// with the line in the file.
func (c *CSV) Read() ([]string, error) {
	for {
		b, err := c.r.Next()
		c.line = c.r.Line()
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(b, '"') >= 0 {
			return c.quoted(b)
		}
		whole := bytes.HasSuffix(b, []byte{'\n'})
		b = trimEOL(b)
		if len(b) == 0 {
			continue
		}
		if !whole {
			return nil, ErrNoLineEnd
		}
		s := string(b)
		c.rec = c.rec[:0]
		for {
			i := strings.IndexByte(s, ',')
			if i < 0 {
				c.rec = append(c.rec, s)
				return c.rec, nil
			}
			c.rec = append(c.rec, s[:i])
			s = s[i+1:]
		}
	}
}

// quoted reads a record with quotes: lines are added while its quotes are
// open, then encoding/csv parses it.
func (c *CSV) quoted(first []byte) ([]string, error) {
	rec := append([]byte(nil), first...)
	open := bytes.Count(rec, []byte{'"'})%2 == 1
	for open {
		b, err := c.r.Next()
		if errors.Is(err, io.EOF) {
			break // cut short: the parse says so
		}
		if err != nil {
			return nil, err
		}
		if len(rec)+len(b) > MaxLine {
			return nil, ErrTooLong
		}
		rec = append(rec, b...)
		open = open != (bytes.Count(b, []byte{'"'})%2 == 1)
	}
	cr := csv.NewReader(bytes.NewReader(rec))
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	fields, err := cr.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			pe.StartLine += c.line - 1
			pe.Line += c.line - 1
		}
		return nil, err
	}
	if !bytes.HasSuffix(rec, []byte{'\n'}) {
		return nil, ErrNoLineEnd
	}
	return fields, nil
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
