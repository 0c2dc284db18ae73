package bus

import (
	"context"
	"sync"
)

// stubSub is a Subscription fed by the test: messages from ch, then the
// error from fail.
type stubSub struct {
	ch     chan Message
	fail   chan error
	closed chan struct{}
	once   sync.Once
}

func newStubSub() *stubSub {
	return &stubSub{ch: make(chan Message), fail: make(chan error, 1), closed: make(chan struct{})}
}

func (s *stubSub) Next(ctx context.Context) (Message, error) {
	select {
	case m := <-s.ch:
		return m, nil
	case err := <-s.fail:
		return Message{}, err
	case <-s.closed:
		return Message{}, ErrClosed
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

func (s *stubSub) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// keyed returns a message whose JSON value has id key.
func keyed(key string) Message {
	return Message{Topic: "replies", Value: []byte(`{"id":"` + key + `"}`)}
}

// byID is the Awaiter key of the tests: the JSON field id.
func byID() KeyFunc {
	f, err := ParseField("json.id")
	if err != nil {
		panic(err)
	}
	return f.Get
}

func ptr[T any](v T) *T { return &v }
