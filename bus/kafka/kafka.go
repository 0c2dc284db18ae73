// Package kafka is the Apache Kafka driver of package bus, built on
// github.com/twmb/franz-go. Importing it registers the scheme "kafka":
//
//	conn, err := bus.Dial(ctx, "kafka://127.0.0.1:9092")
//	conn, err := bus.Dial(ctx, "kafka://host1:9092,host2:9092?linger=5ms&client_id=perflab")
//
// The host part lists seed brokers. Query parameters:
//
//	linger     how long the producer waits to batch records (a Go duration);
//	           default 0, the lowest latency: concurrent publishes still
//	           share a batch while an earlier one is in flight
//	client_id  the client id the brokers log; default "perflab"
//
// # Publishing
//
// Publish produces one record with acks from all in-sync replicas
// (idempotent) and returns when the broker has acknowledged it. Key, Headers
// and Time map to the record's key, headers and timestamp; an empty Key is
// no key (records are then spread over partitions), a zero Time is now.
//
// # Subscribing
//
// Topics must exist (see Conn.CreateTopic); Subscribe fails on one that does
// not. A received Message's Time is the record timestamp; of repeated header
// names the last wins.
//
// With an empty group, a subscription consumes every partition of its
// topics directly, from their end offsets as listed when Subscribe is
// called: no group membership, no rebalances, no commits, and nothing
// published after Subscribe returns is missed. This is the right choice
// for awaiting replies in a load test: subscribe before the first request
// is published. Partitions added to a topic later are not consumed.
//
// With a group, a subscription is a member of that consumer group (the
// default cooperative-sticky balancer) and commits offsets automatically.
// Where the group has no committed offset it starts at the first record
// whose timestamp is not before the Subscribe call, so the time it takes to
// join the group loses nothing. As with any consumer group, a rebalance can
// deliver a record twice.
package kafka

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perflab/perflab/bus"
)

func init() {
	bus.Register("kafka", func(ctx context.Context, u *url.URL) (bus.Conn, error) {
		c, err := Dial(ctx, u)
		if err != nil {
			return nil, err // not a nil *Conn in a non-nil interface
		}
		return c, nil
	})
}

// Conn is a connection to a Kafka cluster: a producer, and a new consumer
// client per subscription.
type Conn struct {
	seeds    []string
	clientID string
	cl       *kgo.Client
	adm      *kadm.Client
}

var _ bus.Conn = (*Conn)(nil)

// Dial connects to the cluster named by a kafka:// URL (see the package
// documentation) and checks that a seed broker answers.
func Dial(ctx context.Context, u *url.URL) (*Conn, error) {
	if u.Host == "" {
		return nil, fmt.Errorf("kafka: %q: want kafka://HOST:PORT[,HOST:PORT...]", u.Redacted())
	}
	c := &Conn{seeds: strings.Split(u.Host, ","), clientID: "perflab"}
	var linger time.Duration
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "linger":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return nil, fmt.Errorf("kafka: linger %q: want a duration such as 5ms", v)
			}
			linger = d
		case "client_id":
			c.clientID = v
		default:
			return nil, fmt.Errorf("kafka: unknown URL parameter %q (have linger, client_id)", k)
		}
	}
	cl, err := kgo.NewClient(c.opts(kgo.ProducerLinger(linger))...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka: %s: %w", u.Host, err)
	}
	c.cl, c.adm = cl, kadm.NewClient(cl)
	return c, nil
}

// opts returns the options every client of c uses, then extra.
func (c *Conn) opts(extra ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{kgo.SeedBrokers(c.seeds...), kgo.ClientID(c.clientID)}, extra...)
}

// Publish produces m and waits for the broker's acknowledgement.
func (c *Conn) Publish(ctx context.Context, m bus.Message) error {
	r := &kgo.Record{Topic: m.Topic, Value: m.Value, Timestamp: m.Time}
	if m.Key != "" {
		r.Key = []byte(m.Key)
	}
	if len(m.Headers) > 0 {
		r.Headers = make([]kgo.RecordHeader, 0, len(m.Headers))
		for k, v := range m.Headers {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
	}
	if err := c.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
		return fmt.Errorf("kafka: publish to %s: %w", m.Topic, err)
	}
	return nil
}

// Close flushes nothing (Publish is synchronous) and closes the producer.
func (c *Conn) Close() error {
	c.cl.Close()
	return nil
}
