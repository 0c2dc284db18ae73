package configstore

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a request log the test can read while the server runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// request is one REST call with its expected outcome.
type request struct {
	method, path, body string
	status             int
	want               string // the exact body, or "~" and a part of it
}

func (rq request) check(t *testing.T, base string) {
	t.Helper()
	req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Request-ID", "test-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	what := rq.method + " " + rq.path
	if resp.StatusCode != rq.status {
		t.Errorf("%s: status %d; want %d (%s)", what, resp.StatusCode, rq.status, body)
	}
	if part, ok := strings.CutPrefix(rq.want, "~"); ok && !strings.Contains(string(body), part) ||
		!ok && rq.want != "" && string(body) != rq.want {
		t.Errorf("%s: body\n got %s\nwant %s", what, body, rq.want)
	}
	if resp.StatusCode >= 400 && !strings.Contains(string(body), `"status":`+strconv.Itoa(resp.StatusCode)) {
		t.Errorf("%s: error body %s is not a JSON error", what, body)
	}
	if dur, err := serverTiming(resp.Header.Get("Server-Timing")); err != nil || dur < 0 {
		t.Errorf("%s: Server-Timing %q: %v", what, resp.Header.Get("Server-Timing"), err)
	}
	if id := resp.Header.Get("X-Request-ID"); id != "test-1" {
		t.Errorf("%s: X-Request-ID %q; want test-1", what, id)
	}
}

var serverTimingRE = regexp.MustCompile(`^app;dur=([0-9]+\.[0-9]{3})$`)

// serverTiming parses "app;dur=1.234" into milliseconds.
func serverTiming(h string) (float64, error) {
	m := serverTimingRE.FindStringSubmatch(h)
	if m == nil {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(m[1], 64)
}

func TestREST(t *testing.T) {
	const (
		nodes = "/api/v1/dataspaces/ds/anchors/books/nodes"
		cat02 = "xpath=/bookstore/categories[@code='02']"
	)
	requests := []request{
		{"GET", "/api/v1/dataspaces", "", 200, `[]`},
		{"POST", "/api/v1/dataspaces?dataspace-name=ds", "", 201, `{"dataspace":"ds"}`},
		{"POST", "/api/v1/dataspaces?dataspace-name=ds", "", 409, `~already exists`},
		{"POST", "/api/v1/dataspaces", "", 400, `~dataspace name`},
		{"POST", "/api/v1/dataspaces/ds/anchors?anchor-name=books", "", 201, `{"anchor":"books","dataspace":"ds"}`},
		{"POST", "/api/v1/dataspaces/ds/anchors?anchor-name=books", "", 409, ""},
		{"POST", "/api/v1/dataspaces/nope/anchors?anchor-name=books", "", 404, `~dataspace \"nope\": not found`},
		{"GET", "/api/v1/dataspaces/ds/anchors", "", 200, `["books"]`},
		{"POST", nodes, bookstore, 201, ""},
		{"POST", nodes, bookstore, 409, ""},
		{"POST", nodes, `{"x":`, 400, `~not valid JSON`},
		{"GET", nodes + "?xpath=/bookstore", "", 200, `{"bookstore":{"bookstore-name":"Chapters"}}`},
		{"GET", nodes + "?" + cat02 + "&descendants=all", "", 200,
			`{"categories":[{"code":"02","name":"Kids","books":[{"title":"Matilda","price":6}]}]}`},
		{"GET", nodes + "?" + cat02 + "&descendants=sideways", "", 400, `~descendants`},
		{"GET", nodes + "?xpath=/bookstore/categories[@code='09']", "", 404, ""},
		{"GET", nodes + "?xpath=bookstore", "", 400, `~must start with /`},
		{"PATCH", nodes + "?" + cat02, `{"name":"Children"}`, 200, ""},
		{"PUT", nodes + "?xpath=/bookstore/categories[@code='02']", `{"books":[{"title":"Heidi","price":7}]}`, 200, ""},
		{"GET", "/cps/api/v1/dataspaces/ds/anchors/books/node?" + cat02 + "&include-descendants=true", "", 200,
			`{"categories":[{"code":"02","name":"Children","books":[{"title":"Matilda","price":6},{"title":"Heidi","price":7}]}]}`},
		{"GET", nodes + "/query?cps-path=//books[@price=7]", "", 200, `[{"books":[{"title":"Heidi","price":7}]}]`},
		{"GET", nodes + "/query?cps-path=//books[@price<7]", "", 400, `~expected =`},
		{"DELETE", nodes + "?xpath=/bookstore/categories[@code='01']", "", 204, ""},
		{"DELETE", nodes + "?xpath=/bookstore/categories[@code='01']", "", 404, ""},
		{"POST", "/api/v1/dataspaces/ds/anchors/books/generate?nodes=50&tps=2", "", 200, `{"nodes":50,"termination-points":100}`},
		{"POST", "/api/v1/dataspaces/ds/anchors/books/generate", "", 400, `~nodes=`},
		{"GET", nodes + "/query?cps-path=//nodes[@status='down']/termination-points[@tp-id='tp2']", "", 200, `~"tp-id":"tp2"`},
		{"DELETE", nodes, "", 204, ""},
		{"GET", nodes + "?descendants=all", "", 200, `{}`},
		{"DELETE", "/api/v1/dataspaces/ds/anchors/books", "", 204, ""},
		{"GET", nodes, "", 404, `~anchor \"books\" in dataspace \"ds\": not found`},
		{"DELETE", "/api/v1/dataspaces/ds", "", 204, ""},
		{"DELETE", "/api/v1/dataspaces/ds", "", 404, ""},
	}
	forEachStorage(t, func(t *testing.T, s *Store) {
		var log lockedBuffer
		srv := httptest.NewServer(NewHandler(s, &log))
		defer srv.Close()
		for _, rq := range requests {
			rq.check(t, srv.URL)
		}
		checkRequestLog(t, log.String(), len(requests))
	})
}

var logLineRE = regexp.MustCompile(`^(\S+) (\S+) req=(\S+) op=(\S+) status=(\d{3})$`)

// checkRequestLog checks the lines the requests of TestREST logged.
func checkRequestLog(t *testing.T, log string, requests int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if len(lines) != requests {
		t.Fatalf("%d log lines; want %d", len(lines), requests)
	}
	ops := map[string]bool{}
	for _, line := range lines {
		m := logLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("log line %q has not the expected format", line)
		}
		start, err1 := time.Parse(time.RFC3339Nano, m[1])
		end, err2 := time.Parse(time.RFC3339Nano, m[2])
		if err1 != nil || err2 != nil || end.Before(start) || m[3] != "test-1" {
			t.Errorf("log line %q: bad times or request id", line)
		}
		ops[m[4]+" "+m[5]] = true
	}
	for _, want := range []string{"create-dataspace 201", "get-node 200", "query-nodes 200", "update-node 200",
		"replace-node 200", "delete-node 204", "generate 200"} {
		if !ops[want] {
			t.Errorf("no log line with op and status %q", want)
		}
	}
}

