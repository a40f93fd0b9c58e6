package lab

import (
	"fmt"
	"io"
	"os"

	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/session"
)

// Cleanup removes what lab runs that died without cleaning up left
// (processes in their cgroups, cgroup directories, network namespaces,
// bridges and veths) and prints a line for each on out; with dryRun it
// prints what it would remove and removes nothing. Runs still going are
// left alone. It needs root.
func Cleanup(out io.Writer, dryRun bool) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("lab cleanup: needs root (the lab's cgroups and namespaces are root's)")
	}
	cg := true
	if _, err := cgroup.Detect(); err != nil {
		cg = false
		fmt.Fprintf(out, "no cgroups here (%v): namespaces only\n", err)
	}
	find, verb := session.RemoveLeftovers, "removed"
	if dryRun {
		find, verb = session.FindLeftovers, "would remove"
	}
	removed, err := find(cg)
	for _, r := range removed {
		fmt.Fprintf(out, "%s %s\n", verb, r)
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(out, "nothing left by dead lab runs")
	}
	if err != nil {
		return fmt.Errorf("lab cleanup: %w", err)
	}
	return nil
}
