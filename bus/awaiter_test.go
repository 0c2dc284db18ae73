package bus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// newTestAwaiter returns an Awaiter on a stub subscription, closed when t
// ends. Tests feed it with dispatch, or through the stub's channel.
func newTestAwaiter(t *testing.T, cfg AwaiterConfig) (*Awaiter, *stubSub) {
	t.Helper()
	if cfg.Key == nil {
		cfg.Key = byID()
	}
	sub := newStubSub()
	a := NewAwaiter(sub, cfg)
	t.Cleanup(func() { a.Close() })
	return a, sub
}

func mustRegister(t *testing.T, a *Awaiter, key string) *Waiter {
	t.Helper()
	w, err := a.Register(key)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func checkStats(t *testing.T, a *Awaiter, want AwaiterStats) {
	t.Helper()
	if got := a.Stats(); got != want {
		t.Errorf("stats %+v,\n  want %+v", got, want)
	}
}

func TestAwaiterMatches(t *testing.T) {
	a, sub := newTestAwaiter(t, AwaiterConfig{})
	w1, w2 := mustRegister(t, a, "one"), mustRegister(t, a, "two")
	sub.ch <- keyed("two") // through the consuming goroutine
	sub.ch <- keyed("one")
	for _, c := range []struct {
		w    *Waiter
		want string
	}{{w1, "one"}, {w2, "two"}} {
		m, err := c.w.Wait(context.Background(), time.Second)
		if err != nil || string(m.Value) != `{"id":"`+c.want+`"}` {
			t.Fatalf("Wait for %s: %q, %v", c.want, m.Value, err)
		}
	}
	checkStats(t, a, AwaiterStats{Received: 2, Matched: 2, Registered: 2})
}

func TestAwaiterEarly(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	a.dispatch(ptr(keyed("k")))
	a.dispatch(ptr(keyed("k")))
	checkStats(t, a, AwaiterStats{Received: 2, Held: 2})
	for range 2 {
		w := mustRegister(t, a, "k")
		if _, err := w.Wait(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	checkStats(t, a, AwaiterStats{Received: 2, Matched: 2, Early: 2, Registered: 2})
}

func TestAwaiterHoldExpires(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{Hold: 20 * time.Millisecond})
	a.dispatch(ptr(keyed("late")))
	time.Sleep(30 * time.Millisecond)
	checkStats(t, a, AwaiterStats{Received: 1, Expired: 1})
	w := mustRegister(t, a, "late")
	if _, err := w.Wait(context.Background(), time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Wait after the message expired: %v, want ErrTimeout", err)
	}
}

func TestAwaiterEvicts(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{MaxHeld: 2})
	for _, k := range []string{"a", "b", "c"} {
		a.dispatch(ptr(keyed(k)))
	}
	checkStats(t, a, AwaiterStats{Received: 3, Held: 2, Evicted: 1})
	if _, err := mustRegister(t, a, "a").Wait(context.Background(), time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Wait for the evicted message: %v, want ErrTimeout", err)
	}
	if _, err := mustRegister(t, a, "c").Wait(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Wait for a held message: %v", err)
	}
}

func TestAwaiterUnkeyed(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	a.dispatch(&Message{Value: []byte(`{"other":1}`)})
	a.dispatch(&Message{Value: []byte(`not json`)})
	checkStats(t, a, AwaiterStats{Received: 2, Unkeyed: 2})
}

func TestAwaiterDuplicateKey(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	if _, err := a.Register("k"); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("second Register: %v, want ErrDuplicateKey", err)
	}
	w.Cancel()
	mustRegister(t, a, "k") // free again
}

func TestWaitTimeout(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	start := time.Now()
	_, err := w.Wait(context.Background(), 30*time.Millisecond)
	if !errors.Is(err, ErrTimeout) || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("Wait: %v after %v, want ErrTimeout after 30ms", err, time.Since(start))
	}
	a.dispatch(ptr(keyed("k"))) // too late: held, not delivered
	checkStats(t, a, AwaiterStats{Received: 1, Held: 1, Registered: 1, TimedOut: 1})
}

func TestWaitContext(t *testing.T) {
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	if _, err := w.Wait(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait: %v, want context.Canceled", err)
	}
	mustRegister(t, a, "x").Cancel()
	checkStats(t, a, AwaiterStats{Registered: 2, Abandoned: 2})
}

func TestWaitAfterDelivery(t *testing.T) {
	// A message delivered before Wait is returned even with a done context.
	a, _ := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	a.dispatch(ptr(keyed("k")))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Wait(ctx, time.Nanosecond); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

func TestAwaiterClose(t *testing.T) {
	a, sub := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	errc := make(chan error)
	go func() {
		_, err := w.Wait(context.Background(), 0)
		errc <- err
	}()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait across Close: %v, want ErrClosed", err)
	}
	if _, err := a.Register("j"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Register after Close: %v, want ErrClosed", err)
	}
	select {
	case <-sub.closed:
	default:
		t.Fatal("Close did not close the subscription")
	}
}

func TestAwaiterSubscriptionFails(t *testing.T) {
	a, sub := newTestAwaiter(t, AwaiterConfig{})
	w := mustRegister(t, a, "k")
	cause := errors.New("broker gone")
	sub.fail <- cause
	_, err := w.Wait(context.Background(), time.Second)
	if !errors.Is(err, ErrClosed) || !errors.Is(err, cause) {
		t.Fatalf("Wait: %v, want ErrClosed and the cause", err)
	}
	if err := a.Err(); !errors.Is(err, cause) {
		t.Fatalf("Err: %v", err)
	}
}

// TestAwaiterConcurrent has many goroutines register, wait and time out
// while the consumer delivers their messages in random order, some before
// and some after registration. Run it with -race.
func TestAwaiterConcurrent(t *testing.T) {
	const (
		users   = 16
		perUser = 200
	)
	a, sub := newTestAwaiter(t, AwaiterConfig{Hold: time.Minute})
	keys := make([]string, 0, users*perUser)
	for u := range users {
		for i := range perUser {
			keys = append(keys, fmt.Sprintf("%d-%d", u, i))
		}
	}
	order := rand.Perm(len(keys))
	go func() {
		for _, i := range order {
			if i%10 != 9 { // every tenth key gets no message and times out
				sub.ch <- keyed(keys[i])
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, users)
	for u := range users {
		wg.Go(func() {
			for i := range perUser {
				n := u*perUser + i
				w, err := a.Register(keys[n])
				if err != nil {
					errs <- err
					return
				}
				timeout := 10 * time.Second
				if n%10 == 9 {
					timeout = time.Microsecond
				}
				m, err := w.Wait(context.Background(), timeout)
				switch {
				case n%10 == 9 && !errors.Is(err, ErrTimeout):
					errs <- fmt.Errorf("key %s: %v, want ErrTimeout", keys[n], err)
				case n%10 != 9 && (err != nil || string(m.Value) != `{"id":"`+keys[n]+`"}`):
					errs <- fmt.Errorf("key %s: got %q, %v", keys[n], m.Value, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s := a.Stats()
	total := uint64(users * perUser)
	if s.Received != total*9/10 || s.Matched != s.Received || s.Registered != total || s.TimedOut != total/10 || s.Held != 0 {
		t.Errorf("stats %+v", s)
	}
}
