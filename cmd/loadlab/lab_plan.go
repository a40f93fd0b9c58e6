package main

import (
	"strings"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

func newLabPlanCmd() *cobra.Command {
	planCmd := &cobra.Command{
		Use:   "plan",
		Short: "Show the built-in lab plans (quick, seed-001, seed-2026, sumguy) so they can be copied and edited",
		Args:  cobra.NoArgs,
	}
	show := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a plan as YAML (a built-in with its comments, or a file with every default filled in)",
		Long: `Print a plan as YAML. A built-in plan (` + strings.Join(lab.PlanNames(), ", ") + `) is printed as
shipped, comments included; copy and edit it, then run it with
loadlab lab run --plan my.yaml. A plan file is checked and printed with every
default filled in (what lab run would use).`,
		Example: `  loadlab lab plan show quick > my.yaml
  loadlab lab plan show my.yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("plan show takes one plan name or file (built-ins: %s)", strings.Join(lab.PlanNames(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := lab.ShowPlan(args[0])
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the built-in plans",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return lab.ListPlans(cmd.OutOrStdout())
		},
	}
	planCmd.AddCommand(show, list)
	return planCmd
}
