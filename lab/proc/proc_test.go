package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// hostGroup creates a group on this host's v1 cgroups, or skips.
func hostGroup(t *testing.T, name string, l cgroup.Limits) cgroup.Group {
	t.Helper()
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
	t.Cleanup(func() {
		if err := m.Cleanup(); err != nil {
			t.Errorf("cgroup cleanup: %v", err)
		}
	})
	g, err := m.Create(name, l)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// inGroup checks /proc/PID/cgroup names the group in every v1 hierarchy.
func inGroup(t *testing.T, pid int, g cgroup.Group) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("/loadlab-%d/%s", os.Getpid(), g.Name())
	for _, c := range []string{"cpuset", "memory", "cpuacct"} {
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ":"+c+":") && strings.HasSuffix(line, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("pid %d not in %s of %s:\n%s", pid, want, c, b)
		}
	}
}

func TestStartInGroup(t *testing.T) {
	g := hostGroup(t, "sleeper", cgroup.Limits{CPUs: "1", MemoryBytes: 256 << 20})
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{Path: os.Args[0], Env: helperEnv("sleep"), Group: g, Stdout: log, Stderr: log})
	waitLine(t, log, "ready")
	inGroup(t, p.PID(), g)
	if got := statusField(t, p.PID(), "Cpus_allowed_list"); got != "1" {
		t.Errorf("Cpus_allowed_list = %q, want 1", got)
	}
	if pids, _ := g.Pids(); !slices.Equal(pids, []int{p.PID()}) {
		t.Errorf("group pids = %v, want [%d]", pids, p.PID())
	}
	if p.Exited() {
		t.Fatal("exited early")
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Error("not exited after Stop")
	}
	if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Wait = %v, want signal: terminated", err)
	}
	if pids, _ := g.Pids(); len(pids) != 0 {
		t.Errorf("group still holds %v", pids)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestMemoryCharged(t *testing.T) {
	g := hostGroup(t, "alloc", cgroup.Limits{CPUs: "1", MemoryBytes: 256 << 20})
	log := filepath.Join(t.TempDir(), "out.log")
	startT(t, Spec{Path: os.Args[0], Env: helperEnv("alloc"), Group: g, Stdout: log, Stderr: log})
	waitLine(t, log, "ready")
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.MemCurrent < 40<<20 || st.MemAnon < 40<<20 || st.MemPeak < st.MemCurrent {
		t.Errorf("Stats = %+v, want > 40 MiB current and anon after a 50 MiB allocation", st)
	}
	if st.Procs != 1 || st.Threads < 2 || st.CPUNanos == 0 {
		t.Errorf("Stats = %+v, want 1 Go process with several threads and some CPU", st)
	}
}

func TestGrandchildInGroup(t *testing.T) {
	g := hostGroup(t, "forker", cgroup.Limits{CPUs: "1"})
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{Path: os.Args[0], Env: helperEnv("fork"), Group: g, Stdout: log, Stderr: log})
	child := pidFromLine(t, waitLine(t, log, "child "))
	inGroup(t, child, g)
	pids, _ := g.Pids()
	if !slices.Contains(pids, p.PID()) || !slices.Contains(pids, child) {
		t.Errorf("group pids = %v, want %d and %d", pids, p.PID(), child)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	waitGone(t, child)
	files := g.ProcsFiles()
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Dir(f)); err == nil {
			t.Errorf("%s left after Remove", filepath.Dir(f))
		}
	}
}

func TestNoGroupPinsAndStopsTree(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{Path: os.Args[0], Env: helperEnv("fork"), CPUs: "0", Stdout: log})
	child := pidFromLine(t, waitLine(t, log, "child "))
	for _, pid := range []int{p.PID(), child} {
		if got := statusField(t, pid, "Cpus_allowed_list"); got != "0" {
			t.Errorf("pid %d Cpus_allowed_list = %q, want 0", pid, got)
		}
	}
	// The helper ignores nothing, but its child is only reached through
	// the process group.
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	waitGone(t, child)
}

func TestStopEscalates(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{Path: os.Args[0], Env: helperEnv("ignoreterm"), Stdout: log})
	waitLine(t, log, "ready")
	start := time.Now()
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Wait = %v, want signal: killed", err)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Error("SIGKILL came before the grace period ended")
	}
}

func TestStopSignal(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{Path: os.Args[0], Env: helperEnv("sleep"), Stdout: log, StopSignal: syscall.SIGQUIT})
	waitLine(t, log, "ready")
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	// A Go program dies of SIGQUIT with exit status 2 after a dump.
	if err := p.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 2") {
		t.Errorf("Wait = %v, want the SIGQUIT exit", err)
	}
}

