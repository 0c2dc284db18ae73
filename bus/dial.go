package bus

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// DialFunc opens a Conn for a URL of the scheme it was registered for.
type DialFunc func(ctx context.Context, u *url.URL) (Conn, error)

var drivers sync.Map // scheme -> DialFunc

// Register makes a driver available to Dial under scheme. Drivers call it
// from an init function; registering a scheme twice panics.
func Register(scheme string, dial DialFunc) {
	if _, dup := drivers.LoadOrStore(scheme, dial); dup {
		panic("bus: driver registered twice for scheme " + scheme)
	}
}

// Dial opens a connection to the bus at rawURL, such as
// "kafka://127.0.0.1:9092" or "nats://127.0.0.1:4222", with the driver
// registered for its scheme.
func Dial(ctx context.Context, rawURL string) (Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	d, ok := drivers.Load(u.Scheme)
	if !ok {
		return nil, fmt.Errorf("bus: %q: no driver for scheme %q (registered: %s); import github.com/perflab/perflab/bus/%s",
			rawURL, u.Scheme, schemes(), u.Scheme)
	}
	return d.(DialFunc)(ctx, u)
}

// schemes lists the registered schemes, sorted, for an error message.
func schemes() string {
	var s []string
	drivers.Range(func(k, _ any) bool {
		s = append(s, k.(string))
		return true
	})
	if len(s) == 0 {
		return "none"
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}
