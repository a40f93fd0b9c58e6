package pin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRestoreProcess re-runs the test binary, which restricts itself to one
// CPU, starts threads, restores its original affinity and reports every
// thread's affinity: all must be back to the original set.
func TestRestoreProcess(t *testing.T) {
	if os.Getenv("PIN_RESTORE_CHILD") == "1" {
		restoreChild()
		return
	}
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skip("needs two allowed CPUs to tell a restore from a restriction")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreProcess$")
	cmd.Env = append(os.Environ(), "PIN_RESTORE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	var threads int
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "THREAD "); ok {
			threads++
			if _, cpus, _ := strings.Cut(v, " "); cpus != allowed.String() {
				t.Errorf("thread %s, want %s", v, allowed)
			}
		}
	}
	if threads < 2 {
		t.Fatalf("child reported %d threads:\n%s", threads, out)
	}
}

func restoreChild() {
	before, err := Allowed()
	if err == nil {
		err = RestrictProcess(before[:1])
	}
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	hold := lockThreads(4)
	if err := RestrictProcess(before); err == nil {
		fmt.Println("ERROR RestrictProcess widened a restricted process; RestoreProcess is then unneeded")
		os.Exit(3)
	}
	if err := RestoreProcess(before); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	ents, _ := os.ReadDir("/proc/self/task")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				fmt.Printf("THREAD %s %s\n", e.Name(), strings.TrimSpace(v))
			}
		}
	}
	close(hold)
}
