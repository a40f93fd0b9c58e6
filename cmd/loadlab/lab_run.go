package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/pin"
	"github.com/spf13/cobra"
)

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

func newLabRunCmd() *cobra.Command {
	f := &labRunFlags{}
	cmd := &cobra.Command{
		Use:   "run --plan quick|FILE --out DIR",
		Short: "Run a lab plan: every proxy through its scenarios, results.json, report.md and report.html in DIR",
		Long: `Run a lab plan (built-ins: ` + strings.Join(plan.BuiltinNames(), ", ") + `; or a YAML file, see
loadlab lab plan show quick). Every scenario runs against every installed
proxy of the plan, one proxy at a time, under cgroup cpusets: the
max-sustainable-rate search of seed 002, fixed-rate runs, closed-loop runs.

Before starting, the run prints its budget (profiles found x scenarios x
steps, estimated time). Every step is written to DIR/results.json as it
finishes; running the same plan into the same DIR again resumes where the
last run stopped (Ctrl-C writes the step in flight, cleans up and exits 130).
At the end DIR/report.md, DIR/report.html (offline, charts embedded) and
DIR/charts/ are written and the tables are printed.

Plan fields can be narrowed here: --profiles, --scenarios (names or kinds),
--keys take subsets of the plan's; --step-scale multiplies every duration
(0.1 for a quick look); --net, --no-cgroups, --memory and the CPU flags
override the plan's settings (--server-cpus also replaces every scenario's
server_cpus).`,
		Example: `  loadlab lab run --plan quick --out results/quick
  loadlab lab run --plan seed-2026 --out results/seed --profiles caddy-stock,nginx-npm
  loadlab lab run --plan quick --out /tmp/look --scenarios sustained --step-scale 0.5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLab(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.plan, "plan", "quick", "built-in plan name ("+strings.Join(plan.BuiltinNames(), ", ")+") or YAML file")
	fl.StringVar(&f.out, "out", "", "output directory (default results/PLAN); the same directory resumes")
	fl.StringVar(&f.profiles, "profiles", "", "only these of the plan's proxy profiles, comma-separated")
	fl.StringVar(&f.scenarios, "scenarios", "", "only these of the plan's scenarios (names or kinds), comma-separated")
	fl.StringVar(&f.keys, "keys", "", "only these of the plan's certificate key types (p256, rsa2048, rsa4096)")
	fl.Float64Var(&f.stepScale, "step-scale", 1, "multiply every duration of the plan (steps, runs, cool-down cap, idle wait) by this")
	fl.StringVar(&f.net, "net", "", "network: loopback or netns (default: the plan's)")
	fl.BoolVar(&f.noCgroups, "no-cgroups", false, "run without cgroups: pin with CPU affinity only, measure via /proc")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs (list, or a count) for the proxy in every scenario (default: the plan's)")
	fl.StringVar(&f.backendCPUs, "backend-cpus", "", "CPUs (list, or a count) for the backend (default: the plan's)")
	fl.StringVar(&f.loadgenCPUs, "loadgen-cpus", "", "CPUs (list, or a count) for the load generator (default: the plan's)")
	fl.StringVar(&f.memory, "memory", "", "memory limit of each proxy's cgroup, e.g. 512MiB, 2GiB, 0 for none (default: the plan's)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the plan, print the layouts and the budget, run nothing")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the tables at the end")
	return cmd
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
