package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/safefs"
	"github.com/loadlab/loadlab/pin"
)

// execWithin bounds how long the wrapper may take to reach exec.
const execWithin = 30 * time.Second

// Start runs s through the wrapper and returns once the program has been
// exec'd inside its cgroups and namespace, or with the wrapper's reason
// why not. The process gets its own process group and dies with SIGKILL if
// this process dies (Pdeathsig).
func Start(s Spec) (*Process, error) {
	if s.Path == "" {
		return nil, errors.New("start: no program path given")
	}
	// The program runs as root until the wrapper drops privileges, and a
	// proxy's master stays root: it passes the lab's rule.
	path, err := findbin.Runnable(s.Path)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	name := s.Name
	if name == "" {
		name = filepath.Base(path)
	}
	args, err := wrapperCommand(s, path)
	if err != nil {
		return nil, fmt.Errorf("start %s: %v", name, err)
	}
	wrapper := s.Wrapper
	if wrapper == "" {
		wrapper = DefaultWrapper
	}
	if err := findbin.Trusted(wrapper); err != nil {
		return nil, fmt.Errorf("start %s: wrapper: %w", name, err)
	}
	cmd := exec.Command(wrapper, args...)
	cmd.Env, cmd.Dir = findbin.Environ(s.Dir, s.Env), s.Dir
	// Setpgid: the program and what it forks form a process group that a
	// terminal's Ctrl-C does not reach (the lab stops it in order) and
	// that Stop can kill without cgroups.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logs, err := openLogs(cmd, s.Stdout, s.Stderr)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer closeAll(logs)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %v", name, err)
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the wrapper
	err = onSpawnerThread(cmd.Start)
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("start %s: cannot run wrapper %s: %v", name, wrapper, err)
	}
	if err := readReport(r, wrapper); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("start %s: %v", name, err)
	}
	p := &Process{name: name, cmd: cmd, group: s.Group, stopSig: s.StopSignal, done: make(chan struct{})}
	if p.stopSig == 0 {
		p.stopSig = syscall.SIGTERM
	}
	go p.reap()
	return p, nil
}

// StartOnSpawner starts cmd on the thread every Start forks from, so that a
// parent-death signal set in cmd.SysProcAttr fires when this process ends,
// not when some thread of it does.
func StartOnSpawner(cmd *exec.Cmd) error { return onSpawnerThread(cmd.Start) }

// wrapperCommand builds the wrapper's arguments for s (path resolved).
func wrapperCommand(s Spec, path string) ([]string, error) {
	args := []string{ExecSubcommand, "--errfd", "3", "--ppid", strconv.Itoa(os.Getpid())}
	if s.Group != nil {
		for _, f := range s.Group.ProcsFiles() {
			args = append(args, "--procs", f)
		}
	}
	if s.NetNS != "" {
		if _, err := os.Stat(s.NetNS); err != nil {
			return nil, fmt.Errorf("network namespace %s: %v", s.NetNS, err)
		}
		args = append(args, "--netns", s.NetNS)
	}
	if s.CPUs != "" {
		if _, err := pin.ParseList(s.CPUs); err != nil {
			return nil, err
		}
		args = append(args, "--cpus", s.CPUs)
	}
	if s.User != "" {
		id, err := lookupUser(s.User)
		if err != nil {
			return nil, err
		}
		gs := make([]string, len(id.groups))
		for i, g := range id.groups {
			gs[i] = strconv.Itoa(g)
		}
		args = append(args, "--uid", strconv.Itoa(id.uid), "--gid", strconv.Itoa(id.gid), "--groups", strings.Join(gs, ","))
	}
	args = append(args, "--", path)
	return append(args, s.Args...), nil
}

// readReport waits for the wrapper's pipe to close: at exec (nothing but
// the hello byte was written) or after it wrote why it failed.
func readReport(r *os.File, wrapper string) error {
	_ = r.SetReadDeadline(time.Now().Add(execWithin))
	msg, err := io.ReadAll(r)
	switch {
	case err != nil:
		return fmt.Errorf("wrapper %s did not reach exec within %s: %v", wrapper, execWithin, err)
	case len(msg) == 0 || msg[0] != helloByte:
		return fmt.Errorf("wrapper %s exited without running %q; the binary must dispatch it to proc.ExecMain (hidden subcommand in cmd/loadlab)", wrapper, ExecSubcommand)
	case len(msg) > 1:
		return errors.New(string(bytes.TrimSpace(msg[1:])))
	}
	return nil
}

// openLogs opens the log files (appending) and attaches them to cmd.
func openLogs(cmd *exec.Cmd, stdout, stderr string) ([]*os.File, error) {
	var files []*os.File
	open := func(p string) (*os.File, error) {
		if p == "" {
			return nil, nil
		}
		// O_NOFOLLOW and one link: a proxy's log lies in a directory its
		// user may write, and this process is root.
		f, err := safefs.OpenAppend(p, 0o644)
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("cannot open log file: %w", err)
		}
		files = append(files, f)
		return f, nil
	}
	out, err := open(stdout)
	if err != nil {
		return nil, err
	}
	errf := out
	if stderr != stdout {
		if errf, err = open(stderr); err != nil {
			return nil, err
		}
	}
	if out != nil {
		cmd.Stdout = out
	}
	if errf != nil {
		cmd.Stderr = errf
	}
	return files, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
