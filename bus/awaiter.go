package bus

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Defaults of AwaiterConfig.
const (
	DefaultHold    = 5 * time.Second
	DefaultMaxHeld = 10000
)

// KeyFunc returns a message's correlation key, and false when it has none.
// Field.Get is one.
type KeyFunc func(m *Message) (string, bool)

// AwaiterConfig configures an Awaiter.
type AwaiterConfig struct {
	// Key extracts the correlation key from each message. Messages without
	// one are counted (AwaiterStats.Unkeyed) and dropped. Required.
	Key KeyFunc
	// Hold is how long a message that no waiter has registered for is kept
	// for one that registers later; the default is DefaultHold.
	Hold time.Duration
	// MaxHeld bounds the messages held; when it is reached the oldest is
	// dropped (AwaiterStats.Evicted). The default is DefaultMaxHeld.
	MaxHeld int
}

// AwaiterStats counts what an Awaiter did. Every received message is
// exactly one of: Unkeyed, matched (Matched-Early on arrival, Early from
// the held ones), still Held, Expired or Evicted.
type AwaiterStats struct {
	Received uint64 // messages consumed from the subscription
	Unkeyed  uint64 // messages without a correlation key, dropped
	Matched  uint64 // messages handed to a waiter, Early included
	Early    uint64 // of Matched, those that arrived before their key was registered
	Held     int    // messages held now, waiting for their key to be registered
	Expired  uint64 // held messages dropped after Hold unmatched
	Evicted  uint64 // held messages dropped to stay within MaxHeld

	Registered uint64 // calls to Register that succeeded
	TimedOut   uint64 // waits that ended with ErrTimeout
	Abandoned  uint64 // waits that ended by their context, Cancel or Close
}

// Awaiter hands the messages of one Subscription to the goroutines waiting
// for them, by correlation key. Its methods are safe for concurrent use.
type Awaiter struct {
	sub    Subscription
	key    KeyFunc
	hold   time.Duration
	max    int
	cancel context.CancelFunc
	done   chan struct{} // closed when the consumer has stopped

	mu      sync.Mutex
	waiters map[string]*Waiter
	held    heldBuffer
	stats   AwaiterStats
	err     error // why the consumer stopped; nil while it runs
}

// Waiter is one registered key. Call Wait or Cancel once.
type Waiter struct {
	a     *Awaiter
	key   string
	ready chan struct{} // closed, under a.mu, once msg is set
	msg   Message
}

