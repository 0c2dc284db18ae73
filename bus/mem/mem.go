// Package mem is an in-process bus, for tests and demos that need no broker.
// Importing it registers the scheme "mem" with package bus:
//
//	conn, err := bus.Dial(ctx, "mem://orders")
//
// Every Conn dialed with the same name, here "orders", shares one bus in the
// process. Topics are exact names (no wildcards) and need no creation;
// queues are unbounded; messages are copied on delivery; Time is the
// publish time when the message has none.
package mem

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/bus"
)

func init() { bus.Register("mem", dial) }

var (
	busesMu sync.Mutex
	buses   = map[string]*memBus{}
)

func dial(_ context.Context, u *url.URL) (bus.Conn, error) {
	name := u.Host + u.Path
	busesMu.Lock()
	defer busesMu.Unlock()
	b := buses[name]
	if b == nil {
		b = &memBus{topics: map[string]*topic{}}
		buses[name] = b
	}
	return &conn{bus: b}, nil
}

// memBus routes the messages of one named bus.
type memBus struct {
	mu     sync.Mutex
	topics map[string]*topic
}

// topic holds the subscriptions of one topic: those without a group get
// every message, each group's members take turns.
type topic struct {
	all    []*subscription
	groups map[string]*group
}

type group struct {
	members []*subscription
	next    int
}

type conn struct {
	bus    *memBus
	closed atomic.Bool
}

func (c *conn) Publish(ctx context.Context, m bus.Message) error {
	if c.closed.Load() {
		return bus.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.Time.IsZero() {
		m.Time = time.Now()
	}
	b := c.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.topics[m.Topic]
	if t == nil {
		return nil
	}
	for _, s := range t.all {
		s.push(m)
	}
	for _, g := range t.groups {
		g.members[g.next%len(g.members)].push(m)
		g.next++
	}
	return nil
}

func (c *conn) Subscribe(ctx context.Context, topics []string, groupName string) (bus.Subscription, error) {
	if c.closed.Load() {
		return nil, bus.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	topics = slices.Clone(topics)
	slices.Sort(topics)
	s := &subscription{bus: c.bus, topics: slices.Compact(topics), group: groupName,
		ready: make(chan struct{}, 1), closed: make(chan struct{})}
	b := c.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, name := range s.topics {
		t := b.topics[name]
		if t == nil {
			t = &topic{groups: map[string]*group{}}
			b.topics[name] = t
		}
		if groupName == "" {
			t.all = append(t.all, s)
			continue
		}
		g := t.groups[groupName]
		if g == nil {
			g = &group{}
			t.groups[groupName] = g
		}
		g.members = append(g.members, s)
	}
	return s, nil
}

// Close makes the Conn refuse further calls; its subscriptions go on.
func (c *conn) Close() error {
	c.closed.Store(true)
	return nil
}

// subscription is an unbounded queue of delivered messages.
type subscription struct {
	bus    *memBus
	topics []string
	group  string
	ready  chan struct{} // signaled when the queue becomes non-empty
	closed chan struct{}
	once   sync.Once

	mu    sync.Mutex
	queue []bus.Message
}

// push appends a copy of m; the bus's mutex is held.
func (s *subscription) push(m bus.Message) {
	m.Headers = maps.Clone(m.Headers)
	m.Value = slices.Clone(m.Value)
	s.mu.Lock()
	s.queue = append(s.queue, m)
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *subscription) Next(ctx context.Context) (bus.Message, error) {
	for {
		select {
		case <-s.closed:
			return bus.Message{}, bus.ErrClosed
		default:
		}
		s.mu.Lock()
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue[0] = bus.Message{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return m, nil
		}
		s.mu.Unlock()
		select {
		case <-s.ready:
		case <-s.closed:
			return bus.Message{}, bus.ErrClosed
		case <-ctx.Done():
			return bus.Message{}, ctx.Err()
		}
	}
}

// Close detaches the subscription from its topics; messages it had queued
// are dropped.
func (s *subscription) Close() error {
	s.once.Do(func() {
		close(s.closed)
		b := s.bus
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, name := range s.topics {
			t := b.topics[name]
			if s.group == "" {
				t.all = slices.DeleteFunc(t.all, func(x *subscription) bool { return x == s })
				continue
			}
			g := t.groups[s.group]
			g.members = slices.DeleteFunc(g.members, func(x *subscription) bool { return x == s })
			if len(g.members) == 0 {
				delete(t.groups, s.group)
			}
		}
	})
	return nil
}
