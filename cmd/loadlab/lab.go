package main

import "github.com/spf13/cobra"

// labCmd is the parent of the lab's subcommands (proxies, run, ...); each
// subcommand file registers itself on it in an init function.
var labCmd = &cobra.Command{
	Use:   "lab",
	Short: "Reverse-proxy lab: the proxies, backend and scenarios the seed benchmarks used",
	Args:  cobra.NoArgs,
}

func init() { rootCmd.AddCommand(labCmd) }
