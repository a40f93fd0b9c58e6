package cgroup

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestProcessTree(t *testing.T) {
	// sh forks two sleeps; the tree is sh + both children.
	cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })
	g := ProcessTree("sh", cmd.Process.Pid)
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pids, _ = g.Pids(); len(pids) == 3 {
			break
		}
	}
	if len(pids) != 3 {
		t.Fatalf("Pids = %v, want sh and two sleeps", pids)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Procs != 3 || st.Threads != 3 || st.MemCurrent == 0 || st.MemPeak < st.MemCurrent || st.MemAnon == 0 {
		t.Errorf("Stats = %+v", st)
	}
	if g.ProcsFiles() != nil {
		t.Error("a process tree has no cgroup.procs files")
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("sh still running after Remove")
	}
	if pids, _ := g.Pids(); len(pids) != 0 {
		t.Errorf("after Remove Pids = %v", pids)
	}
}
