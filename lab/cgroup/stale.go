package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/loadlab/loadlab/internal/pidstate"
)

// staleName matches the run directories and v2 self leaves of prefix.
func staleName(prefix string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `-([0-9]+)(-self)?$`)
}

// RemoveStale removes what crashed runs left under this process's own
// cgroup: run directories loadlab-<pid> (and v2 leaves loadlab-<pid>-self)
// whose pid no longer exists, killing any process still inside them. root is
// as for NewManager. It returns the directories it removed.
func RemoveStale(root string) ([]string, error) {
	return RemoveStaleWith(Options{Root: root})
}

// RemoveStaleWith is RemoveStale with all options.
func RemoveStaleWith(o Options) ([]string, error) { return removeStale(o, hostOps) }

// FindStale lists what RemoveStale would remove, and removes nothing.
func FindStale(root string) ([]string, error) { return scanStale(Options{Root: root}, hostOps, false) }

func removeStale(o Options, ops fsOps) ([]string, error) { return scanStale(o, ops, true) }

// scanStale finds the stale run directories and, with remove, removes them.
func scanStale(o Options, ops fsOps, remove bool) ([]string, error) {
	m, err := resolve(o, ops)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	name := staleName(m.prefix)
	for _, h := range m.hiers {
		ents, err := os.ReadDir(h.parent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			sm := name.FindStringSubmatch(e.Name())
			if !e.IsDir() || sm == nil {
				continue
			}
			pid, err := strconv.Atoi(sm[1])
			if err != nil || pid == m.pid || pidAlive(pid) {
				continue
			}
			dir := filepath.Join(h.parent, e.Name())
			if sm[2] != "" && holdsSelf(ops, dir) {
				// v2: the reaper of that run sits in its leaf and
				// cannot leave it (the parent may hold no processes);
				// the leaf is empty once it exits, and goes next time.
				continue
			}
			if remove {
				if err := removeTree(ops, dir); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			removed = append(removed, dir)
		}
	}
	return removed, errors.Join(errs...)
}

// pidAlive reports whether a process with this pid exists and is not a
// zombie (a run killed with SIGKILL is one until its parent reaps it).
func pidAlive(pid int) bool { return pidstate.Alive(pid) }

// removeTree kills every process in a cgroup directory and its children,
// then removes them bottom-up.
func removeTree(ops fsOps, dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // another run's sweep removed it first
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(ops, filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	// v2 (kernel 5.14+): cgroup.kill SIGKILLs the whole subtree at once,
	// forks in flight included; the loop below then only confirms it is
	// empty. v1 has no such file: the loop signals every pid until none
	// is left.
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err == nil {
		_ = ops.write(filepath.Join(dir, "cgroup.kill"), "1")
	}
	if err := killAll(dir, func() ([]int, error) { return ops.ids(dir, "cgroup.procs") }); err != nil {
		return fmt.Errorf("leftover %v", err)
	}
	return ops.removeDir(dir, removeWithin)
}

// holdsSelf reports whether this process is in the group at dir.
func holdsSelf(ops fsOps, dir string) bool {
	pids, err := ops.ids(dir, "cgroup.procs")
	if err != nil {
		return false
	}
	for _, p := range pids {
		if p == os.Getpid() {
			return true
		}
	}
	return false
}
