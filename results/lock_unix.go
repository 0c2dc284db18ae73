//go:build unix

package results

import (
	"errors"
	"os"
	"syscall"
)

// lockLog takes the lock a run holds on its interval log while it goes.
// The system releases it when the process ends, however it ends.
func lockLog(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// logLocked reports whether a run holds the lock on the interval log at
// path: its run is still going.
func logLocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	return errors.Is(err, syscall.EWOULDBLOCK)
}
