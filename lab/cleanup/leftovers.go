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
	var removed []string
	var errs []error
	if cgroups {
		r, err := cgroup.RemoveStale("")
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	if netPrefix != "" {
		r, err := netns.RemoveStale(netPrefix)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}
