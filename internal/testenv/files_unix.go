//go:build unix

package testenv

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// ExhaustFiles uses up the file descriptors the process may open, so that
// the next socket fails with EMFILE as it does on a generator at its
// open-file limit: it lowers the soft limit to a few more than are open
// and opens /dev/null until the next open fails. release closes them and
// restores the limit. Only in a test's process of its own (InChild).
func ExhaustFiles(t *testing.T) (release func()) {
	t.Helper()
	if os.Getenv(childEnv) != t.Name() {
		t.Fatal("ExhaustFiles outside a test's process of its own (InChild) would starve the other tests")
	}
	var was unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/dev/fd")
	if err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = min(was.Cur, uint64(len(open)+16))
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	return func() {
		for _, f := range held {
			f.Close()
		}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &was); err != nil {
			t.Error(err)
		}
	}
}
