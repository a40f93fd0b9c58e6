package main

import "github.com/spf13/cobra"

// newLabCmd builds `loadlab lab` and its subcommands.
func newLabCmd() *cobra.Command {
	lab := &cobra.Command{
		Use:   "lab",
		Short: "Reverse-proxy lab: the proxies, backend and scenarios the seed benchmarks used",
		Args:  cobra.NoArgs,
	}
	lab.AddCommand(newLabProxiesCmd(), newLabCheckCmd(), newLabRunCmd(), newLabPlanCmd(), newLabProfileCmd(), newLabCleanupCmd())
	return lab
}
