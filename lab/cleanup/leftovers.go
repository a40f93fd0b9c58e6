package cleanup

import (
	"errors"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/netns"
)

// RemoveLeftovers removes what crashed earlier runs left on this host: with
// cgroups, run directories loadlab-<pid> of dead pids under our own cgroup
// (killing processes still in them), and with a non-empty netPrefix, network
// namespaces, bridges and veths named with it whose creator pid is dead.
// Cgroups go first, so proxies orphaned inside a stale namespace die before
// it is unpinned. It returns what it removed.
func RemoveLeftovers(cgroups bool, netPrefix string) ([]string, error) {
	return leftovers(cgroups, netPrefix, cgroup.RemoveStale, netns.RemoveStale)
}

// FindLeftovers lists what RemoveLeftovers would remove, in its order, and
// removes nothing (a process still inside a stale cgroup is left running).
func FindLeftovers(cgroups bool, netPrefix string) ([]string, error) {
	return leftovers(cgroups, netPrefix, cgroup.FindStale, netns.FindStale)
}

func leftovers(cgroups bool, netPrefix string, cg, net func(string) ([]string, error)) ([]string, error) {
	var found []string
	var errs []error
	if cgroups {
		r, err := cg("")
		found = append(found, r...)
		errs = append(errs, err)
	}
	if netPrefix != "" {
		r, err := net(netPrefix)
		found = append(found, r...)
		errs = append(errs, err)
	}
	return found, errors.Join(errs...)
}