// badGroup is a group whose cgroup.procs cannot be written.
type badGroup struct{ cgroup.Group }

func (badGroup) ProcsFiles() []string { return []string{"/nonexistent/lab/cgroup.procs"} }
func (badGroup) Kill() error          { return nil }

func TestStartErrors(t *testing.T) {
	cases := []struct {
		name string
		s    Spec
		want string
	}{
		{"no path", Spec{}, "no program path"},
		{"not in PATH", Spec{Path: "no-such-program-ll"}, "no-such-program-ll"},
		{"bad cpus", Spec{Path: "sleep", CPUs: "x"}, "is not a CPU id"},
		{"no user", Spec{Path: "sleep", User: "no-such-user-ll"}, `user "no-such-user-ll" does not exist`},
		{"no netns", Spec{Path: "sleep", NetNS: "/nonexistent/ns"}, "network namespace /nonexistent/ns"},
		{"cgroup join fails", Spec{Path: "sleep", Group: badGroup{}}, "cannot join cgroup /nonexistent/lab"},
		{"exec fails", Spec{Path: "/nonexistent/prog"}, "cannot execute /nonexistent/prog"},
		{"log dir missing", Spec{Path: "sleep", Stdout: "/nonexistent/x.log"}, "cannot open log file"},
		{"wrapper not wired", Spec{Path: "sleep", Wrapper: "/bin/true"}, "exited without running"},
	}
	for _, c := range cases {
		p, err := Start(c.s)
		if err == nil {
			_ = p.Stop(time.Second)
			t.Errorf("%s: Start succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, err, c.want)
		}
	}
}

// The wrapper dies with its parent, and so does the program it became,
// also after it dropped privileges (which clears the parent-death signal
// unless the wrapper sets it again).
func TestParentDeathKillsProgram(t *testing.T) {
	for _, user := range []string{"", "nobody"} {
		t.Run("user="+user, func(t *testing.T) {
			if user != "" && os.Geteuid() != 0 {
				t.Skip("needs root")
			}
			log := filepath.Join(t.TempDir(), "out.log")
			f, err := os.Create(log)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			starter := exec.Command(os.Args[0])
			starter.Env = helperEnv("starter", "AS_USER="+user)
			starter.Stdout, starter.Stderr = f, f
			if err := starter.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = starter.Process.Kill(); _ = starter.Wait() }()
			child := pidFromLine(t, waitLine(t, log, "child "))
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			if user != "" {
				if got := strings.Fields(statusField(t, child, "Uid"))[0]; got != "65534" {
					t.Errorf("child uid = %s, want nobody", got)
				}
			}
			_ = starter.Process.Kill()
			_ = starter.Wait()
			waitGone(t, child)
		})
	}
}

func TestEnsureUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := exec.LookPath("useradd"); err != nil {
		t.Skip("no useradd")
	}
	name := fmt.Sprintf("ll%d", os.Getpid())
	created, err := EnsureUser(name)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	if err != nil || !created {
		t.Fatalf("EnsureUser(%s) = %v, %v", name, created, err)
	}
	if _, err := lookupUser(name); err != nil {
		t.Fatal(err)
	}
	if created, err := EnsureUser(name); err != nil || created {
		t.Errorf("second EnsureUser = %v, %v; want existing", created, err)
	}
	if created, err := EnsureUser("nobody"); err != nil || created {
		t.Errorf("EnsureUser(nobody) = %v, %v", created, err)
	}
}

// Bad wrapper arguments are reported through the pipe, not mistaken for a
// binary that lacks the subcommand.
func TestWrapperBadArgs(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], ExecSubcommand, "--errfd", "3", "--bogus", "--", "/bin/true")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	rerr := readReport(r, os.Args[0])
	_ = cmd.Wait()
	if rerr == nil || !strings.Contains(rerr.Error(), "flag provided but not defined: -bogus") {
		t.Errorf("report = %v", rerr)
	}
}

// A caller whose thread dies after Start (a goroutine that exits while
// locked to its thread) must not take the program down with it.
func TestStartFromDyingThread(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	var p *Process
	var err error
	for {
		started := make(chan bool)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
			if syscall.Gettid() == os.Getpid() {
				// The main thread is never terminated; park this
				// goroutine on it for good and try from another thread.
				started <- false
				select {}
			}
			p, err = Start(Spec{Path: os.Args[0], Env: helperEnv("sleep"), Stdout: log})
			started <- true
		}()
		if <-started {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	waitLine(t, log, "ready")
	time.Sleep(200 * time.Millisecond)
	if p.Exited() {
		t.Fatalf("program died with the caller's thread: %v", p.Wait())
	}
}
