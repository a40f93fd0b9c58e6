package main

import (
	"io"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

func newReportCmd() *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render DIR/report.md, DIR/report.html and DIR/charts from DIR/results.json",
		Long: `Re-render the report of a lab run from its results.json: the Markdown tables,
the offline HTML page with its charts, and the chart PNGs. Prints the tables
(Markdown) on stdout unless --quiet.`,
		Example: `  loadlab report results/quick`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes one directory (the --out of loadlab lab run)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var tables io.Writer
			if !quiet {
				tables = cmd.OutOrStdout()
			}
			return lab.Rerender(args[0], tables, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "do not print the tables")
	return cmd
}
