//go:build unix

package doctor

import "syscall"

// fileLimit is this process's open-file limit, as Go raised it (the soft
// limit to the hard one, as any Go program starts); nil if unknown.
func fileLimit() *Limit {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return nil
	}
	return &Limit{Soft: uint64(r.Cur), Hard: uint64(r.Max)}
}
