package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadlab/loadlab/lab"
)

func newLabRunCmd() *cobra.Command {
	f := &labRunFlags{}
	cmd := &cobra.Command{
		Use:   "run --plan quick|FILE --out DIR",
		Short: "Run a lab plan: every proxy through its scenarios, results.json, report.md and report.html in DIR",
		Long: `Run a lab plan (built-ins: ` + strings.Join(lab.PlanNames(), ", ") + `; or a YAML file, see
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
--keys take subsets of the plan's; a profile file in --profiles
(./my-nginx.yaml, see loadlab lab profile show) joins the plan and every
scenario of its role, and --bin NAME=PATH runs profile NAME with another
binary; --step-scale multiplies every duration
(0.1 for a quick look); --net, --no-cgroups, --memory and the CPU flags
override the plan's settings (--server-cpus also replaces every scenario's
server_cpus).

--serve HOST:PORT serves the live report while the run goes: the same
report as report.html, rebuilt after each step, with the step running and
the ETA on top; the page reloads itself every 5 s. The listener is bound
before anything runs (a port in use fails at once); after the run the
final report stays up for --serve-linger.`,
		Example: `  loadlab lab run --plan quick --out results/quick
  loadlab lab run --plan seed-2026 --out results/seed --profiles caddy-stock,nginx-npm
  loadlab lab run --plan quick --out results/mine --profiles nginx-keepalive,./my/nginx-keepalive2.yaml --scenarios sustained-pool
  loadlab lab run --plan quick --out /tmp/look --scenarios sustained --step-scale 0.5
  loadlab lab run --plan quick --serve 127.0.0.1:8090   # open http://127.0.0.1:8090/ while it runs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLab(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.plan, "plan", "quick", "built-in plan name ("+strings.Join(lab.PlanNames(), ", ")+") or YAML file")
	fl.StringVar(&f.out, "out", "", "output directory (default results/PLAN); the same directory resumes")
	fl.StringVar(&f.profiles, "profiles", "", "only these of the plan's profiles, comma-separated; a profile file (./my-nginx.yaml) joins every scenario of its role")
	fl.StringArrayVar(&f.bins, "bin", nil, "NAME=PATH: profile NAME runs the binary at PATH for this run (repeatable)")
	fl.StringVar(&f.scenarios, "scenarios", "", "only these of the plan's scenarios (names or kinds), comma-separated")
	fl.StringVar(&f.keys, "keys", "", "only these of the plan's certificate key types (p256, rsa2048, rsa4096)")
	fl.Float64Var(&f.stepScale, "step-scale", 1, "multiply every duration of the plan (steps, runs, cool-down cap, idle wait) by this")
	fl.StringVar(&f.net, "net", "", "network: loopback or netns (default: the plan's)")
	fl.BoolVar(&f.noCgroups, "no-cgroups", false, "run without cgroups: pin with CPU affinity only, measure via /proc")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs (list, or a count) for the proxy in every scenario (default: the plan's)")
	fl.StringVar(&f.backendCPUs, "backend-cpus", "", "CPUs (list, or a count) for the backend (default: the plan's)")
	fl.StringVar(&f.genCPUs, "loadgen-cpus", "", "CPUs (list, or a count) for the load generator (default: the plan's)")
	fl.StringVar(&f.memory, "memory", "", "memory limit of each proxy's cgroup, e.g. 512MiB, 2GiB, 0 for none (default: the plan's)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the plan, print the layouts and the budget, run nothing")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not print the tables at the end")
	f.serveFlags.register(fl)
	f.metrics.register(fl, "the lab run (the step running, the proxy's and backend's cgroups, the generator)")
	return cmd
}
