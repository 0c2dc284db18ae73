package metrics

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// The generator's own limits are told by their errno wherever it sits in
// an error's chain, as Go's net package and raw system calls return it,
// and by its text where only the text reached perflab.
func TestGeneratorLimitErrors(t *testing.T) {
	dial := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", errno)}
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{dial(syscall.EMFILE), true},
		{dial(syscall.ENFILE), true},
		{dial(syscall.EADDRNOTAVAIL), true},
		{fmt.Errorf("connect: %w", dial(syscall.EMFILE)), true},
		{syscall.EMFILE, true},
		{dial(syscall.ECONNREFUSED), false},
		{dial(syscall.ENETUNREACH), false},
		{errors.New("dial tcp 127.0.0.1:80: socket: too many open files"), false}, // text only: NamesGeneratorLimit
		{io.EOF, false},
		{nil, false},
	} {
		if got := IsGeneratorLimit(c.err); got != c.want {
			t.Errorf("IsGeneratorLimit(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{dial(syscall.EMFILE).Error(), true},
		{dial(syscall.ENFILE).Error(), true},
		{dial(syscall.EADDRNOTAVAIL).Error(), true},
		{dial(syscall.ECONNREFUSED).Error(), false},
		{"no such host", false},
	} {
		if got := NamesGeneratorLimit(c.msg); got != c.want {
			t.Errorf("NamesGeneratorLimit(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}
