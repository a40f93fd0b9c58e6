package findbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// ErrUntrusted is wrapped by Trusted's error: the file may not be run by
// this process, whose binaries run as root in the lab.
var ErrUntrusted = errors.New("untrusted binary")

// Trusted returns nil when path may be run by the lab: after following its
// links, a regular file owned by root or the invoking user (this process's
// real uid, or $SUDO_UID under sudo) that neither its group nor others may
// write, in a directory that is owned the same way and equally closed.
// Otherwise its error wraps ErrUntrusted and names the file and the reason.
// One rule for every binary the lab runs: found by FindBinary, named in
// $LOADLAB_PROXY_BIN or in a profile file.
func Trusted(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUntrusted, path, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUntrusted, path, err)
	}
	name := path
	if real != path {
		name = path + " (" + real + ")"
	}
	fi, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUntrusted, name, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUntrusted, name)
	}
	if why := untrusted(fi); why != "" {
		return fmt.Errorf("%w: refusing to run %s: %s (chown it to root or yourself and chmod go-w, or use another build)", ErrUntrusted, name, why)
	}
	dir := filepath.Dir(real)
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUntrusted, dir, err)
	}
	if why := untrusted(di); why != "" {
		return fmt.Errorf("%w: refusing to run %s: its directory %s %s (anyone who may write it may replace the binary)", ErrUntrusted, name, dir, why)
	}
	return nil
}

// untrusted says why fi may not hold a binary the lab runs, or "".
func untrusted(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "has no owner to check"
	}
	if !trustedUID(st.Uid) {
		return "is owned by uid " + strconv.FormatUint(uint64(st.Uid), 10) + ", not root or the invoking user"
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("is writable by its group or others (mode %04o)", fi.Mode().Perm())
	}
	return ""
}

// trustedUID reports whether uid is root, this process's real user, or
// the user sudo ran it for.
func trustedUID(uid uint32) bool {
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
