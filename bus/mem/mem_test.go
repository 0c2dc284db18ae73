package mem_test

import (
	"context"
	"testing"

	"github.com/perflab/perflab/bus"
	"github.com/perflab/perflab/bus/bustest"
	_ "github.com/perflab/perflab/bus/mem"
)

func target() bustest.Target {
	return bustest.Target{
		URL:      "mem://" + bustest.TopicName(),
		NewTopic: func(*testing.T, bus.Conn) string { return bustest.TopicName() },
	}
}

func TestConformance(t *testing.T) { bustest.Run(t, target()) }

// TestGroupSplits checks that the members of a group take turns.
func TestGroupSplits(t *testing.T) {
	tg := target()
	conn := tg.Dial(t)
	ctx := context.Background()
	a, err := conn.Subscribe(ctx, []string{"t"}, "g")
	if err != nil {
		t.Fatal(err)
	}
	b, err := conn.Subscribe(ctx, []string{"t"}, "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2", "3", "4"} {
		if err := conn.Publish(ctx, bus.Message{Topic: "t", Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		sub  bus.Subscription
		want string
	}{{a, "1"}, {b, "2"}, {a, "3"}, {b, "4"}} {
		if m, err := c.sub.Next(ctx); err != nil || string(m.Value) != c.want {
			t.Fatalf("got %q, %v, want %q", m.Value, err, c.want)
		}
	}
	a.Close()
	if err := conn.Publish(ctx, bus.Message{Topic: "t", Value: []byte("5")}); err != nil {
		t.Fatal(err)
	}
	if m, err := b.Next(ctx); err != nil || string(m.Value) != "5" {
		t.Fatalf("after the other member left: got %q, %v, want %q", m.Value, err, "5")
	}
}

// TestClosedConn checks that a closed Conn refuses calls.
func TestClosedConn(t *testing.T) {
	conn := target().Dial(t)
	conn.Close()
	ctx := context.Background()
	if err := conn.Publish(ctx, bus.Message{Topic: "t"}); err != bus.ErrClosed {
		t.Errorf("Publish on a closed Conn: %v, want %v", err, bus.ErrClosed)
	}
	if _, err := conn.Subscribe(ctx, []string{"t"}, ""); err != bus.ErrClosed {
		t.Errorf("Subscribe on a closed Conn: %v, want %v", err, bus.ErrClosed)
	}
}
