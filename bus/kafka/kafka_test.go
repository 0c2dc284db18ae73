package kafka_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/bustest"
	"github.com/perflab/perflab/bus/kafka"
)

// target is the broker at addr, with topics of partitions partitions.
func target(addr string, partitions int32) bustest.Target {
	return bustest.Target{
		URL: "kafka://" + addr,
		NewTopic: func(t *testing.T, conn bus.Conn) string {
			t.Helper()
			c := conn.(*kafka.Conn)
			name := bustest.TopicName()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.CreateTopic(ctx, name, partitions); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := c.DeleteTopic(ctx, name); err != nil {
					t.Error(err)
				}
			})
			return name
		},
	}
}

// Each test runs against an in-process Kafka (kfake) and, where
// PERFLAB_TEST_KAFKA is set (CI), against that real broker.

func TestConformance(t *testing.T) {
	bustest.EachKafka(t, func(t *testing.T, addr string) { bustest.Run(t, target(addr, 1)) })
}

// TestPartitions checks that a subscription without a group consumes every
// partition, and that records of one key keep their order.
func TestPartitions(t *testing.T) { bustest.EachKafka(t, testPartitions) }

func testPartitions(t *testing.T, addr string) {
	tg := target(addr, 3)
	conn := tg.Dial(t)
	topic := tg.NewTopic(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := conn.Subscribe(ctx, []string{topic}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	keys := []string{"a", "b", "c", "d", "e", "f"}
	const perKey = 5
	for i := range perKey {
		for _, k := range keys {
			if err := conn.Publish(ctx, bus.Message{Topic: topic, Key: k, Value: []byte{byte('0' + i)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string]string{}
	for range len(keys) * perKey {
		m, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got[m.Key] += string(m.Value)
	}
	for _, k := range keys {
		if got[k] != "01234" {
			t.Errorf("key %s: got values %q, want 01234", k, got[k])
		}
	}
}

// TestKeepsTimestamp checks that a published Time comes back as the record
// timestamp.
func TestKeepsTimestamp(t *testing.T) { bustest.EachKafka(t, testKeepsTimestamp) }

func testKeepsTimestamp(t *testing.T, addr string) {
	tg := target(addr, 1)
	conn := tg.Dial(t)
	topic := tg.NewTopic(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := conn.Subscribe(ctx, []string{topic}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	if err := conn.Publish(ctx, bus.Message{Topic: topic, Time: at}); err != nil {
		t.Fatal(err)
	}
	m, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Time.Equal(at) {
		t.Errorf("Time %v, want %v", m.Time, at)
	}
}

func TestErrors(t *testing.T) { bustest.EachKafka(t, testErrors) }

func testErrors(t *testing.T, addr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct{ url, want string }{
		{"kafka://" + addr + "?linger=soon", `linger "soon"`},
		{"kafka://" + addr + "?acks=1", `unknown URL parameter "acks"`},
		{"kafka://", "want kafka://HOST:PORT"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kafka.Dial(ctx, u); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dial(%s): %v, want an error containing %q", c.url, err, c.want)
		}
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	if conn, err := bus.Dial(short, "kafka://127.0.0.1:1"); err == nil || conn != nil {
		t.Errorf("Dial of a closed port: %v, %v; want an error and a nil Conn", conn, err)
	}
	conn, err := bus.Dial(ctx, "kafka://"+addr+"?linger=1ms&client_id=perflab-test")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	missing := bustest.TopicName()
	if _, err := conn.Subscribe(ctx, []string{missing}, ""); err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("Subscribe to a missing topic: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}
	if _, err := conn.Subscribe(ctx, nil, ""); err == nil {
		t.Error("Subscribe to no topics: no error")
	}
}

// A subscription to a topic that does not exist fails at once, and says how
// to have perflab create it.
func TestSubscribeMissingTopic(t *testing.T) { bustest.EachKafka(t, testSubscribeMissingTopic) }

func testSubscribeMissingTopic(t *testing.T, addr string) {
	tg := target(addr, 1)
	conn := tg.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := conn.Subscribe(ctx, []string{bustest.TopicName()}, "")
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "topics:") {
		t.Errorf("subscribe to a missing topic: %v", err)
	}
}