// TestUnknownRoute checks that net/http's own answers are timed and logged
// too.
func TestUnknownRoute(t *testing.T) {
	var log lockedBuffer
	srv := httptest.NewServer(NewHandler(NewMemory(), &log))
	defer srv.Close()
	for _, rq := range []request{
		{"GET", "/api/v1/nothing", "", 404, "~not found"},
		{"PUT", "/api/v1/dataspaces", "", 405, "~Method Not Allowed"},
	} {
		req, _ := http.NewRequest(rq.method, srv.URL+rq.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if _, err := serverTiming(resp.Header.Get("Server-Timing")); resp.StatusCode != rq.status || err != nil {
			t.Errorf("%s %s: status %d, Server-Timing %v", rq.method, rq.path, resp.StatusCode, err)
		}
	}
	if got := log.String(); !strings.Contains(got, "op=unknown status=404") || !strings.Contains(got, "op=unknown status=405") {
		t.Errorf("request log:\n%s", got)
	}
}

func TestRequestID(t *testing.T) {
	srv := httptest.NewServer(NewHandler(NewMemory(), nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/dataspaces")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if id := resp.Header.Get("X-Request-ID"); len(id) != 16 {
		t.Errorf("generated X-Request-ID %q; want 16 characters", id)
	}
	if got := requestID("a b\tc"); got != "a_b_c" {
		t.Errorf(`requestID("a b\tc") = %q; want a_b_c`, got)
	}
}

// TestRESTRoundTrip puts a generated network over REST and reads it back.
func TestRESTRoundTrip(t *testing.T) {
	forEachStorage(t, func(t *testing.T, s *Store) {
		mustAnchor(t, s, "ds", "net", nil)
		srv := httptest.NewServer(NewHandler(s, nil))
		defer srv.Close()
		url := srv.URL + "/api/v1/dataspaces/ds/anchors/net/nodes"
		sample := GenerateNetwork(3, 2)
		resp, err := http.Post(url, "application/json", bytes.NewReader(sample))
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST: %v %v", resp.Status, err)
		}
		resp, err = http.Get(url + "?descendants=all")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !sameJSON(t, got, sample) {
			t.Errorf("GET (%s) = %s; want %s", ct, got, sample)
		}
	})
}
