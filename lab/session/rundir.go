package session

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/loadlab/loadlab/lab/proc"
)

// runAs is the user proxies serve as. The zero runAs (name "") means this
// process's own user: nothing switches and nothing is chowned.
type runAs struct {
	name     string
	uid, gid int
}

// switches reports whether proxies run as a user other than ours.
func (u runAs) switches() bool { return u.name != "" }

// String names the user for progress lines.
func (u runAs) String() string {
	if u.name == "" {
		if cur, err := user.Current(); err == nil {
			return cur.Username
		}
		return "current user"
	}
	return u.name
}

// resolveProxyUser turns Options.ProxyUser into a runAs: as root, the named
// user (DefaultProxyUser when empty, created if missing); "root" or not
// being root means no switch.
func resolveProxyUser(want string, log io.Writer) (runAs, error) {
	if os.Geteuid() != 0 {
		if want == "" {
			return runAs{}, nil
		}
		if cur, err := user.Current(); err == nil && (cur.Username == want || cur.Uid == want) {
			return runAs{}, nil
		}
		return runAs{}, fmt.Errorf("running proxies as %s needs root: run loadlab as root or leave the proxy user empty", want)
	}
	if want == "" {
		want = DefaultProxyUser
	}
	if want == "root" || want == "0" {
		return runAs{}, nil
	}
	if want == DefaultProxyUser {
		// An error with the user present after all: another loadlab
		// created it at the same moment.
		created, err := proc.EnsureUser(want)
		if _, lerr := user.Lookup(want); err != nil && lerr != nil {
			return runAs{}, err
		}
		if created && err == nil {
			fmt.Fprintf(log, "created system user %s for the proxies\n", want)
		}
	}
	u, err := user.Lookup(want)
	if err != nil {
		if u, err = user.LookupId(want); err != nil {
			return runAs{}, fmt.Errorf("proxy user %q does not exist: create it (useradd --system %s) or pick another", want, want)
		}
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return runAs{}, fmt.Errorf("proxy user %q has non-numeric ids %s:%s", want, u.Uid, u.Gid)
	}
	return runAs{name: u.Username, uid: uid, gid: gid}, nil
}

// makeRunDir creates the run directory (parents 0755). It is private: mode
// 0700, or 0710 with the proxy user's group when proxies run as another
// user, who must traverse it to reach their own per-proxy directories (and
// can list nothing). Every ancestor must let that user through.
func makeRunDir(dir string, u runAs) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(dir), bare(err))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return fmt.Errorf("cannot create run directory %s: %v", dir, bare(err))
	}
	if !u.switches() {
		return os.Chmod(dir, 0o700)
	}
	if err := os.Chown(dir, os.Geteuid(), u.gid); err != nil {
		return fmt.Errorf("cannot give run directory %s to group %d: %v", dir, u.gid, bare(err))
	}
	if err := os.Chmod(dir, 0o710); err != nil {
		return err
	}
	return reachable(dir, u)
}

// reachable checks that u may traverse every ancestor of dir.
func reachable(dir string, u runAs) error {
	for a := filepath.Dir(dir); ; a = filepath.Dir(a) {
		fi, err := os.Stat(a)
		if err != nil {
			return err
		}
		if !traversable(fi, u) {
			return fmt.Errorf("proxy user %s cannot reach the run directory %s: %s is mode %04o owned by %s; use a directory under a world-traversable path (such as /tmp or the project's results/) or proxy user root",
				u.name, dir, a, fi.Mode().Perm(), owner(fi))
		}
		if a == filepath.Dir(a) {
			return nil
		}
	}
}

// traversable reports whether u has search permission on directory fi
// (supplementary groups are not considered).
func traversable(fi fs.FileInfo, u runAs) bool {
	perm := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return perm&0o001 != 0
	}
	switch {
	case int(st.Uid) == u.uid:
		return perm&0o100 != 0
	case int(st.Gid) == u.gid:
		return perm&0o010 != 0
	}
	return perm&0o001 != 0
}

func owner(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	}
	return "?"
}

// makeProxyDir creates a fresh per-proxy directory (an old one of the same
// name, left by an earlier run, is removed), mode 0700, owned by u.
func makeProxyDir(dir string, u runAs) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("cannot clear %s: %v", dir, bare(err))
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, bare(err))
	}
	return chown(dir, u)
}

// chown gives path to u (nothing without a switch).
func chown(path string, u runAs) error {
	if !u.switches() {
		return nil
	}
	if err := os.Lchown(path, u.uid, u.gid); err != nil {
		return fmt.Errorf("cannot give %s to %s: %v", path, u.name, bare(err))
	}
	return nil
}

// chownTree gives everything under dir to u.
func chownTree(dir string, u runAs) error {
	if !u.switches() {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return chown(path, u)
	})
}

// copyPrivate copies src to dst, mode 0600, owned by u.
func copyPrivate(src, dst string, u runAs) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v; recreate the certificates with loadlab certs", src, bare(err))
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		return fmt.Errorf("cannot write %s: %v", dst, bare(err))
	}
	return chown(dst, u)
}

// bare strips the path from a *fs.PathError whose path the message names.
func bare(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
