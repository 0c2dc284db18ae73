// Package bustest checks that a bus driver behaves as package bus specifies
// (Run), and gives drivers' tests their brokers: one started in-process,
// and the real one that .ci/brokers.sh starts (EachKafka, EachNATS).
package bustest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perflab/perflab/bus"
)

var topicSeq atomic.Uint64

// TopicName returns a topic name unique to this process and run, valid as
// a Kafka topic and a NATS subject: perflab-test-TIME-PID-N.
func TopicName() string {
	return fmt.Sprintf("perflab-test-%d-%d-%d", time.Now().UnixMilli(), os.Getpid(), topicSeq.Add(1))
}

// Target is a driver under test.
type Target struct {
	// URL is what each test dials with bus.Dial.
	URL string
	// NewTopic returns a new topic for t, unique to the run, created on the
	// broker if the driver needs that, with one partition where that
	// applies, and deleted when t ends.
	NewTopic func(t *testing.T, conn bus.Conn) string
}

// Dial opens a Conn to tg.URL that is closed when t ends.
func (tg Target) Dial(t *testing.T) bus.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := bus.Dial(ctx, tg.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Run runs the conformance tests against tg, each as a subtest.
func Run(t *testing.T, tg Target) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, tg) })
	t.Run("Groups", func(t *testing.T) { testGroups(t, tg) })
	t.Run("Live", func(t *testing.T) { testLive(t, tg) })
	t.Run("Close", func(t *testing.T) { testClose(t, tg) })
	t.Run("RequestReply", func(t *testing.T) { testRequestReply(t, tg) })
	t.Run("AwaiterHeld", func(t *testing.T) { testAwaiterHeld(t, tg) })
}
