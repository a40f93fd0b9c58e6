package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
	"github.com/loadlab/loadlab/pin"
	"github.com/spf13/cobra"
)

// exitInterrupted is the status after Ctrl-C (128 + SIGINT).
const exitInterrupted = 130

// runLab runs `loadlab lab run`.
func runLab(cmd *cobra.Command, f *labRunFlags) error {
	p, err := preparePlan(f)
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	topo, err := pin.ReadTopology()
	if err != nil {
		return fmt.Errorf("read the CPU topology: %v", err)
	}
	allowed, err := pin.Allowed()
	if err != nil {
		return fmt.Errorf("read the CPUs this process may use: %v", err)
	}
	lay, err := scenario.PlanLayouts(p, topo, allowed)
	if err != nil {
		return usageError{err}
	}
	units, err := scenario.BuildUnits(p, lay, scenario.FindInstalled)
	if err != nil {
		return usageError{err}
	}
	budget := scenario.MakeBudget(p, units)
	if err := checkInstalled(f, budget); err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = filepath.Join("results", p.Name)
	}
	fmt.Fprintf(stderr, "loadlab: plan %s into %s: %s\n", p.Name, out, budget)
	for _, n := range append(slices.Clone(p.Notes), lay.Notes...) {
		fmt.Fprintf(stderr, "loadlab: note: %s\n", n)
	}
	for _, l := range lay.Layouts {
		fmt.Fprintf(stderr, "loadlab: layout %s: server CPUs %s, backend %s, generator %s\n", l.ID, l.Server, l.Backend, l.Loadgen)
	}
	if f.dryRun {
		return nil
	}
	store, resumed, err := results.Open(out, p, results.RunOptions{NoCgroups: f.noCgroups})
	if err != nil {
		return usageError{err}
	}
	defer store.Close()
	if resumed {
		fmt.Fprintf(stderr, "loadlab: resuming the run in %s (%d units recorded)\n", out, len(store.F.Units))
	}

	var janitor cleanup.Janitor
	ctx, stop := janitor.OnSignal(cmd.Context())
	defer stop()
	r := &scenario.Runner{
		Plan: p, Store: store, Layouts: lay, Units: units, Budget: budget,
		Open: scenario.SessionOpener(&janitor), Log: stderr, NoCgroups: f.noCgroups,
		Machine: scenario.ReadMachine(p.Net),
	}
	runErr := r.Run(ctx)
	if cerr := janitor.Run(); cerr != nil {
		fmt.Fprintf(stderr, "loadlab: cleanup: %v\n", cerr)
	}
	interrupted := ctx.Err() != nil && cmd.Context().Err() == nil
	if runErr != nil && !interrupted {
		// still render what was measured
		if _, rerr := report.Render(store.F, out); rerr == nil {
			fmt.Fprintf(stderr, "loadlab: partial report in %s\n", filepath.Join(out, report.MarkdownFile))
		}
		return runErr
	}
	rep, err := report.Render(store.F, out)
	if err != nil {
		return fmt.Errorf("write the report: %v", err)
	}
	if !f.quiet {
		_, _ = cmd.OutOrStdout().Write(rep.MarkdownTables()) // stdout: nothing to do about a failed write
	}
	fmt.Fprintf(stderr, "loadlab: wrote %s, %s and %s\n", filepath.Join(out, results.FileName), filepath.Join(out, report.MarkdownFile), filepath.Join(out, report.HTMLFile))
	if interrupted {
		return exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: the step in flight is recorded; run the same command again to resume")}
	}
	return nil
}

// checkInstalled fails when nothing can run, or when a profile named on
// the command line is not installed.
func checkInstalled(f *labRunFlags, b scenario.Budget) error {
	hint := "install the proxies with scripts/install-proxies.sh (make deps), or set " + "LOADLAB_PROXY_BIN"
	for _, name := range splitList(f.profiles) {
		if slices.Contains(b.Missing, name) {
			return fmt.Errorf("profile %s is not installed: %s", name, hint)
		}
	}
	if b.Units == 0 {
		if len(b.Missing) > 0 {
			return fmt.Errorf("none of the plan's proxies is installed (%v): %s", b.Missing, hint)
		}
		return errors.New("nothing to run: every unit of the plan is skipped")
	}
	return nil
}
