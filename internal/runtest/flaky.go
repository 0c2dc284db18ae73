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
