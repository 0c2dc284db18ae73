package metrics

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// A failure is counted by its words less what varies from request to
// request: the same failure reads the same each time, and what explains
// it stays.
func TestMessageOf(t *testing.T) {
	for _, c := range []struct {
		k      ErrKind
		detail string
		want   string
	}{
		{HTTP5xx, "status 503", "HTTP 503 Service Unavailable"},
		{HTTP4xx, "status 499", "HTTP 499"}, // no standard text
		{HTTP3xx, "status 302, the last of 3 redirects followed (redirects)", "HTTP 302 Found, the last of 3 redirects followed (redirects)"},
		{HTTP4xx, "status 401: the server's challenge names no realm", "HTTP 401 Unauthorized: the server's challenge names no realm"},
		{TLS, "tls handshake: tls: failed to verify certificate: x509: certificate signed by unknown authority", "x509: certificate signed by unknown authority"},
		{TLS, "tls: failed to verify certificate: x509: certificate is valid for a.example, not 127.0.0.1", "x509: certificate is valid for a.example, not 127.0.0.1"},
		{TLS, "tls handshake: remote error: tls: handshake failure", "remote error: tls: handshake failure"},
		{ConnRefused, "connect: dial tcp 127.0.0.1:41663: connect: connection refused", "connect: connection refused"},
		{ConnRefused, "connect: connection refused", "connect: connection refused"},
		{ConnReset, "read tcp 127.0.0.1:50312->127.0.0.1:8080: read: connection reset by peer", "read: connection reset by peer"},
		{Write, "write: write tcp [::1]:50312->[::1]:8080: write: broken pipe", "write: broken pipe"},
		{DNS, "lookup db.invalid on 127.0.0.53:53: no such host", "lookup db.invalid: no such host"},
		{CheckFailed, "json $.id is 48213, want 17", "json $.id is <n>, want 17"},
		{CheckFailed, "order 550e8400-e29b-41d4-a716-446655440000 failed at 2026-11-25T10:00:00.123Z (req-7f3a9c21ab)",
			"order <uuid> failed at <time> (req-<hex>)"},
		{CheckFailed, "body does not contain ok\r\n\tat 12:01:02", "body does not contain ok   at <time>"},
		{Other, "x509 and HTTP/1.1 stay", "x509 and HTTP/1.1 stay"},
		{Timeout, "", "timeout"},
	} {
		if got := MessageOf(c.k, c.detail); got != c.want {
			t.Errorf("MessageOf(%s, %q) = %q, want %q", c.k, c.detail, got, c.want)
		}
	}
	long := MessageOf(Other, strings.Repeat("é", 200)+"\xff")
	if len(long) > MaxMessage || !strings.HasSuffix(long, "...") || !utf8.ValidString(long) {
		t.Errorf("a long message: %d bytes %q", len(long), long)
	}
	// Nothing to take out: the detail itself, not a copy.
	d := "read: connection reset by peer"
	if got := MessageOf(ConnReset, d); got != d || strings.Clone(got) != d {
		t.Errorf("%q", got)
	}
}

// Messages count every failure once: the first MaxMessages distinct
// messages of a kind each, the rest together; requests whose ids differ
// are one message.
func TestMessagesCountEveryFailure(t *testing.T) {
	s := NewStats()
	for i := range 1000 {
		s.AddResult(time.Millisecond, time.Millisecond, CheckFailed, 0, fmt.Sprintf("order %d not found", 10000+i))
	}
	for i := range MaxMessages + 5 { // 5 more distinct than kept
		for range i + 1 {
			s.AddResult(time.Millisecond, time.Millisecond, HTTP5xx, 0, fmt.Sprintf("status %d", 500+i))
		}
	}
	s.AddResult(time.Millisecond, time.Millisecond, OK, 0, "")
	want := []ErrorMessage{
		{Kind: "http_5xx", Message: "HTTP 519", Count: 20}, {Kind: "http_5xx", Message: "HTTP 518", Count: 19},
	}
	got := s.Messages.List()
	if !reflect.DeepEqual(got[:2], want) {
		t.Errorf("first: %v, want %v", got[:2], want)
	}
	// 500..519 kept (the first 20 distinct), 520..524 (21..25 each) as others.
	if last := got[len(got)-2]; last != (ErrorMessage{Kind: "http_5xx", Other: true, Count: 21 + 22 + 23 + 24 + 25}) {
		t.Errorf("others: %v", last)
	}
	if last := got[len(got)-1]; last != (ErrorMessage{Kind: "check_failed", Message: "order <n> not found", Count: 1000}) {
		t.Errorf("ids: %v", last)
	}
	if len(got) != MaxMessages+2 {
		t.Errorf("%d entries, want %d", len(got), MaxMessages+2)
	}
	sums := map[string]int64{}
	for _, e := range got {
		sums[e.Kind] += e.Count
	}
	if sums["http_5xx"] != s.Errors[HTTP5xx] || sums["check_failed"] != s.Errors[CheckFailed] {
		t.Errorf("sums %v, errors %v", sums, s.Errors)
	}
	if s.Details[HTTP5xx] != "status 500" {
		t.Errorf("detail %q", s.Details[HTTP5xx])
	}
}

