package session

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/lab/proxy"
)

// alive reports whether a process with this pid exists and is not a
// zombie.
var alive = testutil.Alive

// uidOf reads the real uid of a process.
func uidOf(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("no Uid line for pid %d", pid)
}

// assertRunsAsProxyUser checks that the proxy serves as the proxy user
// (every process for proxies started as it, the workers for those that
// switch themselves) and that its directory is private to that user.
func assertRunsAsProxyUser(t *testing.T, e *Session, p *Proxy) {
	t.Helper()
	if !e.user.switches() {
		return
	}
	pids, err := p.Group().Pids()
	if err != nil || len(pids) == 0 {
		t.Fatalf("group pids: %v %v", pids, err)
	}
	asUser := 0
	for _, pid := range pids {
		if uid, err := uidOf(pid); err == nil && uid == e.user.uid {
			asUser++
		}
	}
	if selfSwitches := p.prof.User == proxy.UserRoot; selfSwitches && asUser == 0 || !selfSwitches && asUser != len(pids) {
		t.Errorf("%s: %d of %d processes run as %s (uid %d)", p.prof.Name, asUser, len(pids), e.user.name, e.user.uid)
	}
	// A proxy started as the user owns its directory; one whose master
	// stays root (and opens its logs there) gets it root's, traversable
	// by the user's group only.
	dirMode, dirUID := os.FileMode(0o700), e.user.uid
	if p.prof.User == proxy.UserRoot {
		dirMode, dirUID = 0o710, os.Geteuid()
	}
	for _, c := range []struct {
		dir       string
		mode      os.FileMode
		uid, gid  int
		checkUser bool
	}{{e.Dir(), 0o710, os.Geteuid(), e.user.gid, false}, {p.Dir(), dirMode, dirUID, e.user.gid, true}} {
		fi, err := os.Stat(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm() != c.mode || int(st.Gid) != c.gid || int(st.Uid) != c.uid {
			t.Errorf("%s: mode %04o owner %d:%d, want %04o %d:%d", c.dir, fi.Mode().Perm(), st.Uid, st.Gid, c.mode, c.uid, c.gid)
		}
	}
}
