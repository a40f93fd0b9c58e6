package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
	"github.com/loadlab/loadlab/pin"
)

// Run runs a lab plan end to end: the plan with the overrides, the CPU
// layouts, the units and their budget, the results store (resumed when
// Out holds the same plan), every unit through its session, the cleanup,
// and the report. Bad input is a UsageError, before any work. A signal
// on ctx ends the run cleanly: the step in flight is recorded, the report
// rendered, and the error wraps ErrInterrupted.
func Run(ctx context.Context, o RunOptions) error {
	p, err := preparePlan(o)
	if err != nil {
		return err
	}
	lp, err := startLive(o) // bound before anything runs
	if err != nil {
		return err
	}
	defer lp.close()
	log := o.Log
	topo, err := pin.ReadTopology()
	if err != nil {
		return fmt.Errorf("read the CPU topology: %w", err)
	}
	allowed, err := pin.Allowed()
	if err != nil {
		return fmt.Errorf("read the CPUs this process may use: %w", err)
	}
	lay, units, budget, err := planUnits(p, o.Profiles, topo, allowed, scenario.FindInstalled)
	if err != nil {
		return err
	}
	out := o.Out
	if out == "" {
		out = filepath.Join("results", p.Name)
	}
	printPlan := func() {
		fmt.Fprintf(log, "loadlab: plan %s into %s: %s\n", p.Name, out, budget)
		for _, n := range append(slices.Clone(p.Notes), lay.Notes...) {
			fmt.Fprintf(log, "loadlab: note: %s\n", n)
		}
		for _, l := range lay.Layouts {
			fmt.Fprintf(log, "loadlab: layout %s: server CPUs %s, backend %s, generator %s\n", l.ID, l.Server, l.Backend, l.Gen)
		}
	}
	if o.DryRun {
		printPlan()
		return nil
	}
	id, err := runIdentity(p, budget)
	if err != nil {
		return err
	}
	store, resumed, err := results.Open(out, p, results.RunOptions{NoCgroups: o.NoCgroups})
	if err != nil {
		return UsageError{err}
	}
	defer store.Close()
	if resumed && !store.F.Finished {
		// Steps measured with other parts would mix with these: refused.
		// A finished run measures nothing more and re-renders as it is.
		if why := store.F.Changed(id); why != "" {
			return usagef("%s holds a run made with other parts: %s; resume it with the same ones, use another --out, or remove %s to start over", out, why, filepath.Join(out, results.FileName))
		}
	}
	printPlan()
	switch {
	case resumed && store.F.Finished:
		// A finished run is never measured again (Runner.Run measures
		// nothing): the same command re-renders it.
		fmt.Fprintf(log, "loadlab: the run in %s is finished (%d units recorded): re-rendering its report, measuring nothing; remove %s to measure again\n", out, len(store.F.Units), out)
	case resumed:
		fmt.Fprintf(log, "loadlab: resuming the run in %s (%d units recorded)\n", out, len(store.F.Units))
	}
	if !store.F.Finished {
		if err := store.Update(func(f *results.File) { f.Record(id) }); err != nil {
			return err
		}
	}
	lp.begin(store.F)

	var janitor cleanup.Janitor
	runCtx, stop := janitor.OnSignal(ctx)
	defer stop()
	r := &scenario.Runner{
		Plan: p, Store: store, Layouts: lay, Units: units, Budget: budget,
		Open: scenario.SessionOpener(&janitor), Log: log, NoCgroups: o.NoCgroups,
		Machine:  scenario.ReadMachine(p.Net),
		Observer: observers(lp.observer(), o.Metrics),
	}
	runErr := r.Run(runCtx)
	if cerr := janitor.Run(); cerr != nil {
		fmt.Fprintf(log, "loadlab: cleanup: %v\n", cerr)
	}
	interrupted := runCtx.Err() != nil && ctx.Err() == nil
	if runErr != nil && !interrupted {
		// still render what was measured
		rep, rerr := report.Render(store.F, out)
		if rerr == nil {
			fmt.Fprintf(log, "loadlab: partial report in %s\n", filepath.Join(out, report.MarkdownFile))
		}
		lp.end(runCtx, store.F, rep, "failed")
		return runErr
	}
	rep, err := report.Render(store.F, out)
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if !o.Quiet && o.Stdout != nil {
		_, _ = o.Stdout.Write(rep.MarkdownTables()) // stdout: nothing to do about a failed write
	}
	fmt.Fprintf(log, "loadlab: wrote %s, %s and %s\n", filepath.Join(out, results.FileName), filepath.Join(out, report.MarkdownFile), filepath.Join(out, report.HTMLFile))
	how := "finished"
	if interrupted {
		how = "interrupted"
	}
	lp.end(runCtx, store.F, rep, how)
	if interrupted {
		return fmt.Errorf("%w: the step in flight is recorded; run the same command again to resume", ErrInterrupted)
	}
	return nil
}

