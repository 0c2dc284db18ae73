package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/perflab/perflab/bus"
)

// Subscribe starts a consumer of topics: direct from the partitions' end
// offsets without a group, a member of group otherwise (see the package
// documentation).
func (c *Conn) Subscribe(ctx context.Context, topics []string, group string) (bus.Subscription, error) {
	if len(topics) == 0 {
		return nil, errors.New("kafka: subscribe: no topics")
	}
	start := time.Now()
	// Listing the end offsets also checks that every topic exists.
	ends, err := c.adm.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if errors.Is(err, kerr.UnknownTopicOrPartition) {
		return nil, fmt.Errorf("kafka: subscribe to %v: %w (a topic does not exist: create it, or list it under the bus's topics: for perflab to create it)", topics, err)
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: subscribe to %v: %w", topics, err)
	}
	var opts []kgo.Opt
	if group == "" {
		opts = []kgo.Opt{kgo.ConsumePartitions(ends.KOffsets())}
	} else {
		opts = []kgo.Opt{
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topics...),
			kgo.ConsumeResetOffset(kgo.NewOffset().AfterMilli(start.UnixMilli())),
		}
	}
	cl, err := kgo.NewClient(c.opts(opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: subscribe to %v: %w", topics, err)
	}
	return &subscription{cl: cl}, nil
}

// subscription hands out the records of its client's fetches one by one.
type subscription struct {
	cl      *kgo.Client
	records []*kgo.Record // fetched, not yet returned
	err     error         // fetch error to return after records
}

func (s *subscription) Next(ctx context.Context) (bus.Message, error) {
	for len(s.records) == 0 {
		if s.err != nil {
			err := s.err
			s.err = nil
			return bus.Message{}, err
		}
		if err := s.poll(ctx); err != nil {
			return bus.Message{}, err
		}
	}
	r := s.records[0]
	s.records[0] = nil
	s.records = s.records[1:]
	return message(r), nil
}

// poll fetches the next records. It keeps the first fetch error that is not
// merely informational for after the records fetched with it.
func (s *subscription) poll(ctx context.Context) error {
	fs := s.cl.PollFetches(ctx)
	if fs.IsClientClosed() {
		return bus.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, fe := range fs.Errors() {
		// Informational: the client has reset its offset (data loss) or
		// rejoins its group (a session ended) by itself, and goes on.
		var loss *kgo.ErrDataLoss
		var session *kgo.ErrGroupSession
		if !errors.As(fe.Err, &loss) && !errors.As(fe.Err, &session) {
			s.err = fmt.Errorf("kafka: fetch %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
			break
		}
	}
	fs.EachRecord(func(r *kgo.Record) { s.records = append(s.records, r) })
	return nil
}

// message converts a fetched record.
func message(r *kgo.Record) bus.Message {
	m := bus.Message{Topic: r.Topic, Key: string(r.Key), Value: r.Value, Time: r.Timestamp}
	if len(r.Headers) > 0 {
		m.Headers = make(map[string]string, len(r.Headers))
		for _, h := range r.Headers {
			m.Headers[h.Key] = string(h.Value)
		}
	}
	return m
}

// Close closes the consumer; a group member leaves its group.
func (s *subscription) Close() error {
	s.cl.Close()
	return nil
}
