package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
	"golang.org/x/sys/unix"
)

// killWithin bounds how long Stop waits after SIGKILL.
const killWithin = 5 * time.Second

// Process is a started program.
type Process struct {
	name    string
	cmd     *exec.Cmd
	group   cgroup.Group
	stopSig syscall.Signal
	done    chan struct{}
	waitErr error
	exit    Exit // set before done is closed
}

// reap waits for the program once, for Wait, Exited and Stop.
func (p *Process) reap() {
	p.waitErr = p.cmd.Wait()
	p.exit = exitOf(p.cmd.ProcessState, time.Now())
	close(p.done)
}

// Name is the process's label.
func (p *Process) Name() string { return p.name }

// PID is the program's process id (the wrapper exec'd into it).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Wait blocks until the program exits and returns its exit error (nil for
// status 0).
func (p *Process) Wait() error {
	<-p.done
	return p.waitErr
}

// Exited reports whether the program has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitInfo returns how the program ended, and false while it runs.
func (p *Process) ExitInfo() (Exit, bool) {
	select {
	case <-p.done:
		return p.exit, true
	default:
		return Exit{}, false
	}
}

// Done is closed when the program has exited (and been reaped).
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends the stop signal, waits up to grace for the program to exit,
// then SIGKILLs what is left: the whole cgroup, or without one the
// program's process group (workers it forked). It reaps the program. It is
// safe to call more than once and after the program exited by itself.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Exited() {
		if err := p.cmd.Process.Signal(p.stopSig); err != nil && !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop %s: %v", p.name, err)
		}
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	var err error
	if p.group != nil {
		err = p.group.Kill()
	} else if kerr := unix.Kill(-p.PID(), unix.SIGKILL); kerr != nil && !errors.Is(kerr, unix.ESRCH) {
		err = kerr
	}
	select {
	case <-p.done:
	case <-time.After(killWithin):
		return fmt.Errorf("stop %s: pid %d still running %s after SIGKILL", p.name, p.PID(), killWithin)
	}
	if err != nil {
		return fmt.Errorf("stop %s: %v", p.name, err)
	}
	return nil
}
