package monitor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a started command may take to exit after SIGTERM
// before it is killed.
const stopGrace = 5 * time.Second

// command is a process that a monitor started: the system under test, run in
// a process group of its own so that stopping it stops its children too.
type command struct {
	cmd  *exec.Cmd
	out  tail
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

func startCommand(args []string) (*command, error) {
	c := &command{cmd: exec.Command(args[0], args[1:]...), done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that keeps the output pipe open must not hold up Wait.
	c.cmd.WaitDelay = time.Second
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

func (c *command) pid() int { return c.cmd.Process.Pid }

// exited returns nil while the command runs, and then why it ended, with
// the end of its output.
func (c *command) exited() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	status := "exited"
	if c.err != nil {
		status = c.err.Error()
	}
	msg := fmt.Sprintf("command %q %s", strings.Join(c.cmd.Args, " "), status)
	if out := strings.TrimSpace(c.out.String()); out != "" {
		msg += "; its output ended with: " + out
	}
	return errors.New(msg)
}

// stop ends the command's process group: SIGTERM, then SIGKILL after
// stopGrace or when ctx ends.
func (c *command) stop(ctx context.Context) {
	pgid := -c.pid()
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	timer := time.NewTimer(stopGrace)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
	case <-ctx.Done():
	}
	// Children may outlive the group leader: kill whatever is left.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-c.done
}

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 1024

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
