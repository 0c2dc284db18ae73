package responder

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/sim"
)

// Stats counts what a responder saw and did.
type Stats struct {
	Received uint64 // messages consumed
	Matched  uint64 // of those, the ones that met the conditions
	Replied  uint64 // replies published
	Errors   uint64 // replies whose publish failed
	Canceled uint64 // replies not sent because the responder stopped first
	// LastError is the last publish error, "" if none.
	LastError string
}

// Responder answers requests as its Spec says, until its context is done
// or Close.
type Responder struct {
	conn    bus.Conn
	sub     bus.Subscription
	spec    *compiled
	latency *sim.Latency
	rng     *rand.Rand    // used by the consuming goroutine only
	slots   chan struct{} // one per pending reply
	cancel  context.CancelFunc
	done    chan struct{} // closed when consuming has stopped
	replies sync.WaitGroup
	err     error // why consuming stopped, if not by cancellation; set before done closes

	received, matched, replied, failed, canceled atomic.Uint64
	lastErr                                      atomic.Pointer[string]
}

// Start validates spec, subscribes to its topics on conn and answers
// requests until ctx is done or Close is called. Requests published after
// Start returns are all seen.
func Start(ctx context.Context, conn bus.Conn, spec Spec) (*Responder, error) {
	c, err := spec.compile()
	if err != nil {
		return nil, err
	}
	sub, err := conn.Subscribe(ctx, spec.Topics, spec.Group)
	if err != nil {
		return nil, err
	}
	pending := spec.MaxPending
	if pending == 0 {
		pending = DefaultMaxPending
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Responder{
		conn:    conn,
		sub:     sub,
		spec:    c,
		latency: spec.Latency,
		rng:     rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15)),
		slots:   make(chan struct{}, pending),
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	go r.consume(ctx)
	return r, nil
}

// consume reads requests and schedules the replies to the matching ones.
func (r *Responder) consume(ctx context.Context) {
	defer close(r.done)
	for {
		m, err := r.sub.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.err = err
			}
			return
		}
		r.received.Add(1)
		if !r.spec.matches(&m) {
			continue
		}
		r.matched.Add(1)
		delay := r.latency.Sample(r.rng)
		select {
		case r.slots <- struct{}{}:
		case <-ctx.Done():
			r.canceled.Add(1)
			return
		}
		r.replies.Add(1)
		go r.reply(ctx, m, delay)
	}
}

// reply publishes the reply to m after delay.
func (r *Responder) reply(ctx context.Context, m bus.Message, delay time.Duration) {
	defer func() {
		<-r.slots
		r.replies.Done()
	}()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			r.canceled.Add(1)
			return
		}
	}
	err := r.conn.Publish(ctx, r.spec.reply(&m))
	switch {
	case err == nil:
		r.replied.Add(1)
	case ctx.Err() != nil:
		r.canceled.Add(1)
	default:
		r.failed.Add(1)
		msg := err.Error()
		r.lastErr.Store(&msg)
	}
}

// Stats returns the counts so far.
func (r *Responder) Stats() Stats {
	s := Stats{
		Received: r.received.Load(),
		Matched:  r.matched.Load(),
		Replied:  r.replied.Load(),
		Errors:   r.failed.Load(),
		Canceled: r.canceled.Load(),
	}
	if p := r.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	return s
}

// Close stops consuming, cancels the replies still waiting for their delay
// (counted as Canceled), waits for those being published, and closes the
// subscription. It returns the error that stopped consuming early, if any,
// or the subscription's Close error.
func (r *Responder) Close() error {
	r.cancel()
	<-r.done
	r.replies.Wait()
	return errors.Join(r.err, r.sub.Close())
}
