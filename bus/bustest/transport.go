package bustest

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
)

// timeout bounds every wait of the conformance tests.
const timeout = 15 * time.Second

// subscribe subscribes conn to topics and closes the subscription when t
// ends.
func subscribe(t *testing.T, conn bus.Conn, group string, topics ...string) bus.Subscription {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sub, err := conn.Subscribe(ctx, topics, group)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub
}

func publish(t *testing.T, conn bus.Conn, m bus.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := conn.Publish(ctx, m); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, sub bus.Subscription) bus.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	m, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkSame fails t unless got carries want's topic, key, headers and value.
func checkSame(t *testing.T, got, want bus.Message) {
	t.Helper()
	if got.Topic != want.Topic || got.Key != want.Key || !maps.Equal(got.Headers, want.Headers) || !bytes.Equal(got.Value, want.Value) {
		t.Fatalf("got topic %q key %q headers %v value %q,\nwant topic %q key %q headers %v value %q",
			got.Topic, got.Key, got.Headers, got.Value, want.Topic, want.Key, want.Headers, want.Value)
	}
	if got.Time.IsZero() {
		t.Fatalf("message %q has no Time", got.Value)
	}
}

// testRoundTrip publishes messages with and without key and headers, and
// one to another topic, and receives exactly the first ones, in order.
func testRoundTrip(t *testing.T, tg Target) {
	conn := tg.Dial(t)
	topic, other := tg.NewTopic(t, conn), tg.NewTopic(t, conn)
	sub := subscribe(t, conn, "", topic)
	sent := []bus.Message{
		{Topic: topic, Key: "order-1", Headers: map[string]string{"trace-id": "abc", "Content-Type": "application/json"},
			Value: []byte(`{"id":1}`), Time: time.Now().Add(-time.Hour).Truncate(time.Millisecond)},
		{Topic: other, Value: []byte("elsewhere")},
		{Topic: topic, Value: []byte("no key, no headers")},
		{Topic: topic, Key: "only-key"},
	}
	for _, m := range sent {
		publish(t, conn, m)
	}
	for _, want := range []bus.Message{sent[0], sent[2], sent[3]} {
		checkSame(t, next(t, sub), want)
	}
}

// testGroups checks that subscriptions without a group each get every
// message, and so do subscriptions in different groups.
func testGroups(t *testing.T, tg Target) {
	conn := tg.Dial(t)
	topic := tg.NewTopic(t, conn)
	subs := []bus.Subscription{
		subscribe(t, conn, "", topic),
		subscribe(t, conn, "", topic),
		subscribe(t, conn, topic+"-group-a", topic),
		subscribe(t, conn, topic+"-group-b", topic),
	}
	const n = 10
	for i := range n {
		publish(t, conn, bus.Message{Topic: topic, Value: []byte{byte('a' + i)}})
	}
	for i, sub := range subs {
		var got []byte
		for range n {
			got = append(got, next(t, sub).Value...)
		}
		if string(got) != "abcdefghij" {
			t.Errorf("subscription %d got %q, want every message in order", i, got)
		}
	}
}

// testLive checks that a subscription gets nothing published before it.
func testLive(t *testing.T, tg Target) {
	conn := tg.Dial(t)
	topic := tg.NewTopic(t, conn)
	publish(t, conn, bus.Message{Topic: topic, Value: []byte("before")})
	sub := subscribe(t, conn, "", topic)
	publish(t, conn, bus.Message{Topic: topic, Value: []byte("after")})
	if m := next(t, sub); string(m.Value) != "after" {
		t.Fatalf("first message is %q, want %q", m.Value, "after")
	}
}

// testClose checks Next's errors: the context's, then ErrClosed after
// Close, which may be called twice.
func testClose(t *testing.T, tg Target) {
	conn := tg.Dial(t)
	sub := subscribe(t, conn, "", tg.NewTopic(t, conn))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := sub.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with an expiring context: %v, want %v", err, context.DeadlineExceeded)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := sub.Next(context.Background()); !errors.Is(err, bus.ErrClosed) {
		t.Fatalf("Next after Close: %v, want %v", err, bus.ErrClosed)
	}
}