// Merged in any order, messages add up exactly while they are within the
// bound; beyond it the most frequent are kept and the kind's total stays
// exact.
func TestMessagesMerge(t *testing.T) {
	a, b := NewStats(), NewStats()
	for i := range 30 {
		a.AddResult(0, 0, Read, 0, "malformed response")
		if i%3 == 0 {
			b.AddResult(0, 0, Read, 0, "malformed response")
		}
		b.AddResult(0, 0, ConnReset, 0, "read: connection reset by peer")
	}
	ab, ba := NewStats(), NewStats()
	ab.Merge(a)
	ab.Merge(b)
	ba.Merge(b)
	ba.Merge(a)
	want := []ErrorMessage{{Kind: "connection_reset", Message: "read: connection reset by peer", Count: 30}, {Kind: "read", Message: "malformed response", Count: 40}}
	if !reflect.DeepEqual(ab.Messages.List(), want) || !reflect.DeepEqual(ba.Messages.List(), want) {
		t.Errorf("merged %v and %v, want %v", ab.Messages.List(), ba.Messages.List(), want)
	}
	// A full kind: a frequent message of another part takes the place of
	// the least frequent.
	full, more := NewStats(), NewStats()
	for i := range MaxMessages + 2 {
		full.AddResult(0, 0, Other, 0, fmt.Sprintf("m%d", i))
	}
	for range 5 {
		more.AddResult(0, 0, Other, 0, "frequent")
	}
	full.Merge(more)
	got := full.Messages.List()
	if got[0] != (ErrorMessage{Kind: "other", Message: "frequent", Count: 5}) {
		t.Errorf("first %v", got[0])
	}
	if o := got[len(got)-1]; o != (ErrorMessage{Kind: "other", Other: true, Count: 3}) || len(got) != MaxMessages+1 {
		t.Errorf("others %v, %d entries", o, len(got))
	}
}

// Messages are written with the statistics and read back as written; a
// record whose messages do not fit its errors is refused.
func TestMessagesRecord(t *testing.T) {
	s := NewStats()
	for i := range MaxMessages + 3 {
		s.AddResult(0, 0, TLS, 0, fmt.Sprintf("x509: certificate is valid for h%d, not localhost", i))
		s.AddResult(0, 0, HTTP5xx, 0, "status 503")
	}
	back, b, err := readBack(t, s)
	if err != nil || !reflect.DeepEqual(back.Messages.List(), s.Messages.List()) {
		t.Fatalf("read back: %v, %v; want %v", back.Messages.List(), err, s.Messages.List())
	}
	if sum := back.Summarize(time.Second).Errors.Messages; !reflect.DeepEqual(sum, s.Messages.List()) {
		t.Errorf("summary: %v", sum)
	}
	for _, c := range []struct {
		bad  func(*StatsRecord)
		want string
	}{
		{func(r *StatsRecord) { r.Messages[0].Kind = "no_such" }, `error kind "no_such"`},
		{func(r *StatsRecord) { r.Messages[0].Count = 0 }, "count 0"},
		{func(r *StatsRecord) { r.Messages[0].Count = 1000 }, "of 23 failures"},
		{func(r *StatsRecord) { r.Messages = append(r.Messages, r.Messages[1]) }, "twice"},
	} {
		var r StatsRecord
		json.Unmarshal(b, &r)
		c.bad(&r)
		if _, err := r.Stats(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// Recorded in shards and drained into intervals, every failure is counted
// once by its message.
func TestRecorderMessages(t *testing.T) {
	rec := NewRecorder([]Op{{Name: "a"}}, 4, false)
	total := NewStats()
	for round := range 3 {
		for i := range 100 {
			ek, d := OK, ""
			switch i % 4 {
			case 1:
				ek, d = HTTP5xx, "status 503"
			case 2:
				ek, d = ConnReset, fmt.Sprintf("read tcp 127.0.0.1:%d->127.0.0.1:80: read: connection reset by peer", 40000+i)
			}
			rec.RecordResult(i, 0, time.Millisecond, time.Millisecond, ek, 0, d)
		}
		iv := []*Stats{NewStats()}
		rec.Drain(iv)
		if got := iv[0].Messages.List(); len(got) != 2 || got[0].Count != 25 || got[1].Count != 25 {
			t.Errorf("round %d: %v", round, got)
		}
		total.Merge(iv[0])
	}
	want := []ErrorMessage{{Kind: "http_5xx", Message: "HTTP 503 Service Unavailable", Count: 75}, {Kind: "connection_reset", Message: "read: connection reset by peer", Count: 75}}
	if got := total.Messages.List(); !reflect.DeepEqual(got, want) {
		t.Errorf("total %v, want %v", got, want)
	}
}

// readBack is s written as JSON (returned too) and read back.
func readBack(t *testing.T, s *Stats) (*Stats, []byte, error) {
	t.Helper()
	b, err := json.Marshal(s.Record())
	if err != nil {
		t.Fatal(err)
	}
	var r StatsRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	back, err := r.Stats()
	return back, b, err
}
