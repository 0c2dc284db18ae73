package ws_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gorilla/websocket"
)

// Credentials in a ws:// URL go as the handshake's Authorization: Basic,
// percent-decoded, as an HTTP step's do (the WebSocket library refuses a
// URL with them); a step's own Authorization header wins; the step named
// from its URL does not say the password.
func TestWSURLCredentials(t *testing.T) {
	var authorized, refused atomic.Int64
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !(ok && u == "al@ice" && p == "pa:ss") && r.Header.Get("Authorization") != "Bearer own" {
			refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	s := run(t, `scenarios:
  - name: s
    vus: 1
    iterations: 2
    flow:
      - ws: {url: "ws://al%40ice:pa%3Ass@`+host+`/a", close: true}
      - name: own
        ws: {url: "ws://al%40ice:wrong@`+host+`/b", headers: {Authorization: Bearer own}, close: true}
`)
	got := ops(s)
	check(t, got, map[string]want{"ws ws://al%40ice:[redacted]@" + host + "/a": {count: 2}, "own": {count: 2}})
	if authorized.Load() != 4 || refused.Load() != 0 {
		t.Errorf("the server let %d handshakes through and refused %d; want 4 and 0", authorized.Load(), refused.Load())
	}
}
