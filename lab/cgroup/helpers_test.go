package cgroup

import (
	"fmt"
	"github.com/loadlab/loadlab/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sleeper is a real child process that tests put into groups.
type sleeper struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startSleeper starts `sleep 60`, reaped in the background and killed when
// the test ends.
func startSleeper(t *testing.T) *sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sleeper{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	return s
}

func (s *sleeper) pid() int { return s.cmd.Process.Pid }

// waitDead fails the test unless the process exits within 5 s.
func (s *sleeper) waitDead(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("process %d still alive", s.pid())
	}
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func readTrim(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// deadPid returns the pid of a process that has exited and been reaped.
var deadPid = testutil.DeadPID

func join(parts ...string) string { return filepath.Join(parts...) }

// runDirOf is the run directory of pid's run with the default prefix.
func runDirOf(pid int) string { return fmt.Sprintf("%s-%d", DefaultPrefix, pid) }
