package session

import "github.com/loadlab/loadlab/lab/cleanup"

// RemoveLeftovers removes what lab runs that died without cleaning up
// left on this host (their processes, with cgroups their cgroup run
// directories, their network namespaces, bridges and veths) and returns
// what it removed. Every Open calls it first; so does `loadlab lab
// cleanup`. Live runs' objects are left alone.
func RemoveLeftovers(cgroups bool) ([]string, error) {
	return cleanup.RemoveLeftovers(cgroups, netPrefix)
}

// FindLeftovers lists what RemoveLeftovers would remove, and removes
// nothing (`loadlab lab cleanup --dry-run`).
func FindLeftovers(cgroups bool) ([]string, error) {
	return cleanup.FindLeftovers(cgroups, netPrefix)
}
