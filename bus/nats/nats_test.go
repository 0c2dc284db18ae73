package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/bustest"
	_ "github.com/perflab/perflab/bus/nats"
)

// Each test runs against an in-process NATS server and, where
// PERFLAB_TEST_NATS is set (CI), against that real server.

func target(url string) bustest.Target {
	return bustest.Target{
		URL:      url,
		NewTopic: func(*testing.T, bus.Conn) string { return bustest.TopicName() },
	}
}

func TestConformance(t *testing.T) {
	bustest.EachNATS(t, func(t *testing.T, url string) { bustest.Run(t, target(url)) })
}

// TestQueueGroupAndWildcard checks that a queue group's members split the
// messages between them, each message going to exactly one, and that a
// wildcard subscription gets the messages of every matching subject.
func TestQueueGroupAndWildcard(t *testing.T) { bustest.EachNATS(t, testQueueGroupAndWildcard) }

func testQueueGroupAndWildcard(t *testing.T, url string) {
	tg := target(url)
	conn := tg.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prefix := bustest.TopicName()
	var members []bus.Subscription
	for range 2 {
		sub, err := conn.Subscribe(ctx, []string{prefix + ".orders"}, "workers")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		members = append(members, sub)
	}
	all, err := conn.Subscribe(ctx, []string{prefix + ".*"}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()

	const n = 20
	for i := range n {
		if err := conn.Publish(ctx, bus.Message{Topic: prefix + ".orders", Value: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.Publish(ctx, bus.Message{Topic: prefix + ".other", Value: []byte("other")}); err != nil {
		t.Fatal(err)
	}
	for i := range n + 1 {
		if _, err := all.Next(ctx); err != nil {
			t.Fatalf("wildcard subscription, message %d: %v", i, err)
		}
	}
	// The members' messages have arrived by now: the server sent them
	// before the ones to the wildcard subscription, on the same connection.
	seen := map[byte]int{}
	for _, sub := range members {
		for {
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			m, err := sub.Next(short)
			cancel()
			if err != nil {
				break
			}
			seen[m.Value[0]]++
		}
	}
	if len(seen) != n {
		t.Errorf("the queue group got %d distinct messages, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Errorf("message %d went to %d members", v, c)
		}
	}
}

func TestDialError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn, err := bus.Dial(ctx, "nats://127.0.0.1:1")
	if err == nil || conn != nil {
		t.Fatalf("Dial of a closed port: %v, %v; want an error and a nil Conn", conn, err)
	}
}
