package dataset

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CSVOptions controls ReadCSV.
type CSVOptions struct {
	// Header is true when the first row names the columns. It is ignored
	// when Columns is set.
	Header bool
	// Columns, when not empty, names the columns of input that has no
	// header row: its first fields (a row's further fields are dropped). When neither Header nor Columns is set, the columns are
	// named "1", "2", ... after the number of fields of the first row.
	Columns []string
	// SkipHeader, with Columns, drops the first row: a header row whose
	// names the columns replace (JMeter's variable names with "ignore
	// first line").
	SkipHeader bool
	// Comma is the field separator; 0 means ','.
	Comma rune
}

// Table is a CSV file in memory: every row has one field per column.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Column returns the index of the named column, and whether there is one.
func (t *Table) Column(name string) (int, bool) {
	for i, c := range t.Columns {
		if c == name {
			return i, true
		}
	}
	return -1, false
}

var utf8BOM = []byte("\xef\xbb\xbf")

// MaxRow is the longest CSV row read (16 MiB): a stray quote must not
// make the rest of a file one row held in memory.
const MaxRow = 16 << 20

// ReadCSV reads CSV (RFC 4180, as encoding/csv reads it) into a Table. A
// leading UTF-8 byte order mark is dropped and blank lines are skipped.
// Every row must have one field per column, and column names must be
// non-empty and unique; errors name the 1-based line.
func ReadCSV(r io.Reader, opts CSVOptions) (*Table, error) {
	cr, err := NewCSVReader(r, opts)
	if err != nil {
		return nil, err
	}
	t := &Table{Columns: cr.Columns}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, rec)
	}
}

// CSVReader reads CSV a row at a time, each checked as ReadCSV checks
// them: a file of any size is read in the memory of its longest row.
type CSVReader struct {
	// Columns are the columns' names: the header's, CSVOptions.Columns,
	// or "1", "2", ... after the first row's fields (nil for an empty
	// file without a header).
	Columns []string
	cr      *csv.Reader
	lim     *rowLimit
	first   []string // a headerless file's first row, read for its columns
	named   bool     // CSVOptions.Columns named the columns
	end     int      // the line the last row read ended on
}

// NewCSVReader reads the header of CSV input (or its first row, to name
// the columns of a file without one).
func NewCSVReader(r io.Reader, opts CSVOptions) (*CSVReader, error) {
	lim := &rowLimit{r: r}
	br := bufio.NewReader(lim)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM)) // cannot fail: the bytes are buffered
	}
	c := &CSVReader{cr: csv.NewReader(br), lim: lim}
	if ch := opts.Comma; ch != 0 {
		if ch == '"' || ch == '\r' || ch == '\n' || ch == utf8.RuneError || !utf8.ValidRune(ch) {
			return nil, fmt.Errorf("csv: %q cannot separate fields", ch)
		}
		c.cr.Comma = ch
	}
	c.cr.FieldsPerRecord = -1 // checked here, to word the error
	if len(opts.Columns) > 0 {
		c.Columns = append([]string(nil), opts.Columns...)
		c.named = true
		if err := checkColumns(c.Columns, 0); err != nil {
			return nil, err
		}
		if opts.SkipHeader {
			if _, _, err := c.read(); err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
		}
		return c, nil
	}
	rec, line, err := c.read()
	if errors.Is(err, io.EOF) {
		if opts.Header {
			return nil, errors.New("csv: no header row: the input is empty")
		}
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if opts.Header {
		if err := checkColumns(rec, line); err != nil {
			return nil, err
		}
		c.Columns = rec
		return c, nil
	}
	c.Columns = make([]string, len(rec))
	for i := range rec {
		c.Columns[i] = strconv.Itoa(i + 1)
	}
	c.first = rec
	return c, nil
}

// Read returns the next row, io.EOF after the last.
func (c *CSVReader) Read() ([]string, error) {
	rec, line := c.first, 1
	if rec != nil {
		c.first = nil
	} else {
		var err error
		if rec, line, err = c.read(); err != nil {
			return nil, err
		}
	}
	if c.named && len(rec) > len(c.Columns) {
		rec = rec[:len(c.Columns)] // the columns name the first fields
	}
	if len(rec) != len(c.Columns) {
		return nil, fmt.Errorf("csv line %d: %d fields, want %d (columns %s)", line, len(rec), len(c.Columns), strings.Join(c.Columns, ", "))
	}
	return rec, nil
}

// read reads a record of at most about MaxRow bytes, and its line.
func (c *CSVReader) read() ([]string, int, error) {
	c.lim.start = c.cr.InputOffset()
	rec, err := c.cr.Read()
	switch {
	case errors.Is(err, io.EOF):
		return nil, 0, io.EOF
	case errors.Is(err, errLongRow):
		return nil, 0, fmt.Errorf("csv: the row after line %d is longer than %d MiB: rows are limited to %d MiB (a quote left open makes the rest of a file one row)", c.end, MaxRow>>20, MaxRow>>20)
	case err != nil:
		return nil, 0, fmt.Errorf("csv: %w", err)
	}
	line, _ := c.cr.FieldPos(0)
	last, _ := c.cr.FieldPos(len(rec) - 1)
	c.end = last + strings.Count(rec[len(rec)-1], "\n")
	return rec, line, nil
}

var errLongRow = errors.New("row too long")

// rowLimit is the input of a csv.Reader, cut off once the reader has
// been given more than MaxRow bytes, and its buffer, past the start of
// the row it reads: encoding/csv holds a row whole, however long.
type rowLimit struct {
	r     io.Reader
	given int64
	start int64 // the csv.Reader's offset at the start of the row
}

// slack is what the readers between rowLimit and the csv.Reader buffer
// (bufio.NewReader's 4096 bytes), and the byte order mark.
const slack = 4096 + 3

func (l *rowLimit) Read(p []byte) (int, error) {
	if l.given-l.start > MaxRow+slack {
		return 0, errLongRow
	}
	n, err := l.r.Read(p)
	l.given += int64(n)
	return n, err
}

// checkColumns checks that column names are non-empty and unique; line is
// the header's line, or 0 for names given in CSVOptions.Columns.
func checkColumns(cols []string, line int) error {
	where := "columns"
	if line > 0 {
		where = fmt.Sprintf("csv line %d: header", line)
	}
	seen := make(map[string]int, len(cols))
	for i, c := range cols {
		if c == "" {
			return fmt.Errorf("%s: column %d has no name", where, i+1)
		}
		if j, ok := seen[c]; ok {
			return fmt.Errorf("%s: columns %d and %d are both named %q", where, j+1, i+1, c)
		}
		seen[c] = i
	}
	return nil
}
