package testutil

import (
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/pidstate"
	"golang.org/x/sys/unix"
)

// NeedRoot skips a test that needs root (cgroups, namespaces, users).
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (cgroups, network namespaces, other users)")
	}
}

// ModuleRoot is the directory of the go.mod above the working directory
// (a test's working directory is its package's).
func ModuleRoot() string {
	wd, _ := os.Getwd()
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return wd
}

var (
	buildMu    sync.Mutex
	builtInDir = map[string]string{}
)

// BuildLoadlab builds cmd/loadlab into dir/loadlab, once per directory and
// test binary, and returns its path. Tests need the real CLI where a child
// runs `loadlab serve` or lab/proc's wrapper: /proc/self/exe is the test
// binary.
func BuildLoadlab(t testing.TB, dir string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := builtInDir[dir]; ok {
		return bin
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go") //nolint:staticcheck // fallback only when go is not on PATH: the toolchain running the tests
	}
	bin := filepath.Join(dir, "loadlab")
	cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/loadlab")
	cmd.Dir = ModuleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/loadlab: %v\n%s", err, out)
	}
	builtInDir[dir] = bin
	return bin
}

// Alive reports whether a process with this pid exists and is not a
// zombie (pidstate.Alive, the check the lab's cleanup uses).
func Alive(pid int) bool { return pidstate.Alive(pid) }

// WaitGone fails the test unless pid is gone (or a zombie) within d.
func WaitGone(t testing.TB, pid int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !Alive(pid) {
			return
		}
	}
	t.Fatalf("pid %d still alive after %s", pid, d)
}

// DeadPID returns the pid of a process that has exited and been reaped.
func DeadPID(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// WaitFileLine waits up to d for the file at path to hold a line starting
// with prefix and returns that line; it fails the test with the file's
// content otherwise.
func WaitFileLine(t testing.TB, path, prefix string, d time.Duration) string {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	b, _ := os.ReadFile(path)
	t.Fatalf("no line %q in %s after %s; it holds:\n%s", prefix, path, d, b)
	return ""
}

// WriteExe writes an executable script at path (directories included).
func WriteExe(t testing.TB, path, script string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// LogWriter sends what is written to it (progress lines of a lab session,
// a child's output) to the test's log, one call per write.
type LogWriter struct{ T testing.TB }

func (w LogWriter) Write(b []byte) (int, error) {
	w.T.Helper()
	w.T.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// ListensTCP reports whether this process holds a listening TCP socket on
// port (IPv4 or IPv6), from /proc/net/tcp{,6} and /proc/self/fd: unlike
// trying to bind the port, the answer does not depend on other programs.
func ListensTCP(t testing.TB, port int) bool {
	t.Helper()
	mine := map[string]bool{}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	want := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:tm retrnsmt uid timeout inode
			if len(f) >= 10 && strings.HasSuffix(f[1], want) && f[3] == "0A" && mine[f[9]] {
				return true
			}
		}
	}
	return false
}

// RefusedPort returns a TCP port on 127.0.0.1 where nothing listens and
// nothing can until the test ends: a socket bound to it without listen(2)
// holds it, so connections to it are refused (RST) rather than reaching
// whatever happened to bind a "free" port meanwhile.
func RefusedPort(t testing.TB) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*unix.SockaddrInet4).Port
}

// FreePort returns a TCP port on 127.0.0.1 that the kernel chose (port 0)
// and that was free a moment ago, for a child process to listen on: the
// port is released before FreePort returns, so a caller that starts a
// server on it must retry with another port when the bind fails.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FreeTCPUDPPort is FreePort for a server that listens on both TCP and UDP
// on the same port (HTTP/3 beside HTTP/1.1 and HTTP/2).
func FreeTCPUDPPort(t testing.TB) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		ln.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return 0
}

// SilentUDPPort returns a UDP port on 127.0.0.1 where nothing answers: a
// socket the test holds until it ends is bound there (port 0, the kernel's
// choice) and never reads, so no other program can take the port meanwhile.
func SilentUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.LocalAddr().(*net.UDPAddr).Port
}

// ProcStatus returns a field of /proc/PID/status ("NoNewPrivs",
// "Cpus_allowed_list", ...), failing the test without it.
func ProcStatus(t testing.TB, pid int, key string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return ""
}

// ProcEnviron returns a process's environment (/proc/PID/environ) as
// NAME=VALUE entries.
func ProcEnviron(t testing.TB, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// Gunzip returns the content of the gzipped file at path (a recorded
// fixture in testdata).
func Gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}
