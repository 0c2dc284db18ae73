package dataset

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadCSV(t *testing.T) {
	cases := []struct {
		name string
		in   string
		opts CSVOptions
		cols []string
		rows [][]string
	}{
		{
			name: "header",
			in:   "login,password\nann,1\nbob,2\n",
			opts: CSVOptions{Header: true},
			cols: []string{"login", "password"},
			rows: [][]string{{"ann", "1"}, {"bob", "2"}},
		},
		{
			name: "BOM is dropped",
			in:   "\xef\xbb\xbflogin,password\nann,1\n",
			opts: CSVOptions{Header: true},
			cols: []string{"login", "password"},
			rows: [][]string{{"ann", "1"}},
		},
		{
			name: "header skipped, columns named",
			in:   "login,password\nann,1\nbob,2\n",
			opts: CSVOptions{Columns: []string{"user", "pw"}, SkipHeader: true},
			cols: []string{"user", "pw"},
			rows: [][]string{{"ann", "1"}, {"bob", "2"}},
		},
		{
			name: "BOM without header",
			in:   "\xef\xbb\xbfann\n",
			opts: CSVOptions{Columns: []string{"login"}},
			cols: []string{"login"},
			rows: [][]string{{"ann"}},
		},
		{
			name: "BOM only in the first field",
			in:   "a\n\xef\xbb\xbfb\n",
			cols: []string{"1"},
			rows: [][]string{{"a"}, {"\xef\xbb\xbfb"}},
		},
		{
			name: "no header, named columns, semicolons",
			in:   "a;1\nb;2\n",
			opts: CSVOptions{Columns: []string{"name", "n"}, Comma: ';'},
			cols: []string{"name", "n"},
			rows: [][]string{{"a", "1"}, {"b", "2"}},
		},
		{
			name: "named columns are the first fields, the rest dropped (as JMeter's CSV Data Set)",
			in:   "a,1,x\nb,2\n",
			opts: CSVOptions{Columns: []string{"name", "n"}},
			cols: []string{"name", "n"},
			rows: [][]string{{"a", "1"}, {"b", "2"}},
		},
		{
			name: "columns win over header: the first row is data",
			in:   "a,1\nb,2\n",
			opts: CSVOptions{Header: true, Columns: []string{"name", "n"}},
			cols: []string{"name", "n"},
			rows: [][]string{{"a", "1"}, {"b", "2"}},
		},
		{
			name: "no header, no names",
			in:   "a,1,x\nb,2,y\n",
			cols: []string{"1", "2", "3"},
			rows: [][]string{{"a", "1", "x"}, {"b", "2", "y"}},
		},
		{
			name: "empty Columns means none",
			in:   "h\nv\n",
			opts: CSVOptions{Header: true, Columns: []string{}},
			cols: []string{"h"},
			rows: [][]string{{"v"}},
		},
		{
			name: "tabs",
			in:   "a\tb\n1\t2\n",
			opts: CSVOptions{Header: true, Comma: '\t'},
			cols: []string{"a", "b"},
			rows: [][]string{{"1", "2"}},
		},
		{
			name: "quotes, commas, newlines, CRLF and blank lines",
			in:   "id,text\r\n\r\n1,\"a, \"\"b\"\"\"\r\n2,\"multi\nline\"\r\n\n3,\n",
			opts: CSVOptions{Header: true},
			cols: []string{"id", "text"},
			rows: [][]string{{"1", `a, "b"`}, {"2", "multi\nline"}, {"3", ""}},
		},
		{
			name: "no final newline",
			in:   "k\nv",
			opts: CSVOptions{Header: true},
			cols: []string{"k"},
			rows: [][]string{{"v"}},
		},
		{
			name: "header only",
			in:   "a,b\n",
			opts: CSVOptions{Header: true},
			cols: []string{"a", "b"},
		},
		{
			name: "empty without header",
			in:   "",
		},
		{
			name: "empty with columns",
			in:   "",
			opts: CSVOptions{Columns: []string{"x"}},
			cols: []string{"x"},
		},
		{
			name: "multibyte separator and text",
			in:   "név§város\nÁron§Győr\n",
			opts: CSVOptions{Header: true, Comma: '§'},
			cols: []string{"név", "város"},
			rows: [][]string{{"Áron", "Győr"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, err := ReadCSV(strings.NewReader(c.in), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tb.Columns, c.cols) || !reflect.DeepEqual(tb.Rows, c.rows) {
				t.Errorf("got columns %q rows %q; want %q %q", tb.Columns, tb.Rows, c.cols, c.rows)
			}
		})
	}
}

func TestReadCSVErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		opts CSVOptions
		msg  string
	}{
		{"short row", "a,b\n1,2\n3\n", CSVOptions{Header: true}, "csv line 3: 1 fields, want 2 (columns a, b)"},
		{"long row", "a,b\n1,2,3\n", CSVOptions{Header: true}, "csv line 2: 3 fields, want 2"},
		{"ragged without header", "1,2\n3\n", CSVOptions{}, "csv line 2: 1 fields, want 2"},
		{"too few fields for columns", "1,2\n3\n", CSVOptions{Columns: []string{"x", "y"}}, "csv line 2: 1 fields, want 2 (columns x, y)"},
		{"line after a multi-line field", "a,b\n\"x\ny\",1\n2\n", CSVOptions{Header: true}, "csv line 4: 1 fields"},
		{"line after blank lines", "a\n\n\n1,2\n", CSVOptions{Header: true}, "csv line 4:"},
		{"duplicate header", "a,b,a\n1,2,3\n", CSVOptions{Header: true}, `csv line 1: header: columns 1 and 3 are both named "a"`},
		{"empty header name", "a,,c\n1,2,3\n", CSVOptions{Header: true}, "csv line 1: header: column 2 has no name"},
		{"header after BOM and blank line", "\xef\xbb\xbf\nx,x\n", CSVOptions{Header: true}, "csv line 2: header"},
		{"duplicate columns", "1,2\n", CSVOptions{Columns: []string{"a", "a"}}, `columns: columns 1 and 2 are both named "a"`},
		{"empty column name", "1,2\n", CSVOptions{Columns: []string{"a", ""}}, "columns: column 2 has no name"},
		{"bare quote", "a\nx\"y\n", CSVOptions{Header: true}, "line 2"},
		{"unterminated quote", "a\n\"xy\n", CSVOptions{Header: true}, "csv: "},
		{"empty with header", "", CSVOptions{Header: true}, "no header row"},
		{"BOM only with header", "\xef\xbb\xbf", CSVOptions{Header: true}, "no header row"},
		{"newline separator", "a\n", CSVOptions{Comma: '\n'}, `csv: '\n' cannot separate fields`},
		{"quote separator", "a\n", CSVOptions{Comma: '"'}, "cannot separate fields"},
		{"invalid rune separator", "a\n", CSVOptions{Comma: -1}, "cannot separate fields"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, err := ReadCSV(strings.NewReader(c.in), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.msg) || tb != nil {
				t.Errorf("got %+v, %v; want an error with %q", tb, err, c.msg)
			}
		})
	}
}

