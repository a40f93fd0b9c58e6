package proc_test

import (
	"bufio"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/proc"
	"github.com/loadlab/loadlab/lab/watch"
)

// The exit the supervisor saw: a signal, or a status; ExitInfo says
// nothing while the program runs.
func TestExitInfo(t *testing.T) {
	p, err := proc.Start(proc.Spec{Path: "sh", Args: []string{"-c", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Wait()
	x, ok := p.ExitInfo()
	if !ok || x.Code != 3 || x.Signal != 0 || x.Describe() != "exited with status 3" || x.At.IsZero() {
		t.Errorf("exit 3: %+v %v %q", x, ok, x.Describe())
	}

	p, err = proc.Start(proc.Spec{Path: "sleep", Args: []string{"30"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if _, ok := p.ExitInfo(); ok {
		t.Fatal("ExitInfo of a running program says it exited")
	}
	w := watch.WatchExit(p, nil)
	if d := w.Stop(); d != nil {
		t.Fatalf("a running program reported dead: %+v", d)
	}
	w = watch.WatchExit(p, nil)
	before := time.Now()
	_ = syscall.Kill(p.PID(), syscall.SIGKILL)
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("no exit within 5 s of SIGKILL")
	}
	d := w.Stop()
	if d == nil || !d.Exited || d.Exit.Signal != syscall.SIGKILL || d.Exit.Describe() != "killed by SIGKILL" || d.At.Before(before) || d.OOM() {
		t.Errorf("after SIGKILL: %+v", d)
	}
}

// A program that outgrows its group's memory limit is OOM-killed, and the
// watcher reads it from the group's counter (v1 memory.oom_control here).
func TestExitWatcherSeesOOMKill(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if v, err := cgroup.Detect(); err != nil || v != cgroup.V1 {
		t.Skipf("host cgroups are not v1 (%v, %v)", v, err)
	}
	m, err := cgroup.NewManager("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	g, err := m.Create("oom", cgroup.Limits{MemoryBytes: 24 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok, err := cgroup.OOMKills(g); err != nil || !ok || n != 0 {
		t.Fatalf("fresh group: oom_kill %d %v %v", n, ok, err)
	}
	// First a program under the limit: running, nothing killed.
	exe, _ := os.Executable()
	p, err := proc.Start(proc.Spec{Path: exe, Group: g, Env: append(os.Environ(), "LOADLAB_TEST_HELPER=sleep"), Stdout: t.TempDir() + "/out"})
	if err != nil {
		t.Fatal(err)
	}
	w := watch.WatchExit(p, g)
	time.Sleep(300 * time.Millisecond)
	if d := w.Stop(); d != nil {
		t.Fatalf("a program under its limit reported dead: %+v", d)
	}
	_ = p.Stop(time.Second)

	out := t.TempDir() + "/alloc"
	p, err = proc.Start(proc.Spec{Path: exe, Group: g, Env: append(os.Environ(), "LOADLAB_TEST_HELPER=alloc"), Stdout: out})
	if err != nil {
		t.Fatal(err)
	}
	w = watch.WatchExit(p, g)
	select {
	case <-p.Done():
	case <-time.After(20 * time.Second):
		_ = p.Stop(time.Second)
		t.Fatal("a 50 MiB program under a 24 MiB limit still runs after 20 s")
	}
	d := w.Stop()
	if d == nil || !d.OOM() || !d.Exited || d.Exit.Signal != syscall.SIGKILL {
		t.Fatalf("after the OOM kill: %+v", d)
	}
	if f, err := os.Open(out); err == nil {
		if s := bufio.NewScanner(f); s.Scan() && s.Text() == "ready" {
			t.Errorf("the helper allocated 50 MiB under a 24 MiB limit")
		}
		f.Close()
	}
}
