package bustest

import (
	"context"
	"errors"
	"fmt"
	"github.com/perflab/perflab/sim"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/responder"
)

// awaiter starts an Awaiter on replies, correlating by the JSON field id,
// and closes it when t ends.
func awaiter(t *testing.T, conn bus.Conn, replies string, hold time.Duration) *bus.Awaiter {
	t.Helper()
	id, err := bus.ParseField("json.id")
	if err != nil {
		t.Fatal(err)
	}
	aw := bus.NewAwaiter(subscribe(t, conn, "", replies), bus.AwaiterConfig{Key: id.Get, Hold: hold})
	t.Cleanup(func() { aw.Close() })
	return aw
}

// eventually polls cond until it holds, and reports false if it still does
// not after the tests' timeout.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// checkAccounted checks the Awaiter's invariant: every received message is
// unkeyed, matched, held, expired or evicted.
func checkAccounted(t *testing.T, s bus.AwaiterStats) {
	t.Helper()
	if sum := s.Unkeyed + s.Matched + uint64(s.Held) + s.Expired + s.Evicted; sum != s.Received {
		t.Errorf("awaiter stats %+v: unkeyed+matched+held+expired+evicted = %d, want received", s, sum)
	}
}

// testRequestReply has 50 virtual users each publish a request that the
// responder answers after a fixed latency, and await their own reply
// through one Awaiter.
func testRequestReply(t *testing.T, tg Target) {
	const (
		users   = 50
		noise   = 5
		latency = 50 * time.Millisecond
	)
	conn := tg.Dial(t)
	requests, replies := tg.NewTopic(t, conn), tg.NewTopic(t, conn)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r, err := responder.Start(ctx, conn, responder.Spec{
		Topics: []string{requests},
		Match:  []responder.Condition{{Field: "json.type", Equals: ptr("ping")}},
		Reply: responder.Reply{
			Topic:   replies,
			Key:     "${key}",
			Headers: map[string]string{"user": "${header.user}"},
			Body:    `{"id":"${json.id}","user":${json.user},"pong":true}`,
		},
		Latency: &sim.Latency{Fixed: sim.Duration(latency)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	aw := awaiter(t, conn, replies, 0)

	for i := range noise { // not answered: no type ping
		publish(t, conn, bus.Message{Topic: requests, Value: fmt.Appendf(nil, `{"type":"noise","id":"noise-%d"}`, i)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, users)
	for u := range users {
		wg.Go(func() {
			id := fmt.Sprintf("req-%d-%d", u, time.Now().UnixNano())
			w, err := aw.Register(id)
			if err != nil {
				errs <- err
				return
			}
			start := time.Now()
			err = conn.Publish(ctx, bus.Message{
				Topic:   requests,
				Key:     fmt.Sprint("key-", u),
				Headers: map[string]string{"user": fmt.Sprint(u)},
				Value:   fmt.Appendf(nil, `{"type":"ping","id":%q,"user":%d}`, id, u),
			})
			if err != nil {
				w.Cancel()
				errs <- err
				return
			}
			m, err := w.Wait(ctx, timeout)
			waited := time.Since(start)
			switch {
			case err != nil:
				errs <- fmt.Errorf("user %d: %w", u, err)
			case gjson.GetBytes(m.Value, "id").String() != id || gjson.GetBytes(m.Value, "user").Int() != int64(u) ||
				m.Key != fmt.Sprint("key-", u) || m.Headers["user"] != fmt.Sprint(u):
				errs <- fmt.Errorf("user %d (request %s) got reply key %q headers %v body %s", u, id, m.Key, m.Headers, m.Value)
			case waited < latency:
				errs <- fmt.Errorf("user %d got its reply after %v, before the responder's latency %v", u, waited, latency)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := responder.Stats{Received: users + noise, Matched: users, Replied: users}
	var got responder.Stats
	if !eventually(func() bool { got = r.Stats(); return got == want }) {
		t.Errorf("responder stats %+v, want %+v", got, want)
	}
	s := aw.Stats()
	if s.Received != users || s.Matched != users || s.Registered != users || s.Held != 0 || s.TimedOut != 0 {
		t.Errorf("awaiter stats %+v, want %d received, registered and matched", s, users)
	}
	checkAccounted(t, s)
}

// testAwaiterHeld covers time-outs, replies that arrive before their key is
// registered (within Hold and after it), and replies without a key.
func testAwaiterHeld(t *testing.T, tg Target) {
	const hold = time.Second // long enough for a loaded machine to register "early" in time
	conn := tg.Dial(t)
	replies := tg.NewTopic(t, conn)
	aw := awaiter(t, conn, replies, hold)
	ctx := context.Background()

	w, err := aw.Register("never")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := w.Wait(ctx, 100*time.Millisecond); !errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("Wait for a reply that never comes: %v, want %v", err, bus.ErrTimeout)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Fatalf("timed out after %v, before the 100ms timeout", waited)
	}

	publish(t, conn, bus.Message{Topic: replies, Value: []byte(`{"id":"early"}`)})
	publish(t, conn, bus.Message{Topic: replies, Value: []byte(`not json`)})
	if !eventually(func() bool { return aw.Stats().Held == 1 }) {
		t.Fatalf("the early reply is not held: %+v", aw.Stats())
	}
	if w, err = aw.Register("early"); err != nil {
		t.Fatal(err)
	}
	if m, err := w.Wait(ctx, time.Millisecond); err != nil || string(m.Value) != `{"id":"early"}` {
		t.Fatalf("Wait for the early reply: %q, %v", m.Value, err)
	}

	publish(t, conn, bus.Message{Topic: replies, Value: []byte(`{"id":"stale"}`)})
	if !eventually(func() bool { return aw.Stats().Held == 1 }) {
		t.Fatalf("the stale reply is not held: %+v", aw.Stats())
	}
	time.Sleep(hold)
	if w, err = aw.Register("stale"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Wait(ctx, 50*time.Millisecond); !errors.Is(err, bus.ErrTimeout) {
		t.Fatalf("Wait for a reply held past Hold: %v, want %v", err, bus.ErrTimeout)
	}

	s := aw.Stats()
	want := bus.AwaiterStats{Received: 3, Unkeyed: 1, Matched: 1, Early: 1, Expired: 1, Registered: 3, TimedOut: 2}
	if s != want {
		t.Errorf("awaiter stats %+v,\nwant %+v", s, want)
	}
	checkAccounted(t, s)
}

func ptr[T any](v T) *T { return &v }
