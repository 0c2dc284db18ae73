package bus

import (
	"context"
	"errors"
	"time"
)

// Message is one message on a bus.
type Message struct {
	// Topic is the Kafka topic or NATS subject.
	Topic string
	// Key is the Kafka record key; drivers without keys carry it in a header.
	Key string
	// Headers are the message's headers; nil when it has none.
	Headers map[string]string
	// Value is the payload.
	Value []byte
	// Time is when the message was produced, where the broker keeps it
	// (Kafka's record timestamp), else when it was received. On Publish a
	// zero Time means now.
	Time time.Time
	// Received is when an Awaiter's consumer got the message: the end of
	// an await, whenever its waiter wakes up.
	Received time.Time
}

// Conn is a connection to a bus. Its methods are safe for concurrent use.
type Conn interface {
	// Publish sends m. When it returns depends on the driver: Kafka waits
	// for the broker's acknowledgement, NATS only for the client's buffer.
	Publish(ctx context.Context, m Message) error
	// Subscribe starts consuming topics. With an empty group the
	// subscription receives every message; subscriptions sharing a group
	// split them. It returns once the subscription is live: every message
	// published afterwards is delivered to it.
	Subscribe(ctx context.Context, topics []string, group string) (Subscription, error)
	// Close releases the connection. Subscriptions have their own Close.
	Close() error
}

// Subscription is a stream of messages from Conn.Subscribe. Next is meant
// for a single consuming goroutine; Close may be called from any.
type Subscription interface {
	// Next returns the next message, blocking until one arrives, ctx is
	// done (ctx.Err()) or the subscription is closed (ErrClosed).
	Next(ctx context.Context) (Message, error)
	// Close stops the subscription; calling it again does nothing.
	Close() error
}

var (
	// ErrClosed is returned by operations on a closed Conn, Subscription or
	// Awaiter.
	ErrClosed = errors.New("bus: closed")
	// ErrTimeout is the error kind of a Waiter whose message did not arrive
	// in time: errors.Is(err, ErrTimeout).
	ErrTimeout = errors.New("bus: timed out")
	// ErrDuplicateKey is returned by Awaiter.Register for a key that is
	// already awaited.
	ErrDuplicateKey = errors.New("bus: key already awaited")
)
