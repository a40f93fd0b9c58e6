package proc

import (
	"bufio"
	"context"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/netns"
)

// worldExecutable copies the test binary somewhere an unprivileged user
// can run it (the go test work directory is private to root).
func worldExecutable(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "loadlab-proc-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(dir, "helper")
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, src); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// A backend started with NetNS, Group and User together listens on the
// lab's backend address, as nobody, inside its cgroup, and a client in the
// gen namespace reaches it.
func TestNetNSGroupUser(t *testing.T) {
	g := hostGroup(t, "backend", cgroup.Limits{CPUs: "0", MemoryBytes: 128 << 20})
	lab, err := netns.NewLab("ll", []string{"backend", "gen"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Errorf("lab close: %v", err)
		}
	})
	addr := netip.AddrPortFrom(lab.Addr("backend"), 18080).String()
	log := filepath.Join(t.TempDir(), "out.log")
	p := startT(t, Spec{
		Name:   "backend",
		Path:   worldExecutable(t),
		Env:    helperEnv("listen", "LISTEN="+addr),
		Group:  g,
		NetNS:  lab.NSPath("backend"),
		User:   "nobody",
		Stdout: log, Stderr: log,
	})
	waitLine(t, log, "ready")
	inGroup(t, p.PID(), g)
	if got, want := inode(t, "/proc/"+strconv.Itoa(p.PID())+"/ns/net"), inode(t, lab.NSPath("backend")); got != want {
		t.Errorf("process netns inode %d, want the lab's %d", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := lab.DialContext("gen", nil)(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(line) != "uid=65534" {
		t.Errorf("backend says %q, want uid=65534 (nobody)", line)
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
}
