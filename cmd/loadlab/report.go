package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
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
			dir := args[0]
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usagef("%s is not a directory: give the --out directory of loadlab lab run", dir)
			}
			if _, err := os.Stat(filepath.Join(dir, results.FileName)); errors.Is(err, os.ErrNotExist) {
				return usagef("%s has no %s: run loadlab lab run --out %s first", dir, results.FileName, dir)
			}
			r, err := report.RenderDir(dir)
			if err != nil {
				return err
			}
			if !quiet {
				_, _ = cmd.OutOrStdout().Write(r.MarkdownTables()) // stdout: nothing to do about a failed write
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "loadlab: wrote %s and %s\n", filepath.Join(dir, report.MarkdownFile), filepath.Join(dir, report.HTMLFile))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "do not print the tables")
	return cmd
}
