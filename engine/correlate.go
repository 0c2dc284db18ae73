package engine

import (
	"encoding/csv"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/perflab/perflab/logcorr"
)

// requestLog writes requests.csv: one row per request of the steps marked
// correlate, for matching with the service's logs (package logcorr reads
// it): operation,id,start_unix_ns,end_unix_ns,ok.
type requestLog struct {
	mu     sync.Mutex
	w      *csv.Writer
	header bool
	err    error
}

func newRequestLog(w io.Writer) *requestLog {
	if w == nil {
		return nil
	}
	return &requestLog{w: csv.NewWriter(w)}
}

func (l *requestLog) add(op, id string, start, end time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if !l.header {
		l.err = l.w.Write(strings.Split(logcorr.RequestsHeader, ","))
		l.header = true
	}
	if l.err == nil {
		l.err = l.w.Write(logcorr.Row(logcorr.Request{Operation: op, ID: id, Start: start, End: end, OK: ok}))
	}
}

// flush writes out what is buffered, and reports the first error.
func (l *requestLog) flush() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Flush()
	if l.err == nil {
		l.err = l.w.Error()
	}
	return l.err
}