// planUnits lays plan p out on the CPUs of topo that this process may use
// (allowed) and lists its units and their budget, find saying which
// profiles' binaries are installed. It refuses a run that cannot start
// (checkInstalled); profiles is --profiles as given. Nothing runs.
func planUnits(p *plan.Plan, profiles []string, topo *pin.Topology, allowed pin.CPUSet, find scenario.Finder) (*scenario.Layouts, []scenario.UnitSpec, scenario.Budget, error) {
	lay, err := scenario.PlanLayouts(p, topo, allowed)
	if err != nil {
		return nil, nil, scenario.Budget{}, UsageError{err}
	}
	units, err := scenario.BuildUnits(p, lay, find)
	if err != nil {
		return nil, nil, scenario.Budget{}, UsageError{err}
	}
	budget := scenario.MakeBudget(p, units)
	if err := checkInstalled(p, profiles, units, budget); err != nil {
		return nil, nil, scenario.Budget{}, err
	}
	return lay, units, budget, nil
}

// checkInstalled fails when nothing can run, when a profile named on
// the command line is not installed, or when a profile file's binary is
// missing or refused (a built-in's is skipped with a line).
func checkInstalled(p *plan.Plan, profiles []string, units []scenario.UnitSpec, b scenario.Budget) error {
	hint := "install the proxies with scripts/install-proxies.sh (make deps), or set " + "LOADLAB_PROXY_BIN"
	for _, name := range profiles {
		if slices.Contains(b.Missing, name) {
			return usagef("profile %s is not installed: %s", name, hint)
		}
	}
	for _, u := range units {
		if src := u.Profile.Source; !src.Builtin && u.BinErr != nil {
			return usagef("profile %s (%s): %s", u.Profile.Name, src.File, u.Skip)
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

// runIdentity is what this run is made of, for results.json and for a
// resume to compare: the host, the loadlab binary, and each profile that
// runs (its file's and templates' SHA-256, its binary's path, version and
// SHA-256).
func runIdentity(p *plan.Plan, b scenario.Budget) (results.Identity, error) {
	var id results.Identity
	id.Host, _ = os.Hostname()
	self, err := os.Executable()
	if err != nil {
		return id, fmt.Errorf("cannot find the loadlab binary: %w", err)
	}
	if id.LoadlabSHA256, err = results.FileSHA256(self); err != nil {
		return id, fmt.Errorf("the loadlab binary: %w", err)
	}
	for _, name := range b.Profiles {
		prof, err := p.ProfileSet().Get(name)
		if err != nil {
			return id, err
		}
		r := results.ProfileRecord{
			Name: prof.Name, Proxy: prof.Proxy, Role: prof.Role, Description: prof.Description, FixedBody: string(prof.FixedBody),
			File: prof.Source.File, Builtin: prof.Source.Builtin, Extends: prof.Source.Extends,
			SHA256: prof.Source.SHA256, ConfigSHA256: prof.ConfigSHA256(),
		}
		if r.Binary, err = prof.Find(); err == nil {
			r.Version, _ = prof.Version(r.Binary)
			if r.BinarySHA256, err = results.FileSHA256(r.Binary); err != nil {
				return id, fmt.Errorf("profile %s: %w", name, err)
			}
		}
		id.Profiles = append(id.Profiles, r)
	}
	return id, nil
}
