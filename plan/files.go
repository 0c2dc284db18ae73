package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/perflab/perflab/dataset"
	"github.com/perflab/perflab/internal/inputfile"
)

// Limits of the files a plan names. Each must be a regular file: a
// device (/dev/zero), a directory or a named pipe is refused, saying
// what it is, before anything is read.
const (
	// MaxCAFileBytes is the largest http.ca_file: 4 MiB. The certificate
	// authorities a system trusts are about 200 KB of PEM.
	MaxCAFileBytes = 4 << 20
	// MaxDataFileBytes is the largest file of a data source of one value
	// (data: file): 64 MiB. The value is held in memory for the run and
	// sent as it is; validating it reads it as a stream.
	MaxDataFileBytes = 64 << 20
	// MaxCSVBytes is the largest CSV file of a data source: 1 GiB. Its
	// rows are held in memory for the run (about twice the file's size
	// for rows of a few fields); validating it reads it a row at a time
	// (dataset.CSVReader), whatever its size.
	MaxCSVBytes = 1 << 30
)

// readData reads a data source's file (data: file, data: csv): as a
// stream that keeps nothing, to validate it (keep false; its CSV
// columns are kept), or into memory for a run (keep true).
func (d *Data) readData(dir string, keep bool) error {
	name, max := d.CSV, int64(MaxCSVBytes)
	why := fmt.Sprintf("a CSV data file may be %s, its rows held in memory for the run", inputfile.FormatSize(max))
	if d.File != "" {
		name, max = d.File, MaxDataFileBytes
		why = fmt.Sprintf("a data file of one value may be %s, held in memory and sent as it is", inputfile.FormatSize(max))
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := inputfile.OpenLimit(path, max, why)
	if err != nil {
		return err
	}
	defer f.Close()
	return d.scan(f, name, keep)
}

// comma is the CSV file's delimiter: 0 for the default ','.
func (d *Data) comma() (rune, error) {
	switch s := d.Delimiter; s {
	case "":
		return 0, nil
	case `\t`, "tab":
		return '\t', nil
	default:
		r, n := utf8.DecodeRuneInString(s)
		if n != len(s) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
			return 0, fmt.Errorf("delimiter %q: want one character (not a quote or a line break), or \\t for a tab", s)
		}
		return r, nil
	}
}

// scan reads a data source's file; see readData.
func (d *Data) scan(r io.Reader, name string, keep bool) error {
	if d.File != "" {
		isJSON := strings.EqualFold(filepath.Ext(name), ".json")
		if !keep {
			if !isJSON {
				return nil // its size is all there is to check
			}
			if err := validJSON(r); err != nil {
				return fmt.Errorf("%s is not valid JSON: %w", name, err)
			}
			return nil
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if isJSON && !json.Valid(b) {
			return fmt.Errorf("%s is not valid JSON", name)
		}
		d.Content = string(b)
		return nil
	}
	comma, err := d.comma()
	if err != nil {
		return err
	}
	cr, err := dataset.NewCSVReader(r, dataset.CSVOptions{Header: d.Header == nil || *d.Header, Columns: d.Columns, SkipHeader: d.Header != nil && *d.Header, Comma: comma})
	if err != nil {
		return err
	}
	var rows [][]string
	n := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
		if keep {
			rows = append(rows, rec)
		}
	}
	if n == 0 {
		return fmt.Errorf("%s has no rows", name)
	}
	d.Cols, d.Rows = cr.Columns, rows
	return nil
}

// validJSON reads one JSON value token by token: in the memory of its
// longest string or number, not of the whole.
func validJSON(r io.Reader) error {
	dec := json.NewDecoder(r)
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("more than one value")
		}
		return err
	}
	return nil
}

// ReadData reads what the plan's data sources hold into memory: the
// rows of each CSV file and the content of each file of one value.
// Validation reads them as streams and keeps nothing; a run reads them
// once (engine.Run calls it; a second call reads nothing). The errors
// name the data source's place in the plan, as validation's do.
func (p *Plan) ReadData() error {
	var errs ErrorList
	for _, d := range p.Data {
		if d.read || d.File == "" && d.CSV == "" {
			continue
		}
		if err := d.readData(p.dir, true); err != nil {
			errs = append(errs, &Error{File: p.File, Line: d.Pos.Line, Col: d.Pos.Col, Msg: fmt.Sprintf("data %s: %v", d.Name, err)})
			continue
		}
		d.read = true
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
