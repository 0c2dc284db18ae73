package runtest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"
)

// Flaky is a server on 127.0.0.1 that fails every other request it gets
// with a 500 after FlakyKO, and answers the others after FlakyOK; OK
// and KO count them. Close it when done.
type Flaky struct {
	*httptest.Server
	OK, KO atomic.Int64
}

// The times the Flaky server takes to fail a request and to answer one.
const (
	FlakyKO = 20 * time.Millisecond
	FlakyOK = 2 * time.Millisecond
)

// NewFlaky starts a Flaky server.
func NewFlaky() *Flaky {
	f := &Flaky{}
	var n atomic.Int64
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			time.Sleep(FlakyKO)
			f.KO.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		time.Sleep(FlakyOK)
		f.OK.Add(1)
	}))
	return f
}

// Outage is a handler that answers each request after 2 ms, and every
// third request with 503 from `from` to `to` after its first request:
// an outage of a third of the requests, an incident of a run.
func Outage(from, to time.Duration) http.HandlerFunc {
	var first, n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		since := time.Duration(now - first.Load())
		time.Sleep(2 * time.Millisecond)
		if since >= from && since < to && n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}
}
