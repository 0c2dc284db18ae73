package bus

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

func TestDial(t *testing.T) {
	var got *url.URL
	Register("test-dial", func(_ context.Context, u *url.URL) (Conn, error) {
		got = u
		return nil, nil
	})
	t.Cleanup(func() { drivers.Delete("test-dial") })
	ctx := context.Background()
	if _, err := Dial(ctx, "test-dial://host:1?x=y"); err != nil || got.Host != "host:1" || got.Query().Get("x") != "y" {
		t.Fatalf("Dial: %v, driver got %v", err, got)
	}
	_, err := Dial(ctx, "carrier-pigeon://127.0.0.1")
	if err == nil || !strings.Contains(err.Error(), `no driver for scheme "carrier-pigeon"`) ||
		!strings.Contains(err.Error(), "test-dial") {
		t.Fatalf("Dial of an unknown scheme: %v", err)
	}
	if _, err := Dial(ctx, "kafka://%zz"); err == nil {
		t.Fatal("Dial of an invalid URL: no error")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a scheme twice did not panic")
		}
	}()
	Register("test-dial", nil)
}
