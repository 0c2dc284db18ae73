package dataset

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
)

// CSVOptions controls ReadCSV.
type CSVOptions struct {
	// Header is true when the first row names the columns.
	Header bool
	// Columns names the columns when there is no header row.
	Columns []string
	// Comma is the field separator (default ',').
	Comma rune
}

// Table is a CSV file in memory.
type Table struct {
	Columns []string
	Rows    [][]string
}

// Column returns the index of a named column.
func (t *Table) Column(name string) (int, bool) {
	for i, c := range t.Columns {
		if c == name {
			return i, true
		}
	}
	return 0, false
}

// ReadCSV reads a whole CSV file. Every row must have one field per column.
func ReadCSV(r io.Reader, opts CSVOptions) (*Table, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	cr := csv.NewReader(bytes.NewReader(b))
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.FieldsPerRecord = -1
	t := &Table{Columns: opts.Columns}
	line := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ = cr.FieldPos(0)
		if opts.Header && t.Columns == nil {
			t.Columns = rec
			continue
		}
		if t.Columns == nil {
			t.Columns = make([]string, len(rec))
			for i := range rec {
				t.Columns[i] = fmt.Sprintf("%d", i+1)
			}
		}
		if len(rec) != len(t.Columns) {
			return nil, fmt.Errorf("line %d: %d fields, want %d (%d columns)", line, len(rec), len(t.Columns), len(t.Columns))
		}
		t.Rows = append(t.Rows, rec)
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if c == "" {
			return nil, fmt.Errorf("a column has no name")
		}
		if seen[c] {
			return nil, fmt.Errorf("column %q appears twice", c)
		}
		seen[c] = true
	}
	return t, nil
}
