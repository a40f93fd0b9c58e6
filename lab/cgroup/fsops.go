package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fsOps are the file operations on a cgroup tree. The host uses hostOps;
// tests swap in a fake kernel that follows the same rules on a temp dir.
type fsOps struct {
	mkdir func(dir string) error
	rmdir func(dir string) error
	write func(file, data string) error
	read  func(file string) ([]byte, error)
}

// hostOps works on the real cgroup file systems. Control files always exist
// when their controller is enabled, so write never creates a file.
var hostOps = fsOps{
	mkdir: func(dir string) error { return os.Mkdir(dir, 0o755) },
	rmdir: func(dir string) error {
		if err := unix.Rmdir(dir); err != nil {
			return &fs.PathError{Op: "rmdir", Path: dir, Err: err}
		}
		return nil
	},
	write: func(file, data string) error {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	},
	read: os.ReadFile,
}

// mkdirErr turns a failed mkdir under parent into the one-line error the
// user sees.
func mkdirErr(parent string, err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("cannot create cgroup under %s: permission denied; run as root or use --no-cgroups", parent)
	}
	return fmt.Errorf("cannot create cgroup under %s: %v; use --no-cgroups to run without cgroups", parent, bare(err))
}

// bare strips the path from a *fs.PathError, whose path the caller's
// message already names.
func bare(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// writeErr describes a failed write of value into a control file.
func writeErr(file, value string, err error) error {
	err = bare(err)
	hint := ""
	switch {
	case errors.Is(err, fs.ErrPermission):
		hint = "; run as root or use --no-cgroups"
	case errors.Is(err, fs.ErrNotExist):
		hint = " (controller not enabled for this group?)"
	}
	return fmt.Errorf("cannot write %q to %s: %v%s", strings.TrimSpace(value), file, err, hint)
}

// set writes value into dir/name with a descriptive error.
func (o fsOps) set(dir, name, value string) error {
	f := filepath.Join(dir, name)
	if err := o.write(f, value); err != nil {
		return writeErr(f, value, err)
	}
	return nil
}

// get returns the trimmed content of dir/name.
func (o fsOps) get(dir, name string) (string, error) {
	b, err := o.read(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// uint reads a file holding one unsigned number ("max" reads as 0).
func (o fsOps) number(dir, name string) (uint64, error) {
	s, err := o.get(dir, name)
	if err != nil {
		return 0, err
	}
	if s == "max" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
	}
	return n, nil
}

// keyed reads a "key value" file (memory.stat, cpu.stat) into a map.
func (o fsOps) keyed(dir, name string) (map[string]uint64, error) {
	s, err := o.get(dir, name)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// ids reads a file with one number per line (cgroup.procs, tasks).
func (o fsOps) ids(dir, name string) ([]int, error) {
	s, err := o.get(dir, name)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", filepath.Join(dir, name), err)
		}
		out = append(out, n)
	}
	return out, nil
}

// removeDir removes a cgroup directory, retrying while the kernel still
// reports it busy (tasks that were just killed take a moment to leave). A
// directory that is already gone is not an error.
func (o fsOps) removeDir(dir string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := o.rmdir(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("cannot remove cgroup %s: %v", dir, bare(err))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
