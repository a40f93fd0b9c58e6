package main

import (
	"os"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

// newReaperCmd builds the hidden reaper a lab session starts
// (lab/cleanup.StartReaper): it waits for the session's process to exit and,
// if it died without cleaning up, removes its processes, cgroups and
// namespaces. Flags are parsed by lab.ReaperMain.
func newReaperCmd() *cobra.Command {
	return &cobra.Command{
		Use:                lab.ReaperSubcommand + " --pid PID [--cgroups] [--net-prefix P]",
		Hidden:             true,
		DisableFlagParsing: true,
		PersistentPreRunE:  func(*cobra.Command, []string) error { return nil },
		Run: func(_ *cobra.Command, args []string) {
			os.Exit(lab.ReaperMain(args))
		},
	}
}
