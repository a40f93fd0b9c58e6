// Package safefs holds the file operations the lab does as root where
// another user could have a hand in the path: the rule for whose files
// and directories root relies on (Unsafe), the log files it appends to
// and reads in directories it gave to the proxies' user (OpenAppend,
// OpenRead: never through a symbolic link, only a regular file of one
// link), the directories it makes its own (OwnDir, CheckDirs) and the
// trees it gives away (ChownTree: descriptor-relative, no link followed).
//
// Imports: a leaf of internal/; it imports no other loadlab package.
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is wrapped by the errors of this package that refuse a path
// another user could have planted or could still change.
var ErrUnsafe = errors.New("unsafe path")

// TrustedUID reports whether uid is root, this process's real user, or
// the user sudo ran it for ($SUDO_UID): the owners whose files root may
// rely on.
func TrustedUID(uid uint32) bool {
	if uid == 0 || int(uid) == os.Getuid() {
		return true
	}
	if s := os.Getenv("SUDO_UID"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 32); err == nil && uint32(v) == uid {
			return true
		}
	}
	return false
}

// Unsafe says why fi (a file root runs or reads, or a directory that holds
// one) could be changed by a user other than root or the invoking user:
// another owner, or write permission for its group or others. "" when
// neither holds.
func Unsafe(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "has no owner to check"
	}
	if !TrustedUID(st.Uid) {
		return "is owned by uid " + strconv.FormatUint(uint64(st.Uid), 10) + ", not root or the invoking user"
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("is writable by its group or others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}

// unsafeDir is Unsafe for a directory on the way to one root writes in: a
// sticky directory of a trusted owner (/tmp) may be writable by all, as
// nobody may then move or replace another's entries.
func unsafeDir(fi os.FileInfo) string {
	if fi.Mode()&os.ModeSticky != 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && TrustedUID(st.Uid) {
			return ""
		}
	}
	return Unsafe(fi)
}

// CheckDirs returns an error (wrapping ErrUnsafe) unless no user other
// than root or the invoking user can move or replace path or a directory
// on the way to it: every existing component of path, as given and after
// its links are resolved, is owned by such a user, and every directory
// among them is closed to its group and others or sticky (as /tmp is).
// The components that do not exist yet are the caller's to make.
func CheckDirs(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	// The deepest existing directory, and the chain above it.
	have := abs
	for {
		if _, err := os.Lstat(have); err == nil {
			break
		}
		parent := filepath.Dir(have)
		if parent == have {
			return nil
		}
		have = parent
	}
	real, err := filepath.EvalSymlinks(have)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnsafe, have, err)
	}
	for _, p := range []string{have, real} {
		if err := checkChain(p); err != nil {
			return err
		}
	}
	return nil
}

// checkChain checks every component of p from the root down.
func checkChain(p string) error {
	cur := string(filepath.Separator)
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(p), cur), cur)
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			if parts[i] == "" {
				continue
			}
			cur = filepath.Join(cur, parts[i])
		}
		fi, err := os.Lstat(cur)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnsafe, cur, err)
		}
		why := ""
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			// A link's own mode means nothing; its owner may retarget
			// it (in a sticky directory only its owner may).
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && !TrustedUID(st.Uid) {
				why = "is a link owned by uid " + strconv.FormatUint(uint64(st.Uid), 10)
			}
		case fi.IsDir():
			why = unsafeDir(fi)
		}
		if why != "" {
			return fmt.Errorf("%w: %s %s: another user could move or replace what root writes under it; use a directory of root's or your own (chmod go-w)", ErrUnsafe, cur, why)
		}
	}
	return nil
}

// OwnDir makes dir (its parent must exist) or opens the directory there,
// refusing a symbolic link and a directory that this process's user does
// not own, and sets its group (gid; -1 keeps it) and mode through the open
// descriptor: no Chown or Chmod goes through a path another user could
// point elsewhere.
func OwnDir(dir string, gid int, perm os.FileMode) error {
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return fmt.Errorf("%w: %s is not a directory but a link or a file: remove it, or use another directory", ErrUnsafe, dir)
		}
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s already exists, owned by uid %d, not by uid %d that runs the lab: whoever owns it could change what the lab writes there; remove it or use another directory", ErrUnsafe, dir, st.Uid, os.Geteuid())
	}
	if gid >= 0 && int(st.Gid) != gid {
		if err := unix.Fchown(fd, -1, gid); err != nil {
			return &fs.PathError{Op: "chown", Path: dir, Err: err}
		}
	}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: dir, Err: err}
	}
	return nil
}

// ChownTree gives dir and everything under it to uid:gid, children before
// their directory, each through its parent's descriptor without following
// a link (Fchownat with AT_SYMLINK_NOFOLLOW, subdirectories opened with
// O_NOFOLLOW): while dir is still root's, nobody else can change the tree
// under the walk, and once a directory is given away nothing below it is
// touched again.
func ChownTree(dir string, uid, gid int) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return chownAt(fd, dir, uid, gid)
}

// chownAt gives the directory open as fd (closed on return), with its
// content, to uid:gid; name is its path for errors.
func chownAt(fd int, name string, uid, gid int) error {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			sub, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return &fs.PathError{Op: "open", Path: filepath.Join(name, e.Name()), Err: err}
			}
			if err := chownAt(sub, filepath.Join(name, e.Name()), uid, gid); err != nil {
				return err
			}
			continue
		}
		if err := unix.Fchownat(fd, e.Name(), uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "chown", Path: filepath.Join(name, e.Name()), Err: err}
		}
	}
	if err := unix.Fchown(fd, uid, gid); err != nil {
		return &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	return nil
}

// OpenAppend opens path for appending, creating it with mode perm when
// missing, as a log root writes in a directory another user may write:
// not through a symbolic link (O_NOFOLLOW), never blocking on a FIFO, and
// only a regular file of one link (a hard link to another file is
// refused). Its error wraps ErrUnsafe for such a planted file.
func OpenAppend(path string, perm os.FileMode) (*os.File, error) {
	return openChecked(path, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, perm)
}

// OpenRead opens path for reading with the checks of OpenAppend: root
// reads what a proxy logged, not a file its user linked there.
func OpenRead(path string) (*os.File, error) {
	return openChecked(path, unix.O_RDONLY, 0)
}

func openChecked(path string, flags int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Open(path, flags|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: refusing to open %s: it is a symbolic link (someone else put it there: remove it)", ErrUnsafe, path)
		}
		if errors.Is(err, unix.ENXIO) {
			return nil, fmt.Errorf("%w: refusing to open %s: not a regular file (a FIFO or device)", ErrUnsafe, path)
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	switch {
	case err != nil:
		err = &fs.PathError{Op: "stat", Path: path, Err: err}
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = fmt.Errorf("%w: refusing to open %s: not a regular file (mode %o)", ErrUnsafe, path, st.Mode)
	case st.Nlink != 1:
		err = fmt.Errorf("%w: refusing to open %s: it has %d links (a hard link to another file: remove it)", ErrUnsafe, path, st.Nlink)
	}
	if err == nil {
		// Blocking again: the descriptor may go to a child as its output.
		var fl int
		if fl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}
