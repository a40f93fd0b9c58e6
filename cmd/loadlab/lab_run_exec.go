package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
	"github.com/loadlab/loadlab/pin"
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

// labRunFlags are the flags of `loadlab lab run`.
type labRunFlags struct {
	plan        string
	out         string
	profiles    string
	scenarios   string
	keys        string
	stepScale   float64
	net         string
	noCgroups   bool
	serverCPUs  string
	backendCPUs string
	loadgenCPUs string
	memory      string
	dryRun      bool
	quiet       bool
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// preparePlan loads the plan and applies the flags; every error is a
// usage error (exit 2) and comes before any work.
func preparePlan(f *labRunFlags) (*plan.Plan, error) {
	p, err := plan.Load(f.plan)
	if err != nil {
		return nil, usageError{err}
	}
	var keys []string
	if f.keys != "" {
		kt, err := certs.ParseKeyTypes(f.keys)
		if err != nil {
			return nil, usagef("--keys: %v", err)
		}
		for _, k := range kt {
			keys = append(keys, string(k))
		}
	}
	if err := p.Narrow(plan.Selection{Profiles: splitList(f.profiles), Scenarios: splitList(f.scenarios), Keys: keys}); err != nil {
		return nil, usageError{err}
	}
	if f.net != "" {
		if f.net != plan.NetLoopback && f.net != plan.NetNetns {
			return nil, usagef("--net %q: use loopback or netns", f.net)
		}
		p.Net = f.net
	}
	for _, c := range []struct {
		flag, v string
		dst     *string
	}{{"--server-cpus", f.serverCPUs, &p.CPUs.Server}, {"--backend-cpus", f.backendCPUs, &p.CPUs.Backend}, {"--loadgen-cpus", f.loadgenCPUs, &p.CPUs.Loadgen}} {
		if c.v == "" {
			continue
		}
		if _, _, err := pin.ParseCountOrList(c.v); err != nil {
			return nil, usagef("%s: %v", c.flag, err)
		}
		*c.dst = c.v
	}
	if f.serverCPUs != "" {
		for i := range p.Scenarios {
			if p.Scenarios[i].ServerCPUs != "" {
				p.Notes = append(p.Notes, fmt.Sprintf("scenario %s: server CPUs %s from --server-cpus instead of %s", p.Scenarios[i].Name, f.serverCPUs, p.Scenarios[i].ServerCPUs))
				p.Scenarios[i].ServerCPUs = ""
			}
		}
	}
	if f.memory != "" {
		var m plan.ByteSize
		if err := m.UnmarshalText([]byte(f.memory)); err != nil {
			return nil, usagef("--memory: %v", err)
		}
		p.MemoryLimit = m
	}
	if math.IsNaN(f.stepScale) || f.stepScale != 1 {
		if err := p.Scale(f.stepScale); err != nil {
			return nil, usageError{err}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, usagef("%v (after the command-line overrides)", err)
	}
	return p, nil
}