func TestReadCSVReaderError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadCSV(io.MultiReader(strings.NewReader("a,b\n1,2\n"), iotest.ErrReader(boom)), CSVOptions{Header: true})
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want it to wrap %v", err, boom)
	}
	// One byte at a time, the BOM still goes.
	tb, err := ReadCSV(iotest.OneByteReader(strings.NewReader("\xef\xbb\xbfk\nv\n")), CSVOptions{Header: true})
	if err != nil || !reflect.DeepEqual(tb.Columns, []string{"k"}) {
		t.Errorf("got %+v, %v", tb, err)
	}
}

func TestReadCSVCopiesColumns(t *testing.T) {
	cols := []string{"a"}
	tb, err := ReadCSV(strings.NewReader("1\n"), CSVOptions{Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	cols[0] = "changed"
	if tb.Columns[0] != "a" {
		t.Error("the table shares the caller's Columns")
	}
}

func TestTableColumn(t *testing.T) {
	tb := &Table{Columns: []string{"login", "password", "Login"}}
	for name, want := range map[string]int{"login": 0, "password": 1, "Login": 2, "": -1, "LOGIN": -1, "x": -1} {
		i, ok := tb.Column(name)
		if i != want || ok != (want >= 0) {
			t.Errorf("Column(%q) = %d, %v; want %d", name, i, ok, want)
		}
	}
	if i, ok := (&Table{}).Column("a"); i != -1 || ok {
		t.Errorf("empty table: %d, %v", i, ok)
	}
}

// zeros is an endless input: a reader that stopped only at its end would
// never return.
type zeros struct{ given int64 }

func (z *zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	z.given += int64(len(p))
	return len(p), nil
}

// A row longer than MaxRow is refused once MaxRow (and a buffer) is read,
// naming the line it follows: an endless line, a quote left open to the
// end of a large file. A row of MaxRow bytes is read.
func TestCSVRowLimit(t *testing.T) {
	z := &zeros{}
	_, err := ReadCSV(io.MultiReader(strings.NewReader("login\nann\n"), z), CSVOptions{Header: true})
	if err == nil || err.Error() != "csv: the row after line 2 is longer than 16 MiB: rows are limited to 16 MiB (a quote left open makes the rest of a file one row)" {
		t.Errorf("an endless row: %v", err)
	}
	if z.given > MaxRow+64<<10 {
		t.Errorf("read %d bytes of the endless row, want about %d", z.given, MaxRow)
	}
	open := "a\n1\n\"" + strings.Repeat("x\n", MaxRow) + "\n"
	if _, err := ReadCSV(strings.NewReader(open), CSVOptions{Header: true}); err == nil || !strings.Contains(err.Error(), "the row after line 2 is longer than 16 MiB") {
		t.Errorf("a quote left open: %v", err)
	}
	long := strings.Repeat("y", MaxRow)
	tb, err := ReadCSV(strings.NewReader("a,b\n1,"+long+"\n2,z\n"), CSVOptions{Header: true})
	if err != nil || len(tb.Rows) != 2 || tb.Rows[0][1] != long {
		t.Errorf("a row of MaxRow bytes: %v", err)
	}
}

// CSVReader gives the rows one at a time, checked as ReadCSV checks them.
func TestCSVReader(t *testing.T) {
	cr, err := NewCSVReader(strings.NewReader("a,1\nb,2\nc\n"), CSVOptions{})
	if err != nil || !reflect.DeepEqual(cr.Columns, []string{"1", "2"}) {
		t.Fatalf("columns %q, %v", cr.Columns, err)
	}
	var got [][]string
	for {
		rec, err := cr.Read()
		if err != nil {
			if err.Error() != "csv line 3: 1 fields, want 2 (columns 1, 2)" {
				t.Errorf("error %v", err)
			}
			break
		}
		got = append(got, rec)
	}
	if !reflect.DeepEqual(got, [][]string{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("rows %q", got)
	}
}
