package cgroup

import (
	"errors"
	"os"
	"path/filepath"

	cgroups "github.com/containerd/cgroups/v3"
)

// Version is a cgroup interface version.
type Version int

// The two cgroup versions. The zero Version means "unknown".
const (
	V1 Version = 1 // legacy or hybrid hierarchy: one tree per controller
	V2 Version = 2 // unified hierarchy: one tree, controllers enabled per subtree
)

// String returns "v1", "v2" or "unknown".
func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "unknown"
}

// Detect reports which cgroup version this host mounts at /sys/fs/cgroup. A
// hybrid host (v1 controllers plus an empty cgroup2 at /sys/fs/cgroup/unified)
// is V1, since its controllers live in the v1 trees.
func Detect() (Version, error) {
	switch cgroups.Mode() {
	case cgroups.Unified:
		return V2, nil
	case cgroups.Legacy, cgroups.Hybrid:
		return V1, nil
	}
	return 0, errors.New("no cgroup file system mounted at /sys/fs/cgroup; use --no-cgroups")
}

// detectTree guesses the version of a (fake) tree rooted at root: a
// cgroup.controllers file at the top means v2, a memory or cpuset directory
// means v1.
func detectTree(root string) (Version, error) {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return V2, nil
	}
	for _, c := range v1Controllers {
		if fi, err := os.Stat(filepath.Join(root, c)); err == nil && fi.IsDir() {
			return V1, nil
		}
	}
	return 0, errors.New("no cgroup tree at " + root + " (neither cgroup.controllers nor a cpuset/memory/cpuacct directory)")
}
