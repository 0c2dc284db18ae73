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
	// header row. When neither Header nor Columns is set, the columns are
	// named "1", "2", ... after the number of fields of the first row.
	Columns []string
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

// ReadCSV reads CSV (RFC 4180, as encoding/csv reads it) into a Table. A
// leading UTF-8 byte order mark is dropped and blank lines are skipped.
// Every row must have one field per column, and column names must be
// non-empty and unique; errors name the 1-based line.
func ReadCSV(r io.Reader, opts CSVOptions) (*Table, error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(len(utf8BOM)) // cannot fail: the bytes are buffered
	}
	cr := csv.NewReader(br)
	if c := opts.Comma; c != 0 {
		if c == '"' || c == '\r' || c == '\n' || c == utf8.RuneError || !utf8.ValidRune(c) {
			return nil, fmt.Errorf("csv: %q cannot separate fields", c)
		}
		cr.Comma = c
	}
	cr.FieldsPerRecord = -1 // checked here, to word the error

	t := &Table{}
	if len(opts.Columns) > 0 {
		t.Columns = append([]string(nil), opts.Columns...)
		if err := checkColumns(t.Columns, 0); err != nil {
			return nil, err
		}
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		if t.Columns == nil {
			if opts.Header {
				if err := checkColumns(rec, line); err != nil {
					return nil, err
				}
				t.Columns = rec
				continue
			}
			t.Columns = make([]string, len(rec))
			for i := range rec {
				t.Columns[i] = strconv.Itoa(i + 1)
			}
		}
		if len(rec) != len(t.Columns) {
			return nil, fmt.Errorf("csv line %d: %d fields, want %d (columns %s)", line, len(rec), len(t.Columns), strings.Join(t.Columns, ", "))
		}
		t.Rows = append(t.Rows, rec)
	}
	if t.Columns == nil && opts.Header {
		return nil, errors.New("csv: no header row: the input is empty")
	}
	return t, nil
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
