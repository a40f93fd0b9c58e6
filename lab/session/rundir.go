package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/loadlab/loadlab/internal/safefs"
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

// makeRunDir creates the run directory, or takes the one there if this
// process's user owns it (a resumed run), never through a link: an
// existing directory another user owns is refused, and so is a path
// through a directory, or a link, that another user could change
// (safefs.CheckDirs). Missing parents are made 0755. It is private: mode
// 0700, or 0710 with the proxy user's group when proxies run as another
// user, who must traverse it to reach their own per-proxy directories
// (and can list nothing). Every ancestor must let that user through.
func makeRunDir(dir string, u runAs) error {
	if err := safefs.CheckDirs(dir); err != nil {
		return fmt.Errorf("run directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", filepath.Dir(dir), bare(err))
	}
	gid, perm := -1, os.FileMode(0o700)
	if u.switches() {
		gid, perm = u.gid, 0o710
	}
	if err := safefs.OwnDir(dir, gid, perm); err != nil {
		if errors.Is(err, safefs.ErrUnsafe) {
			return fmt.Errorf("run directory: %w", err)
		}
		return fmt.Errorf("cannot make run directory %s private: %v", dir, bare(err))
	}
	if !u.switches() {
		return nil
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
			return fmt.Errorf("proxy user %s cannot reach the run directory %s: %s is mode %04o owned by %s; let it through (chmod o+x), use a run directory every parent of which it may traverse (as the project's results/), or proxy user root",
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
// name, left by an earlier run, is removed), mode 0700, root's until
// giveProxyDir: nobody else can put anything in it while it is filled.
func makeProxyDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("cannot clear %s: %v", dir, bare(err))
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, bare(err))
	}
	return nil
}

// giveProxyDir hands the filled per-proxy directory to the proxy: a proxy
// started as u gets the whole tree (safefs.ChownTree, no link followed);
// one that starts as root and switches to u itself (user: root) keeps
// it root's, mode 0710 with u's group, so its workers reach the temporary
// directories its master makes them and the files it serves, and nothing
// it opens there as root (nginx's and h2o's error log and nginx's pid
// file, the lab's proxy.log) is in a directory u may write; userFiles,
// what it writes there once it is u, are made empty and given to u.
func giveProxyDir(dir string, u runAs, masterStaysRoot bool, userFiles []string) error {
	if !u.switches() {
		return nil
	}
	if masterStaysRoot {
		for _, name := range userFiles {
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
			if err == nil {
				err = f.Chown(u.uid, u.gid)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return fmt.Errorf("cannot make %s for %s: %v", filepath.Join(dir, name), u.name, bare(err))
			}
		}
		return safefs.OwnDir(dir, u.gid, 0o710)
	}
	if err := safefs.ChownTree(dir, u.uid, u.gid); err != nil {
		return fmt.Errorf("cannot give %s to %s: %v", dir, u.name, err)
	}
	return nil
}

// copyPrivate copies src to dst (new, mode 0600) in a directory still
// root's.
func copyPrivate(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v; recreate the certificates with loadlab certs", src, bare(err))
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dst, bare(err))
	}
	return nil
}

// bare strips the path from a *fs.PathError whose path the message names.
func bare(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
