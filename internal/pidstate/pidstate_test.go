package pidstate

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	c := exec.Command("sleep", "10")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pid := c.Process.Pid
	if !Alive(pid) {
		t.Fatal("a running child is not alive")
	}
	_ = c.Process.Kill()
	// Not waited for: a zombie, which counts as dead.
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped child (a zombie) still counts as alive")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.Wait()
	if Alive(pid) || Alive(0) || Alive(-1) {
		t.Fatal("a reaped pid, 0 or -1 counts as alive")
	}
}
