// Package findbin finds the programs the lab and the tests run (proxies,
// peers): in $LOADLAB_PROXY_BIN, the project's .cache/bin (filled by
// scripts/install-proxies.sh), PATH and the system bin/sbin directories.
// The lab's proxy profiles and the generator's integration tests look
// binaries up the same way. Every program the lab runs as root passes
// Trusted, and runs in Environ's environment.
//
// Imports: internal/safefs (the rule on owners and modes) and no other
// loadlab package.
package findbin

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// ErrNotFound is wrapped by FindBinary's error when no such program is
// installed.
var ErrNotFound = errors.New("proxy binary not found")

// BinEnv names the environment variable with extra directories (separated
// by ':') searched first for proxy binaries.
const BinEnv = "LOADLAB_PROXY_BIN"

// ModulePath is the Go module whose checkout holds the project-local
// .cache/bin directory that scripts/install-proxies.sh fills.
const ModulePath = "github.com/loadlab/loadlab"

// systemDirs are searched after PATH: sbin is often missing from a
// non-root PATH, and Debian puts nginx and haproxy there.
var systemDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// SystemPath is the PATH of every program the lab starts: the system
// directories, none another user may write.
var SystemPath = strings.Join(systemDirs, ":")

// Environ is the environment of a program the lab starts (dir its working
// directory): PATH (SystemPath), HOME (dir, or / without one) and LANG=C,
// then extra (NAME=VALUE; a name given again replaces the one before).
// Nothing of this process's environment is passed on unless extra names
// it: root's variables (LD_PRELOAD, a PATH with a user's directories,
// credentials) are not the program's.
func Environ(dir string, extra []string) []string {
	home := dir
	if home == "" {
		home = "/"
	}
	env := []string{"PATH=" + SystemPath, "HOME=" + home, "LANG=C"}
	for _, kv := range extra {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(have string) bool { return strings.HasPrefix(have, name+"=") })
		env = append(env, kv)
	}
	return env
}

// SearchDirs returns the directories FindBinary searches after the
// $LOADLAB_PROXY_BIN entries and before PATH: the .cache/bin of the
// project checkout that contains the working directory or the running
// executable.
func SearchDirs() []string {
	var dirs []string
	if v := os.Getenv(BinEnv); v != "" {
		for _, d := range filepath.SplitList(v) {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		if root := projectRoot(s); root != "" {
			dirs = appendUnique(dirs, filepath.Join(root, ".cache", "bin"))
		}
	}
	return dirs
}

// FindBinary looks for an executable called name in $LOADLAB_PROXY_BIN, the
// project's .cache/bin, PATH and the system bin/sbin directories, in that
// order. Its error wraps ErrNotFound and says what to do. The first one
// found must pass Trusted: an untrusted one is refused (its error wraps
// ErrUntrusted), not passed over for the next.
func FindBinary(name string) (string, error) {
	for _, d := range SearchDirs() {
		if p := filepath.Join(d, name); IsExecutable(p) {
			return p, Trusted(p)
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, Trusted(p)
	}
	for _, d := range systemDirs {
		if p := filepath.Join(d, name); IsExecutable(p) {
			return p, Trusted(p)
		}
	}
	hint := "scripts/install-proxies.sh"
	if name == "traefik" {
		hint += " --with-traefik"
	}
	return "", fmt.Errorf("%w: %s is not in $%s, the project's .cache/bin, PATH or /usr/sbin: run %s", ErrNotFound, name, BinEnv, hint)
}

// SystemTool finds a system program the lab runs as root by name (sh,
// useradd): in the system bin and sbin directories only, never the
// working directory, PATH or the project's .cache/bin, and it must pass
// Trusted. Its error wraps ErrNotFound or ErrUntrusted.
func SystemTool(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, '/') {
		return "", fmt.Errorf("%w: %q is not a program name", ErrNotFound, name)
	}
	for _, d := range systemDirs {
		if p := filepath.Join(d, name); IsExecutable(p) {
			return p, Trusted(p)
		}
	}
	return "", fmt.Errorf("%w: %s is not in %s: install it with the system's packages", ErrNotFound, name, strings.Join(systemDirs, ", "))
}

// Runnable is the program the lab runs for path: a name without '/' is a
// system tool (SystemTool: never from the working directory or PATH), a
// path must exist and pass Trusted.
func Runnable(path string) (string, error) {
	if !strings.Contains(path, "/") {
		return SystemTool(path)
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("cannot execute %s: %w", path, errors.Unwrap(err))
	}
	return path, Trusted(path)
}

// projectRoot walks up from dir to the first directory whose go.mod declares
// ModulePath, or returns "".
func projectRoot(dir string) string {
	for {
		if moduleOf(filepath.Join(dir, "go.mod")) == ModulePath {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// moduleOf returns the module path a go.mod file declares, or "".
func moduleOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// IsExecutable reports whether path is a regular file with an execute bit.
func IsExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func appendUnique(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}
