package bustest

import (
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/perflab/perflab/internal/testenv"
)

// The brokers a driver's tests run against: each test runs once against a
// broker started in-process for it, on 127.0.0.1 at a free port, so that
// `go test ./...` needs nothing installed, and once more against the real
// broker named by an environment variable, which .ci/brokers.sh starts and
// sets (and CI requires: see package testenv). The in-process brokers are
// franz-go's kfake, a Kafka cluster in Go, and the nats-server package, the
// NATS server itself.
const (
	// KafkaEnv names the address (HOST:PORT) of a real Kafka broker.
	KafkaEnv = "PERFLAB_TEST_KAFKA"
	// NATSEnv names the URL (nats://HOST:PORT) of a real NATS server.
	NATSEnv = "PERFLAB_TEST_NATS"
)

// InProcess is the name of the subtests run against an in-process broker;
// those against a real broker are named after its environment variable.
const InProcess = "in-process"

// EachKafka runs f as a subtest against an in-process Kafka (kfake), then
// against the real broker of PERFLAB_TEST_KAFKA; addr lists the seed
// brokers, comma-separated, as a kafka:// URL's host does.
func EachKafka(t *testing.T, f func(t *testing.T, addr string)) {
	t.Run(InProcess, func(t *testing.T) { f(t, StartKafka(t)) })
	t.Run(KafkaEnv, func(t *testing.T) { f(t, Real(t, KafkaEnv)) })
}

// EachNATS runs f as a subtest against an in-process NATS server, then
// against the real server of PERFLAB_TEST_NATS; url is a nats:// URL.
func EachNATS(t *testing.T, f func(t *testing.T, url string)) {
	t.Run(InProcess, func(t *testing.T) { f(t, StartNATS(t)) })
	t.Run(NATSEnv, func(t *testing.T) { f(t, Real(t, NATSEnv)) })
}

// Real returns the value of env, the address of a real broker: unset, the
// test is skipped, or fails in CI.
func Real(t testing.TB, env string) string {
	t.Helper()
	return testenv.Getenv(t, env, "`source .ci/brokers.sh` starts the brokers and sets it")
}

// StartKafka starts a Kafka cluster in-process on 127.0.0.1 (franz-go's
// kfake: three brokers, so that a topic's partitions have different
// leaders; topics created only on request, as on the real broker of
// .ci/brokers.sh), closed when t ends, and returns its seed addresses.
func StartKafka(t testing.TB) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// StartNATS starts a NATS server in-process on 127.0.0.1, shut down when t
// ends, and returns its nats:// URL.
func StartNATS(t testing.TB) string {
	t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatalf("nats-server: %v", err)
	}
	go s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server: not ready for connections after 10 s")
	}
	return s.ClientURL()
}