// NewAwaiter starts consuming sub, which the Awaiter then owns: Close closes
// it. If sub fails, the Awaiter stops and its waiters get the error.
// NewAwaiter panics if cfg.Key is nil.
func NewAwaiter(sub Subscription, cfg AwaiterConfig) *Awaiter {
	if cfg.Key == nil {
		panic("bus: AwaiterConfig.Key is nil")
	}
	if cfg.Hold <= 0 {
		cfg.Hold = DefaultHold
	}
	if cfg.MaxHeld <= 0 {
		cfg.MaxHeld = DefaultMaxHeld
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Awaiter{
		sub:     sub,
		key:     cfg.Key,
		hold:    cfg.Hold,
		max:     cfg.MaxHeld,
		cancel:  cancel,
		done:    make(chan struct{}),
		waiters: make(map[string]*Waiter),
	}
	go a.consume(ctx)
	return a
}

// consume dispatches the subscription's messages until it fails or Close.
func (a *Awaiter) consume(ctx context.Context) {
	defer close(a.done)
	var m Message // one variable for all, so that passing &m to a.key allocates once
	for {
		var err error
		m, err = a.sub.Next(ctx)
		if err != nil {
			a.mu.Lock()
			if ctx.Err() != nil {
				a.err = ErrClosed
			} else {
				a.err = fmt.Errorf("%w: awaiter's subscription failed: %w", ErrClosed, err)
			}
			a.mu.Unlock()
			return
		}
		a.dispatch(&m)
	}
}

// dispatch hands a copy of *m to the waiter for its key, or holds one.
func (a *Awaiter) dispatch(m *Message) {
	key, ok := a.key(m)
	now := time.Now()
	m.Received = now
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats.Received++
	a.expire(now)
	switch w := a.waiters[key]; {
	case !ok:
		a.stats.Unkeyed++
	case w != nil:
		delete(a.waiters, key)
		w.deliver(*m)
		a.stats.Matched++
	default:
		if a.held.put(key, *m, now.Add(a.hold), a.max) {
			a.stats.Evicted++
		}
	}
}

// expire drops the held messages that are past their time; a.mu is held.
func (a *Awaiter) expire(now time.Time) {
	a.stats.Expired += uint64(a.held.expire(now))
}

// Register announces that the caller expects a message with key, and
// returns the Waiter to wait for it with. Register before publishing the
// request that causes the message. A message with key that arrived up to
// Hold earlier is matched at once. It fails with ErrDuplicateKey while
// another Waiter has key, and with ErrClosed once the Awaiter has stopped.
func (a *Awaiter) Register(key string) (*Waiter, error) {
	w := &Waiter{a: a, key: key, ready: make(chan struct{})}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	if _, dup := a.waiters[key]; dup {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateKey, key)
	}
	a.stats.Registered++
	a.expire(now)
	if m, ok := a.held.take(key); ok {
		w.deliver(m)
		a.stats.Matched++
		a.stats.Early++
		return w, nil
	}
	a.waiters[key] = w
	return w, nil
}

// deliver hands m to w; a.mu is held.
func (w *Waiter) deliver(m Message) {
	w.msg = m
	close(w.ready)
}

// Wait returns the message for the Waiter's key. It fails with an error
// that errors.Is ErrTimeout when timeout (if positive) passes first, with
// ctx.Err() when ctx is done first, and with ErrClosed when the Awaiter
// stops first. A message that arrives as Wait gives up is still returned.
func (w *Waiter) Wait(ctx context.Context, timeout time.Duration) (Message, error) {
	select {
	case <-w.ready:
		return w.msg, nil
	default:
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.ready:
		return w.msg, nil
	case <-expired:
		return w.abandon(fmt.Errorf("%w: no message with key %q after %v", ErrTimeout, w.key, timeout), true)
	case <-ctx.Done():
		return w.abandon(ctx.Err(), false)
	case <-w.a.done:
		return w.abandon(nil, false)
	}
}

// Cancel withdraws the registration, for a caller that will not Wait (its
// publish failed, say). A message that arrives for the key later is held
// like any unmatched one.
func (w *Waiter) Cancel() {
	w.abandon(context.Canceled, false)
}

// abandon withdraws the registration unless the message was delivered
// meanwhile, in which case it returns the message. A nil err stands for the
// error the Awaiter stopped with.
func (w *Waiter) abandon(err error, timedOut bool) (Message, error) {
	a := w.a
	a.mu.Lock()
	if a.waiters[w.key] == w {
		delete(a.waiters, w.key)
		if timedOut {
			a.stats.TimedOut++
		} else {
			a.stats.Abandoned++
		}
	}
	if err == nil {
		err = a.err
	}
	a.mu.Unlock()
	select {
	case <-w.ready: // delivered before we took the lock
		return w.msg, nil
	default:
		return Message{}, err
	}
}

// Stats returns the Awaiter's counts so far.
func (a *Awaiter) Stats() AwaiterStats {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expire(now)
	s := a.stats
	s.Held = a.held.n
	return s
}

// Err returns why the Awaiter stopped: nil while it runs, ErrClosed after
// Close, or the subscription's error wrapped in ErrClosed.
func (a *Awaiter) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Close stops consuming, closes the subscription and ends every Wait with
// ErrClosed. It returns the subscription's Close error.
func (a *Awaiter) Close() error {
	a.cancel()
	<-a.done
	return a.sub.Close()
}
