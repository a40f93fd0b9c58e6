package main

import (
	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

func newLabCleanupCmd() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "cleanup",
		Short: "Remove what lab runs that died without cleaning up left: processes, cgroups, network namespaces",
		Long: `Remove what lab runs (lab run, lab check) left when they died without
cleaning up: processes still in their cgroups (a proxy's workers), the
cgroup run directories loadlab-<pid>, and the network namespaces, bridges
and veths named ll<pid>-... Only runs whose process is gone are touched;
a run still going is left alone. It prints what it removed; with
--dry-run it prints what it would remove and removes nothing.

A run normally leaves nothing: it cleans up on exit and on Ctrl-C, and if it
is killed (kill -9, the OOM killer) its reaper process removes the same
things a moment later. Every run calls this first too, for what the reaper
could not remove (the reaper was killed as well; on cgroup v2, the empty
leaf loadlab-<pid>-self the reaper itself sat in).

Check by hand: ls -d /sys/fs/cgroup/*/loadlab-* /sys/fs/cgroup/loadlab-*;
ip netns list | grep '^ll'; ip -br link | grep '^ll'.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lab.Cleanup(cmd.OutOrStdout(), dryRun)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "list what dead lab runs left, remove nothing")
	return c
}
