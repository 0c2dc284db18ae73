package web

import (
	"os"
	"testing"
)

// What a request's Host may name, by the address the server listens on.
func TestAllowedHosts(t *testing.T) {
	hostname, _ := os.Hostname()
	for _, c := range []struct {
		listen      string
		extra       []string
		allow, deny []string
	}{
		{"127.0.0.1:5665", nil, []string{"127.0.0.1:5665", "localhost", "[::1]:5665", "LOCALHOST."}, []string{"evil.example", "192.0.2.1", "", "localhost.evil.example", hostname + ".evil.example"}},
		{"[::1]:5665", nil, []string{"[::1]", "localhost:1", "127.0.0.1"}, []string{"evil.example"}},
		{"localhost:5665", []string{"Perflab.Test."}, []string{"localhost", "127.0.0.1", "perflab.test:80"}, []string{"evil.example", "test"}},
		{"10.0.0.5:80", nil, []string{"10.0.0.5", "10.0.0.5:80"}, []string{"localhost", "127.0.0.1", "10.0.0.6", "evil.example"}},
		{"perflab.example:80", []string{"192.0.2.9"}, []string{"perflab.example", "192.0.2.9:80"}, []string{"localhost", "example", "evil.example", "192.0.2.1"}},
		{"0.0.0.0:80", nil, []string{"192.0.2.1", "[2001:db8::1]:80", "localhost", hostname}, []string{"evil.example", ""}},
		{":80", []string{"perflab.internal"}, []string{"10.9.8.7", "perflab.internal"}, []string{"evil.example"}},
		{"[::]:80", nil, []string{"127.0.0.1"}, []string{"evil.example"}},
	} {
		h, err := AllowedHosts(c.listen, c.extra)
		if err != nil {
			t.Fatalf("%s: %v", c.listen, err)
		}
		for _, host := range c.allow {
			if !h.Allows(host) {
				t.Errorf("listening on %s (%s): %q refused", c.listen, h, host)
			}
		}
		for _, host := range c.deny {
			if h.Allows(host) {
				t.Errorf("listening on %s (%s): %q allowed", c.listen, h, host)
			}
		}
	}
	for _, bad := range []string{"http://perflab.test", "perflab.test:80", "perflab test", "*.example", ""} {
		if _, err := AllowedHosts("127.0.0.1:0", []string{bad}); err == nil {
			t.Errorf("allowed host %q accepted", bad)
		}
	}
}
