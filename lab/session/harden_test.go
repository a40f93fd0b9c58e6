package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"
)

// A run directory that already exists and is another user's (anyone may
// make /tmp/loadlab-run before root does) is refused, unchanged, as are
// a link in its place and a path through another user's directory; the
// error names the owner and suggests no /tmp.
func TestMakeRunDirRefusesOthers(t *testing.T) {
	needRoot(t)
	t.Setenv("SUDO_UID", "")
	base := t.TempDir()
	u := runAs{name: "someone", uid: 4271, gid: 4271}

	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o777)
	os.Chmod(theirs, 0o777)
	os.Chown(theirs, 4270, 4270)
	err := makeRunDir(theirs, u)
	if err == nil || !strings.Contains(err.Error(), "uid 4270") || strings.Contains(err.Error(), "/tmp or") {
		t.Fatalf("uid 4270's run directory: err = %v, want a refusal naming the owner", err)
	}
	if fi, _ := os.Stat(theirs); fi.Mode().Perm() != 0o777 || fi.Sys().(*syscall.Stat_t).Gid != 4270 {
		t.Fatalf("the refused directory was changed: mode %04o", fi.Mode().Perm())
	}

	victim := filepath.Join(base, "victim")
	os.Mkdir(victim, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(victim, link)
	if err := makeRunDir(link, u); err == nil {
		t.Fatal("a link as the run directory was taken")
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o755 || fi.Sys().(*syscall.Stat_t).Gid != 0 {
		t.Fatalf("the link's target was changed: mode %04o gid %d", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Gid)
	}

	if err := makeRunDir(filepath.Join(theirs, "results", "run"), runAs{}); err == nil || !strings.Contains(err.Error(), "uid 4270") {
		t.Fatalf("a run directory under uid 4270's directory: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(theirs, "results")); err == nil {
		t.Fatal("made directories under uid 4270's directory before refusing")
	}

	// Root's own directory, made before (a resumed run): taken.
	mine := filepath.Join(base, "mine")
	os.Chmod(base, 0o755)
	if err := makeRunDir(mine, runAs{}); err != nil {
		t.Fatal(err)
	}
	if err := makeRunDir(mine, runAs{}); err != nil {
		t.Fatalf("root's run directory again: %v", err)
	}
}

// The proxy's user may replace proxy.log, in the directory it owns, with
// a link to root's file; the relaunch after a proxy died is then refused
// and root's file is not appended to.
func TestRelaunchRefusesLinkedLog(t *testing.T) {
	realLab(t)
	installedProfile(t, "caddy-stock")
	e := openSession(t, Options{})
	if !e.user.switches() {
		t.Skip("proxies run as root here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "caddy-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "root-owned")
	if err := os.WriteFile(secret, []byte("root's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What the proxy's user can do in its directory.
	log := filepath.Join(p.Dir(), "proxy.log")
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, log); err != nil {
		t.Fatal(err)
	}
	os.Lchown(log, e.user.uid, e.user.gid)
	err = p.Relaunch(ctx)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("relaunch with proxy.log a link to root's file: err = %v", err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's file\n" {
		t.Fatalf("root's file was written through the link: %q", b)
	}
}

// The servers the lab starts, the backend and every process of a proxy,
// run with no_new_privs, and none sees root's environment: only PATH,
// HOME, LANG and what the profile needs (Caddy's XDG directories).
func TestServersNoNewPrivsMinimalEnv(t *testing.T) {
	realLab(t)
	installedProfile(t, "caddy-stock")
	t.Setenv("LOADLAB_CANARY", "root's environment")
	e := openSession(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "caddy-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := p.Group().Pids()
	if err != nil || len(pids) == 0 {
		t.Fatalf("caddy's pids %v %v", pids, err)
	}
	allowed := []string{"PATH", "HOME", "LANG", "XDG_CONFIG_HOME", "XDG_DATA_HOME"}
	for _, pid := range append(pids, e.BackendPID()) {
		if got := testutil.ProcStatus(t, pid, "NoNewPrivs"); got != "1" {
			t.Errorf("pid %d: NoNewPrivs %s, want 1", pid, got)
		}
		for _, kv := range testutil.ProcEnviron(t, pid) {
			name, _, _ := strings.Cut(kv, "=")
			if !slices.Contains(allowed, name) {
				t.Errorf("pid %d has %s in its environment", pid, kv)
			}
		}
	}
	env := testutil.ProcEnviron(t, p.PID())
	for _, want := range []string{"HOME=" + p.Dir(), "LANG=C", "XDG_DATA_HOME=" + filepath.Join(p.Dir(), "data")} {
		if !slices.Contains(env, want) {
			t.Errorf("caddy's environment %q lacks %s", env, want)
		}
	}
	if env := testutil.ProcEnviron(t, e.BackendPID()); !slices.Contains(env, "HOME=/") {
		t.Errorf("the backend's environment %q lacks HOME=/", env)
	}
}
