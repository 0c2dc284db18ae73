package logcorr

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/csvcell"
)

// Request is one request perflab sent and marked for correlation: a row of
// requests.csv.
type Request struct {
	Operation string
	ID        string // the id the service logs; empty ids never match
	Start     time.Time
	End       time.Time
	OK        bool // perflab counted the request as a success
}

// RequestsHeader is the header line of requests.csv.
const RequestsHeader = "operation,id,start_unix_ns,end_unix_ns,ok"

var requestColumns = strings.Split(RequestsHeader, ",")

// WriteRequests writes reqs in the requests.csv format, header included.
func WriteRequests(w io.Writer, reqs []Request) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(requestColumns); err != nil {
		return err
	}
	for _, r := range reqs {
		if err := cw.Write(Row(r)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Row is a request's row of requests.csv. The operation and the id (which
// the service may have given) are text a spreadsheet must not take for a
// formula (csvcell).
func Row(r Request) []string {
	return []string{csvcell.Escape(r.Operation), csvcell.Escape(r.ID), strconv.FormatInt(r.Start.UnixNano(), 10),
		strconv.FormatInt(r.End.UnixNano(), 10), strconv.FormatBool(r.OK)}
}

// ReadRequestsFile reads a requests.csv file; its errors name the file and
// the line.
func ReadRequestsFile(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	reqs, err := ReadRequests(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reqs, nil
}

// ReadRequests reads the requests.csv format: a header naming at least the
// columns operation, id, start_unix_ns, end_unix_ns and ok (in any order;
// other columns are ignored), then one row per request. Times are Unix
// nanoseconds; ok is true or false. Errors name the line ("line 7: ...").
func ReadRequests(r io.Reader) ([]Request, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("line 1: missing header " + RequestsHeader)
	}
	if err != nil {
		return nil, csvError(err)
	}
	col := make([]int, len(requestColumns))
	for i, name := range requestColumns {
		col[i] = -1
		for j, h := range header {
			if strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), name) {
				col[i] = j
				break
			}
		}
		if col[i] < 0 {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("line %d: header %q has no column %s (want %s)", line, strings.Join(header, ","), name, RequestsHeader)
		}
	}
	width := len(header)
	var reqs []Request
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return reqs, nil
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != width {
			return nil, fmt.Errorf("line %d: %d fields, want %d like the header", line, len(rec), width)
		}
		req := Request{Operation: csvcell.Unescape(rec[col[0]]), ID: csvcell.Unescape(rec[col[1]])}
		start, err := strconv.ParseInt(strings.TrimSpace(rec[col[2]]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: start_unix_ns %q is not an integer", line, rec[col[2]])
		}
		end, err := strconv.ParseInt(strings.TrimSpace(rec[col[3]]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: end_unix_ns %q is not an integer", line, rec[col[3]])
		}
		if end < start {
			return nil, fmt.Errorf("line %d: end_unix_ns %d is before start_unix_ns %d", line, end, start)
		}
		req.Start, req.End = time.Unix(0, start), time.Unix(0, end)
		if req.OK, err = strconv.ParseBool(strings.TrimSpace(rec[col[4]])); err != nil {
			return nil, fmt.Errorf("line %d: ok %q is not true or false", line, rec[col[4]])
		}
		if req.Operation == "" {
			return nil, fmt.Errorf("line %d: empty operation", line)
		}
		reqs = append(reqs, req)
	}
}

// csvError words a CSV syntax error with its line first, like the others.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}
