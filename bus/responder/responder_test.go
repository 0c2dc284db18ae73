package responder_test

import (
	"context"
	"errors"
	"github.com/perflab/perflab/sim"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/bustest"
	_ "github.com/perflab/perflab/bus/mem"
	"github.com/perflab/perflab/bus/responder"
)

// memConn dials a new in-process bus, closed when t ends.
func memConn(t *testing.T) bus.Conn {
	t.Helper()
	conn, err := bus.Dial(context.Background(), "mem://"+bustest.TopicName())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func start(t *testing.T, conn bus.Conn, spec responder.Spec) *responder.Responder {
	t.Helper()
	r, err := responder.Start(context.Background(), conn, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func subscribe(t *testing.T, conn bus.Conn, topics ...string) bus.Subscription {
	t.Helper()
	sub, err := conn.Subscribe(context.Background(), topics, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

func publish(t *testing.T, conn bus.Conn, m bus.Message) {
	t.Helper()
	if err := conn.Publish(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, sub bus.Subscription) bus.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitStats polls r's Stats until they are want.
func waitStats(t *testing.T, r *responder.Responder, want responder.Stats) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.Stats() != want {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want %+v", r.Stats(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func eq(s string) *string { return &s }

// TestRespond answers requests that carry a reply-to header and are orders,
// on the topic the header names, and ignores the others.
func TestRespond(t *testing.T) {
	conn := memConn(t)
	r := start(t, conn, responder.Spec{
		Topics: []string{"orders", "returns"},
		Match:  []responder.Condition{{Field: "json.type", Equals: eq("order")}, {Field: "header.reply-to"}},
		Reply: responder.Reply{
			Topic:   "${header.reply-to}",
			Key:     "${key}",
			Headers: map[string]string{"from": "${topic}", "trace": "${header.trace:-none}"},
			Body:    `{"id":"${json.id}","qty":${json.qty}}`,
		},
	})
	sub := subscribe(t, conn, "replies-a", "replies-b")
	requests := []bus.Message{
		{Topic: "orders", Key: "k1", Headers: map[string]string{"reply-to": "replies-a", "trace": "t1"}, Value: []byte(`{"type":"order","id":"o1","qty":3}`)},
		{Topic: "orders", Headers: map[string]string{"reply-to": "replies-a"}, Value: []byte(`{"type":"cancel","id":"o2"}`)},
		{Topic: "orders", Value: []byte(`{"type":"order","id":"o3"}`)}, // no reply-to
		{Topic: "returns", Headers: map[string]string{"reply-to": "replies-b"}, Value: []byte(`{"type":"order","id":"o4","qty":1}`)},
		{Topic: "elsewhere", Headers: map[string]string{"reply-to": "replies-a"}, Value: []byte(`{"type":"order","id":"o5"}`)},
	}
	for _, m := range requests {
		publish(t, conn, m)
	}
	got := map[string]bus.Message{}
	for range 2 {
		m := next(t, sub)
		got[m.Topic] = m
	}
	if a := got["replies-a"]; a.Key != "k1" || string(a.Value) != `{"id":"o1","qty":3}` ||
		a.Headers["from"] != "orders" || a.Headers["trace"] != "t1" {
		t.Errorf("reply to o1: %+v", a)
	}
	if b := got["replies-b"]; b.Key != "" || string(b.Value) != `{"id":"o4","qty":1}` ||
		b.Headers["from"] != "returns" || b.Headers["trace"] != "none" {
		t.Errorf("reply to o4: %+v", b)
	}
	waitStats(t, r, responder.Stats{Received: 4, Matched: 2, Replied: 2})
}

// TestLatencyAndPending checks the fixed delay, and that with max_pending 1
// the replies are sent one delay after another.
func TestLatencyAndPending(t *testing.T) {
	const delay = 30 * time.Millisecond
	conn := memConn(t)
	r := start(t, conn, responder.Spec{
		Topics:     []string{"in"},
		Reply:      responder.Reply{Topic: "out", Body: "${json.n}"},
		Latency:    &sim.Latency{Fixed: sim.Duration(delay)},
		MaxPending: 1,
	})
	sub := subscribe(t, conn, "out")
	begin := time.Now()
	for _, v := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		publish(t, conn, bus.Message{Topic: "in", Value: []byte(v)})
	}
	for i, want := range []string{"1", "2", "3"} {
		m := next(t, sub)
		if string(m.Value) != want {
			t.Fatalf("reply %d: %q, want %q", i+1, m.Value, want)
		}
		if since := time.Since(begin); since < time.Duration(i+1)*delay {
			t.Errorf("reply %d after %v, want at least %v", i+1, since, time.Duration(i+1)*delay)
		}
	}
	waitStats(t, r, responder.Stats{Received: 3, Matched: 3, Replied: 3})
}

// TestCloseCancelsPending checks that Close does not wait out the delays.
func TestCloseCancelsPending(t *testing.T) {
	conn := memConn(t)
	r := start(t, conn, responder.Spec{
		Topics:  []string{"in"},
		Reply:   responder.Reply{Topic: "out"},
		Latency: &sim.Latency{Fixed: sim.Duration(time.Hour)},
	})
	publish(t, conn, bus.Message{Topic: "in"})
	publish(t, conn, bus.Message{Topic: "in"})
	waitStats(t, r, responder.Stats{Received: 2, Matched: 2})
	begin := time.Now()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if since := time.Since(begin); since > time.Second {
		t.Errorf("Close took %v", since)
	}
	if s := r.Stats(); s != (responder.Stats{Received: 2, Matched: 2, Canceled: 2}) {
		t.Errorf("stats %+v", s)
	}
}

// failingConn fails every Publish.
type failingConn struct{ bus.Conn }

func (failingConn) Publish(context.Context, bus.Message) error { return errors.New("broker says no") }

func TestPublishErrors(t *testing.T) {
	conn := memConn(t)
	r := start(t, failingConn{conn}, responder.Spec{Topics: []string{"in"}, Reply: responder.Reply{Topic: "out"}})
	publish(t, conn, bus.Message{Topic: "in"})
	waitStats(t, r, responder.Stats{Received: 1, Matched: 1, Errors: 1, LastError: "broker says no"})
}

func TestStartErrors(t *testing.T) {
	conn := memConn(t)
	ctx := context.Background()
	if _, err := responder.Start(ctx, conn, responder.Spec{Topics: []string{"in"}}); err == nil ||
		!strings.Contains(err.Error(), "reply: topic is required") {
		t.Errorf("Start with an invalid spec: %v", err)
	}
	conn.Close()
	if _, err := responder.Start(ctx, conn, responder.Spec{Topics: []string{"in"}, Reply: responder.Reply{Topic: "out"}}); !errors.Is(err, bus.ErrClosed) {
		t.Errorf("Start on a closed Conn: %v, want ErrClosed", err)
	}
}

// TestCloseAfterContext checks that a responder stopped by the end of
// Start's context closes without an error.
func TestCloseAfterContext(t *testing.T) {
	conn := memConn(t)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := responder.Start(ctx, conn, responder.Spec{Topics: []string{"in"}, Reply: responder.Reply{Topic: "out"}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
