package findbin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/internal/safefs"
)

// SelfExe names the program this process runs: the lab's own wrapper and
// backend are started through it.
const SelfExe = "/proc/self/exe"

// ErrUntrusted is wrapped by Trusted's error: the file may not be run by
// this process, whose binaries run as root in the lab.
var ErrUntrusted = errors.New("untrusted binary")

// Trusted returns nil when path may be run by the lab: after following its
// links, a regular file owned by root or the invoking user (this process's
// real uid, or $SUDO_UID under sudo) that neither its group nor others may
// write, in a directory that is owned the same way and equally closed.
// Otherwise its error wraps ErrUntrusted and names the file and the reason.
// One rule for every binary the lab runs: found by FindBinary, named in
// $LOADLAB_PROXY_BIN or in a profile file. The rule on owners and modes
// is safefs.Unsafe's. SelfExe, the image this process runs already, needs
// no check (and may be a binary rebuilt or removed since it started).
func Trusted(path string) error {
	if path == SelfExe {
		return nil
	}
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
	if why := safefs.Unsafe(fi); why != "" {
		return fmt.Errorf("%w: refusing to run %s: %s (chown it to root or yourself and chmod go-w, or use another build)", ErrUntrusted, name, why)
	}
	dir := filepath.Dir(real)
	di, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUntrusted, dir, err)
	}
	if why := safefs.Unsafe(di); why != "" {
		return fmt.Errorf("%w: refusing to run %s: its directory %s %s (anyone who may write it may replace the binary)", ErrUntrusted, name, dir, why)
	}
	return nil
}
