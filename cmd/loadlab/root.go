package main

import "github.com/spf13/cobra"

// newRootCmd builds the whole command tree with fresh flags.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "loadlab",
		Short:         "An honest load generator and a reverse-proxy benchmark lab",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newGenCmd(), newServeCmd(), newLabCmd(), newCertsCmd(), newReportCmd(), newPinCmd(), newMergeCmd(), newCompareCmd(), newK8sCmd(), newExecWrapperCmd(), newReaperCmd())
	return root
}
