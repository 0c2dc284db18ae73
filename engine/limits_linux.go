package engine

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// readHostLimits reads the open-file limits, the descriptors the process
// has open and the local port range; what cannot be read stays zero.
func readHostLimits() hostLimits {
	var h hostLimits
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < 1<<31 {
		h.files, h.hardFiles = int(lim.Cur), int(min(lim.Max, 1<<31))
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		h.inUse = len(fds) - 1 // the directory read
	}
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if _, err := fmt.Sscan(string(b), &h.portLo, &h.portHi); err != nil || h.portHi < h.portLo {
			h.portLo, h.portHi = 0, 0
		}
	}
	return h
}
