package guard

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process end when the test's does, where Cleanup
// cannot run (a test killed by its timeout or by a signal).
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
