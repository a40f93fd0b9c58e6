package pin

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statusCPUs reads Cpus_allowed_list from a /proc status file.
func statusCPUs(t *testing.T, path string) CPUSet {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return mustList(t, v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in %s", path)
	return nil
}

// currentCPU returns the CPU the calling thread runs on (getcpu).
func currentCPU() int {
	var cpu uint32
	unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	return int(cpu)
}

func TestAllowedMatchesProc(t *testing.T) {
	got, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if want := statusCPUs(t, "/proc/self/status"); !got.Equal(want) {
		t.Fatalf("Allowed() = %s, /proc/self/status says %s", got, want)
	}
}

func TestCheckAllowed(t *testing.T) {
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckAllowed(allowed); err != nil {
		t.Fatalf("allowed set rejected: %v", err)
	}
	err = CheckAllowed(CPUSet{allowed[0], MaxCPU})
	want := fmt.Sprintf("cpu %d is outside the CPUs this process may use (%s); pick from %s", MaxCPU, allowed, allowed)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if CheckAllowed(nil) == nil {
		t.Fatal("empty set accepted")
	}
}

func TestPinThread(t *testing.T) {
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range allowed {
		errc := make(chan error, 1)
		go func() {
			errc <- func() error {
				if err := PinThread(cpu); err != nil {
					return err
				}
				got, err := getAffinity(0)
				if err != nil {
					return err
				}
				if !got.Equal(CPUSet{cpu}) {
					return fmt.Errorf("affinity %s after PinThread(%d)", got, cpu)
				}
				for range 100 {
					runtime.Gosched()
					if c := currentCPU(); c != cpu {
						return fmt.Errorf("pinned to %d but running on %d", cpu, c)
					}
				}
				// Allowed must still report the process set from a pinned thread.
				if a, err := Allowed(); err != nil || !a.Equal(allowed) {
					return fmt.Errorf("Allowed from pinned thread = %s, %v; want %s", a, err, allowed)
				}
				// Restore so the thread can go back to the pool.
				if err := setAffinity(0, allowed); err != nil {
					return err
				}
				runtime.UnlockOSThread()
				return nil
			}()
		}()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestPinThreadSet(t *testing.T) {
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		errc <- func() error {
			if err := PinThreadSet(allowed); err != nil {
				return err
			}
			defer runtime.UnlockOSThread()
			got, err := getAffinity(0)
			if err == nil && !got.Equal(allowed) {
				err = fmt.Errorf("affinity %s, want %s", got, allowed)
			}
			return err
		}()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestPinThreadOutside(t *testing.T) {
	errc := make(chan error, 1)
	go func() {
		before, _ := getAffinity(0)
		err := PinThread(MaxCPU)
		after, _ := getAffinity(0)
		if !after.Equal(before) {
			err = fmt.Errorf("failed pin changed affinity %s -> %s", before, after)
		}
		errc <- err
	}()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("PinThread(%d) err = %v", MaxCPU, err)
	}
	if err := PinThread(-1); err == nil {
		t.Fatal("PinThread(-1) accepted")
	}
}

// TestRestrictProcess re-runs the test binary, which restricts itself to the
// last allowed CPU and reports every thread's affinity; the test process
// keeps its own affinity.
func TestRestrictProcess(t *testing.T) {
	if os.Getenv("PIN_RESTRICT_CHILD") == "1" {
		restrictChild()
		return
	}
	allowed, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	target := allowed[len(allowed)-1]
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestrictProcess$")
	cmd.Env = append(os.Environ(), "PIN_RESTRICT_CHILD=1", fmt.Sprintf("PIN_RESTRICT_CPU=%d", target))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	var threads int
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "THREAD "); ok {
			threads++
			if _, cpus, _ := strings.Cut(v, " "); cpus != fmt.Sprint(target) {
				t.Errorf("thread %s", v)
			}
		}
	}
	if threads < 2 {
		t.Fatalf("child reported %d threads:\n%s", threads, out)
	}
	if a, _ := Allowed(); !a.Equal(allowed) {
		t.Fatalf("parent affinity changed to %s", a)
	}
}

// restrictChild is the child side of TestRestrictProcess.
func restrictChild() {
	var cpu int
	fmt.Sscan(os.Getenv("PIN_RESTRICT_CPU"), &cpu)
	if err := RestrictProcess(CPUSet{cpu}); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	// Start a few locked goroutines so the runtime creates new threads,
	// which must inherit the restriction.
	hold := lockThreads(4)
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

// lockThreads starts n goroutines locked to their own threads, so the runtime
// creates new threads; they stay until hold is closed.
func lockThreads(n int) (hold chan struct{}) {
	var wg sync.WaitGroup
	hold = make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			wg.Done()
			<-hold
		}()
	}
	wg.Wait()
	return hold
}
