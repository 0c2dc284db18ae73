package configstore

import (
	"crypto/rand"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// instrument wraps h: it times each request into a Server-Timing header,
// sets X-Request-ID and writes the request log line.
func instrument(h http.Handler, requestLog io.Writer) http.Handler {
	var mu sync.Mutex // serializes log lines
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := requestID(r.Header.Get("X-Request-ID"))
		w.Header().Set("X-Request-ID", id)
		rec := &recorder{ResponseWriter: w, start: time.Now(), op: "unknown"}
		h.ServeHTTP(rec, r)
		if rec.status == 0 { // nothing written: net/http sends 200
			rec.WriteHeader(http.StatusOK)
		}
		if requestLog == nil {
			return
		}
		end := time.Now()
		line := rec.start.UTC().AppendFormat(nil, time.RFC3339Nano)
		line = append(line, ' ')
		line = end.UTC().AppendFormat(line, time.RFC3339Nano)
		line = append(line, " req="+id+" op="+rec.op+" status="+strconv.Itoa(rec.status)+"\n"...)
		mu.Lock()
		defer mu.Unlock()
		requestLog.Write(line)
	})
}

// requestID returns the client's id made safe for a log line (no spaces or
// control characters), or a new random one.
func requestID(given string) string {
	if given == "" {
		return rand.Text()[:16]
	}
	id := []byte(given)
	for i, c := range id {
		if c <= ' ' || c == 0x7f {
			id[i] = '_'
		}
	}
	return string(id)
}

// recorder notes the status and sets Server-Timing as the header goes out.
type recorder struct {
	http.ResponseWriter
	start  time.Time
	op     string // set by the route's handler
	status int
}

func (r *recorder) WriteHeader(status int) {
	if r.status != 0 {
		return
	}
	r.status = status
	ms := float64(time.Since(r.start).Nanoseconds()) / 1e6
	r.Header().Set("Server-Timing", "app;dur="+strconv.FormatFloat(ms, 'f', 3, 64))
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}
