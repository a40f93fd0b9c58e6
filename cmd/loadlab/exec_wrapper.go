package main

import (
	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

// newExecWrapperCmd builds the hidden wrapper lab/proc starts (this
// binary, re-executed): it joins cgroups, enters a network namespace, pins
// CPUs, drops privileges and execs the lab program. Flags are parsed by
// lab.ExecMain, not cobra.
func newExecWrapperCmd() *cobra.Command {
	return &cobra.Command{
		Use:                lab.ExecSubcommand + " [flags] -- PATH ARGS...",
		Hidden:             true,
		DisableFlagParsing: true,
		// Shadow any root PersistentPreRun: the wrapper must do nothing but
		// its own steps before exec.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(_ *cobra.Command, args []string) error {
			return lab.ExecMain(args)
		},
	}
}
