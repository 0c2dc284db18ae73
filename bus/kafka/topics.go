package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// CreateTopic creates topic with the given number of partitions and the
// broker's default replication factor, and waits until every partition has
// a leader, so that Publish and Subscribe can use it at once. A topic that
// already exists is not an error. It is meant for tests and test setups.
func (c *Conn) CreateTopic(ctx context.Context, topic string, partitions int32) error {
	_, err := c.adm.CreateTopic(ctx, partitions, -1, nil, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafka: create topic %s: %w", topic, err)
	}
	for {
		ends, err := c.adm.ListEndOffsets(ctx, topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafka: create topic %s: waiting for its partitions: %w", topic, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// DeleteTopic deletes topic; one that does not exist is not an error.
func (c *Conn) DeleteTopic(ctx context.Context, topic string) error {
	_, err := c.adm.DeleteTopic(ctx, topic)
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("kafka: delete topic %s: %w", topic, err)
	}
	return nil
}
