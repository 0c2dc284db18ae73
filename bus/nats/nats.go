// Package nats is the NATS driver of package bus, built on
// github.com/nats-io/nats.go (core NATS, no JetStream). Importing it
// registers the scheme "nats":
//
//	conn, err := bus.Dial(ctx, "nats://127.0.0.1:4222")
//
// The URL goes to nats.Connect as is, so it may list several servers,
// comma-separated, and carry user:password.
//
// A topic is a subject; subscriptions may use the wildcards * and >. A
// group is a queue group: its members split the messages. Core NATS has no
// message keys: Publish carries Key in the header KeyHeader, which Next
// turns back into Key. Nor does it keep timestamps: a received Message's
// Time is when the client received it.
//
// Delivery is at most once. Publish returns once the message is in the
// client's buffer; errors after that are the connection's. A subscription's
// pending messages are not limited, so a slow consumer costs memory rather
// than the silent drops of NATS's default limits.
package nats

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"

	"github.com/perflab/perflab/bus"
)

// KeyHeader is the header that carries a Message's Key.
const KeyHeader = "Perflab-Key"

// flushTimeout bounds Subscribe's round trip to the server when its context
// has no deadline.
const flushTimeout = 10 * time.Second

func init() {
	bus.Register("nats", func(ctx context.Context, u *url.URL) (bus.Conn, error) {
		c, err := Dial(ctx, u)
		if err != nil {
			return nil, err // not a nil *Conn in a non-nil interface
		}
		return c, nil
	})
}

// Conn is a connection to a NATS server.
type Conn struct {
	nc *natsgo.Conn
}

var _ bus.Conn = (*Conn)(nil)

// Dial connects to the servers of a nats:// URL. A deadline on ctx bounds
// the connection attempt; without one nats.go's default (2 s) does.
func Dial(ctx context.Context, u *url.URL) (*Conn, error) {
	opts := []natsgo.Option{natsgo.Name("perflab")}
	if d, ok := ctx.Deadline(); ok {
		opts = append(opts, natsgo.Timeout(time.Until(d)))
	}
	nc, err := natsgo.Connect(u.String(), opts...)
	if err != nil {
		return nil, fmt.Errorf("nats: %s: %w", u.Redacted(), err)
	}
	return &Conn{nc: nc}, nil
}

// Publish sends m; see the package documentation for what it waits for.
func (c *Conn) Publish(ctx context.Context, m bus.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg := &natsgo.Msg{Subject: m.Topic, Data: m.Value}
	if len(m.Headers) > 0 || m.Key != "" {
		msg.Header = make(natsgo.Header, len(m.Headers)+1)
		for k, v := range m.Headers {
			msg.Header[k] = []string{v}
		}
		if m.Key != "" {
			msg.Header[KeyHeader] = []string{m.Key}
		}
	}
	if err := c.nc.PublishMsg(msg); err != nil {
		return fmt.Errorf("nats: publish to %s: %w", m.Topic, err)
	}
	return nil
}

// Subscribe subscribes to each subject in topics, in queue group group if
// it is not empty, and waits for the server to confirm.
func (c *Conn) Subscribe(ctx context.Context, topics []string, group string) (bus.Subscription, error) {
	if len(topics) == 0 {
		return nil, errors.New("nats: subscribe: no topics")
	}
	s := &subscription{ch: make(chan bus.Message), closed: make(chan struct{})}
	for _, subj := range topics {
		var sub *natsgo.Subscription
		var err error
		if group == "" {
			sub, err = c.nc.Subscribe(subj, s.deliver)
		} else {
			sub, err = c.nc.QueueSubscribe(subj, group, s.deliver)
		}
		if err == nil {
			s.subs = append(s.subs, sub)
			err = sub.SetPendingLimits(-1, -1)
		}
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("nats: subscribe to %s: %w", subj, err)
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, flushTimeout)
		defer cancel()
	}
	if err := c.nc.FlushWithContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("nats: subscribe to %v: %w", topics, err)
	}
	return s, nil
}

// Close drains nothing: it closes the connection at once.
func (c *Conn) Close() error {
	c.nc.Close()
	return nil
}

// subscription funnels the messages of its NATS subscriptions, one per
// subject, into one channel.
type subscription struct {
	subs   []*natsgo.Subscription
	ch     chan bus.Message
	closed chan struct{}
	once   sync.Once
}

// deliver is the NATS message handler. It runs on the subscription's own
// goroutine and blocks until Next takes the message or Close.
func (s *subscription) deliver(msg *natsgo.Msg) {
	m := bus.Message{Topic: msg.Subject, Value: msg.Data, Time: time.Now()}
	for k, vs := range msg.Header {
		if len(vs) == 0 {
			continue
		}
		if k == KeyHeader {
			m.Key = vs[0]
			continue
		}
		if m.Headers == nil {
			m.Headers = make(map[string]string, len(msg.Header))
		}
		m.Headers[k] = vs[0]
	}
	select {
	case s.ch <- m:
	case <-s.closed:
	}
}

func (s *subscription) Next(ctx context.Context) (bus.Message, error) {
	select {
	case <-s.closed:
		return bus.Message{}, bus.ErrClosed
	default:
	}
	select {
	case m := <-s.ch:
		return m, nil
	case <-s.closed:
		return bus.Message{}, bus.ErrClosed
	case <-ctx.Done():
		return bus.Message{}, ctx.Err()
	}
}

// Close unsubscribes; an unsubscription that fails because the connection
// is closed already is not an error.
func (s *subscription) Close() error {
	var errs []error
	s.once.Do(func() {
		close(s.closed)
		for _, sub := range s.subs {
			if err := sub.Unsubscribe(); err != nil && !errors.Is(err, natsgo.ErrConnectionClosed) {
				errs = append(errs, err)
			}
		}
	})
	return errors.Join(errs...)
}
