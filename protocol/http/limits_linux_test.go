//go:build linux

package http

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/testenv"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
)

// Out of file descriptors, a request fails as generator_limit on either
// engine, the pooled client's and the event loop, never as connect: the
// generator's own limit, not the target's failure. With descriptors
// again, the same requests succeed. The test runs in a process of its
// own, whose descriptors it uses up.
func TestOutOfDescriptorsIsGeneratorLimit(t *testing.T) {
	if !testenv.InChild(t) {
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r, err := Compile(text(srv.URL), nil, &plan.Step{Name: "get", Method: "GET", URL: text("/")}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(Options{Timeout: 5 * time.Second})
	loops := [2]*Loop{}
	for i := range loops { // a loop's own descriptors (epoll, timerfd) come first
		if loops[i], err = c.NewLoop(); err != nil {
			t.Fatal(err)
		}
	}
	release := testenv.ExhaustFiles(t)
	pooled := c.Do(r, testenv.Vars{}, &Scratch{})
	looped := runOn(t, loops[0], 1, 1, step{r: r})[0][0]
	release()
	for _, res := range []struct {
		engine string
		Result
	}{{"pooled", pooled}, {"event loop", looped}} {
		if res.Err != metrics.GeneratorLimit {
			t.Errorf("%s, out of descriptors: %s (%s), want %s", res.engine, res.Err, res.Detail, metrics.GeneratorLimit)
		}
	}
	if res := c.Do(r, testenv.Vars{}, &Scratch{}); res.Err != metrics.OK {
		t.Errorf("pooled, descriptors released: %s (%s)", res.Err, res.Detail)
	}
	if res := runOn(t, loops[1], 1, 1, step{r: r})[0][0]; res.Err != metrics.OK {
		t.Errorf("event loop, descriptors released: %s (%s)", res.Err, res.Detail)
	}
}

// The errors of the generator's own limits, as each engine gets them: the
// pooled client's dialer wraps Go's *net.OpError (itself around an
// *os.SyscallError), the event loop has the raw errno of socket(2) or
// connect(2), a resolver says it in text. One is the kernel's own
// EADDRNOTAVAIL: a socket bound to an address this host does not have.
func TestClassifyGeneratorLimits(t *testing.T) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1)}, Timeout: 5 * time.Second} // TEST-NET-1, RFC 5737
	_, bindErr := d.Dial("tcp", "127.0.0.1:9")
	if !errors.Is(bindErr, syscall.EADDRNOTAVAIL) {
		if b, _ := os.ReadFile("/proc/sys/net/ipv4/ip_nonlocal_bind"); len(b) > 0 && b[0] == '1' {
			testenv.Missing(t, "net.ipv4.ip_nonlocal_bind is 1: binding to a foreign address does not fail")
		}
		t.Fatalf("binding to 192.0.2.1: %v, want EADDRNOTAVAIL", bindErr)
	}
	opErr := func(call string, errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}, Err: os.NewSyscallError(call, errno)}
	}
	for _, c := range []struct {
		name string
		got  metrics.ErrKind
		want metrics.ErrKind
	}{
		{"dial, EMFILE", Classify(&dialError{opErr("socket", syscall.EMFILE)}), metrics.GeneratorLimit},
		{"dial, ENFILE", Classify(&dialError{opErr("socket", syscall.ENFILE)}), metrics.GeneratorLimit},
		{"dial, EADDRNOTAVAIL", Classify(&dialError{opErr("connect", syscall.EADDRNOTAVAIL)}), metrics.GeneratorLimit},
		{"dial, the kernel's EADDRNOTAVAIL", Classify(&dialError{bindErr}), metrics.GeneratorLimit},
		{"dial, refused", Classify(&dialError{opErr("connect", syscall.ECONNREFUSED)}), metrics.ConnRefused},
		{"dial, unreachable", Classify(&dialError{opErr("connect", syscall.ENETUNREACH)}), metrics.Connect},
		{"loop socket, EMFILE", connectKind(syscall.EMFILE), metrics.GeneratorLimit},
		{"loop socket, ENFILE", connectKind(syscall.ENFILE), metrics.GeneratorLimit},
		{"loop connect, EADDRNOTAVAIL", connectKind(syscall.EADDRNOTAVAIL), metrics.GeneratorLimit},
		{"loop connect, refused", connectKind(syscall.ECONNREFUSED), metrics.ConnRefused},
		{"loop connect, unreachable", connectKind(syscall.EHOSTUNREACH), metrics.Connect},
		{"resolver, EMFILE", Classify(&net.DNSError{Err: "dial udp 127.0.0.53:53: socket: too many open files", Name: "api.example"}), metrics.GeneratorLimit},
		{"resolver, no such host", Classify(&net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}), metrics.DNS},
		{"loop resolver, EMFILE", lookupKind(&net.DNSError{Err: "dial udp 127.0.0.53:53: socket: too many open files", Name: "api.example"}), metrics.GeneratorLimit},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.got, c.want)
		}
	}
}
