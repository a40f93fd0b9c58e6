package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/lab/check"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
)

// runCLI runs loadlab in a child process and returns its exit status,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := cliCommand(t, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func TestLabCheckUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--profiles", "nginx-stock,envoy"}, "caddy-stock"},
		{[]string{"--keys", "ed25519"}, "--keys"},
		{[]string{"--net", "bridge"}, "loopback or netns"},
		{[]string{"--memory", "lots"}, "--memory"},
		{[]string{"--server-cpus", "x"}, "--server-cpus"},
		{[]string{"--idle-samples", "0"}, "--idle-samples"},
		{[]string{"extra"}, "unknown command"},
	} {
		code, _, stderr := runCLI(t, append([]string{"lab", "check"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("lab check %q: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// Without permission to create cgroups (here: run as nobody) lab check
// fails with one line that suggests --no-cgroups, exit 1.
func TestLabCheckCgroupsNotWritable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the check as nobody")
	}
	if _, err := os.Stat("/sys/fs/cgroup"); err != nil {
		t.Skip("no cgroup file system")
	}
	// A run that died before this test (killed with its reaper) left
	// cgroups nobody may remove, which lab check would note on a second
	// line: remove them first, as root, as the note says to.
	if _, err := session.RemoveLeftovers(true); err != nil {
		t.Fatalf("removing leftovers of dead runs first: %v", err)
	}
	dir, err := os.MkdirTemp("", "labcheck-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	exe := copyExecutable(t, dir)
	cmd := exec.Command(exe, "lab", "check", "--profiles", "nginx-stock", "--keys", "p256", "--dir", filepath.Join(dir, "run"))
	cmd.Env = append(os.Environ(), asCLI+"=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	_ = cmd.Run()
	stderr := strings.TrimSpace(errb.String())
	if code := cmd.ProcessState.ExitCode(); code != exitRunError || strings.Contains(stderr, "\n") || !strings.Contains(stderr, "--no-cgroups") || !strings.Contains(stderr, "cgroup") {
		t.Errorf("as nobody: exit %d, stderr %q; want exit 1 and one line about cgroups suggesting --no-cgroups", cmd.ProcessState.ExitCode(), stderr)
	}
}

// copyExecutable copies this test binary into dir (world-readable), for
// running it as another user.
func copyExecutable(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "loadlab")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// The whole check on real proxies: rows for nginx-stock and h2o with every
// protocol verified, idle memory and restart measured, and the JSON file.
func TestLabCheckRealProxies(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("starts real proxies as root (skipped with -short)")
	}
	var profiles []string
	for _, name := range []string{"nginx-stock", "haproxy"} {
		if p, _ := proxy.Get(name); p.Name != "" {
			if _, err := p.Find(); err == nil {
				profiles = append(profiles, name)
			}
		}
	}
	if len(profiles) == 0 {
		t.Skip("neither nginx nor haproxy installed")
	}
	dir := worldDir(t)
	jsonPath := filepath.Join(dir, "check.json")
	code, stdout, stderr := runCLI(t, "lab", "check", "--profiles", strings.Join(profiles, ","), "--keys", "p256",
		"--dir", filepath.Join(dir, "run"), "--idle-quiet", "200ms", "--idle-samples", "2", "--idle-every", "100ms", "--json", jsonPath)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var rep check.Report
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(profiles) {
		t.Fatalf("%d rows for %d profiles:\n%s", len(rep.Rows), len(profiles), stdout)
	}
	for _, r := range rep.Rows {
		if !r.Found || !r.TLS || !r.H2 || !r.ByteIdentical || !r.WebSocket || r.IdleNeed == 0 || r.IdleMemory == 0 || r.RestartSeconds <= 0 || !r.CertUnchanged || r.Error != "" {
			t.Errorf("row %+v: want every check passed", r)
		}
		if !strings.Contains(stdout, r.Profile) {
			t.Errorf("table lacks %s:\n%s", r.Profile, stdout)
		}
	}
}

// worldDir is a temporary directory the proxy user can traverse
// (t.TempDir's parent is private to root).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "labcheck-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SIGINT in the middle of a check (a proxy running, its idle memory being
// measured) ends loadlab with status 130 and leaves no process in its
// cgroups, no cgroup directory loadlab-<pid> and no network namespace
// ll<pid>-*.
func TestLabCheckSIGINTCleansUp(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("starts real proxies as root (skipped with -short)")
	}
	if p, _ := proxy.Get("nginx-stock"); p.Name != "" {
		if _, err := p.Find(); err != nil {
			t.Skipf("nginx not installed: %v", err)
		}
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	dir := worldDir(t)
	cmd := cliCommand(t, "lab", "check", "--profiles", "nginx-stock,nginx-keepalive", "--keys", "p256",
		"--net", "netns", "--dir", filepath.Join(dir, "run"), "--idle-quiet", "30s")
	progress, done := startUntil(t, cmd, "starting nginx-stock (p256)")
	pid := cmd.Process.Pid
	// Let it reach the idle-memory quiet period with the proxy up.
	deadline := time.Now().Add(20 * time.Second)
	var inGroups []int
	for time.Now().Before(deadline) {
		if inGroups = pidsInRunCgroups(pid); len(inGroups) >= 3 { // backend, nginx master and a worker
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(inGroups) < 3 {
		cmd.Process.Kill()
		t.Fatalf("found %v in cgroups loadlab-%d, want the backend and nginx\n%s", inGroups, pid, progress.text())
	}
	if ns := netnsOf(t, pid); ns == "" {
		t.Errorf("no network namespace ll%d-* while running", pid)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("lab check still running 30s after SIGINT\n%s", progress.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\n%s", code, progress.text())
	}
	for _, p := range inGroups {
		if testutil.Alive(p) {
			t.Errorf("pid %d (was in the run's cgroups) still alive", p)
		}
	}
	if left := pidsInRunCgroups(pid); len(left) > 0 {
		t.Errorf("processes still in cgroups loadlab-%d: %v", pid, left)
	}
	if dirs := runCgroupDirs(t, pid); len(dirs) > 0 {
		t.Errorf("cgroup directories left: %v", dirs)
	}
	if ns := netnsOf(t, pid); ns != "" {
		t.Errorf("network namespaces left: %s", ns)
	}
}

// lineWatcher collects a child's stderr and signals when a line contains
// want.
type lineWatcher struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
	hit  bool
}

func (w *lineWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if !w.hit && strings.Contains(w.buf.String(), w.want) {
		w.hit = true
		close(w.seen)
	}
	return len(b), nil
}

func (w *lineWatcher) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// pidsInRunCgroups scans /proc for processes whose cgroup path contains
// loadlab-<pid>.
func pidsInRunCgroups(pid int) []int {
	mark := "/loadlab-" + strconv.Itoa(pid)
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cgroup")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, mark+"/") || strings.HasSuffix(line, mark) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// runCgroupDirs finds directories named loadlab-<pid> under /sys/fs/cgroup.
func runCgroupDirs(t *testing.T, pid int) []string {
	name := "loadlab-" + strconv.Itoa(pid)
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil //nolint:nilerr // unreadable cgroup directories are skipped
		}
		if d.Name() == name {
			out = append(out, path)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// netnsOf lists the named network namespaces made by pid (ll<pid>-*).
func netnsOf(t *testing.T, pid int) string {
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
	var mine []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "ll"+strconv.Itoa(pid)+"-") {
			mine = append(mine, strings.Fields(l)[0])
		}
	}
	return strings.Join(mine, " ")
}

// startUntil starts cmd and waits (up to 90 s) until its stderr shows want.
// It returns the stderr watcher and a channel with cmd's Wait result.
func startUntil(t *testing.T, cmd *exec.Cmd, want string) (*lineWatcher, chan error) {
	t.Helper()
	progress := &lineWatcher{want: want, seen: make(chan struct{})}
	cmd.Stderr = progress
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-progress.seen:
	case err := <-done:
		t.Fatalf("%s ended before %q: %v\n%s", cmd.Args, want, err, progress.text())
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no %q within 90s:\n%s", want, progress.text())
	}
	return progress, done
}
