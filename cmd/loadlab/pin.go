package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadlab/loadlab/pin"
	"github.com/spf13/cobra"
)

// pinFlags holds the flags of `loadlab pin`.
type pinFlags struct {
	server, backend, loadgen string
	json                     bool
}

// newPinCmd builds `loadlab pin`.
func newPinCmd() *cobra.Command {
	var f pinFlags
	cmd := &cobra.Command{
		Use:   "pin",
		Short: "Show the CPU topology, the allowed CPUs and the default cpuset plan",
		Long: `Show each online CPU (core, package, hyperthread siblings), the CPUs this
process may use (taskset/cgroup cpuset), and how the lab would split them
between the server under test, the backend and the load generator.

Each --*-cpus flag takes a count ("2") or a CPU list ("0,2-3"; a single CPU
as "3-3"). Unset groups are planned around the others.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPin(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server-cpus", "", "server CPUs: a count or a CPU list (default: planned)")
	fl.StringVar(&f.backend, "backend-cpus", "", "backend CPUs: a count or a CPU list (default: planned)")
	fl.StringVar(&f.loadgen, "loadgen-cpus", "", "load generator CPUs: a count or a CPU list (default: planned)")
	fl.BoolVar(&f.json, "json", false, "print JSON instead of text")
	return cmd
}

// pinRequest turns the flags into a plan request.
func pinRequest(f pinFlags) (pin.PlanRequest, error) {
	var req pin.PlanRequest
	for _, g := range []struct {
		flag, val string
		count     *int
		cpus      *pin.CPUSet
	}{
		{"--server-cpus", f.server, &req.Server, &req.ServerCPUs},
		{"--backend-cpus", f.backend, &req.Backend, &req.BackendCPUs},
		{"--loadgen-cpus", f.loadgen, &req.Gen, &req.GenCPUs},
	} {
		n, cpus, err := pin.ParseCountOrList(g.val)
		if err != nil {
			return req, usagef("%s: %v", g.flag, err)
		}
		*g.count, *g.cpus = n, cpus
	}
	return req, nil
}

// pinReport is what `loadlab pin` prints.
type pinReport struct {
	Topology *pin.Topology `json:"topology"`
	Allowed  pin.CPUSet    `json:"allowed"`
	Plan     pin.Plan      `json:"plan"`
}

// runPin reads the machine, plans, and prints.
func runPin(w io.Writer, f pinFlags) error {
	req, err := pinRequest(f)
	if err != nil {
		return err
	}
	topo, err := pin.ReadTopology()
	if err != nil {
		return err
	}
	allowed, err := pin.Allowed()
	if err != nil {
		return err
	}
	plan, err := pin.MakePlan(topo, allowed, req)
	if err != nil {
		if req.Server+req.Backend+req.Gen > 0 || len(req.ServerCPUs)+len(req.BackendCPUs)+len(req.GenCPUs) > 0 {
			return usageError{err}
		}
		return err
	}
	r := pinReport{Topology: topo, Allowed: allowed, Plan: plan}
	if f.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return printPin(w, r)
}

// printPin writes the report as text.
func printPin(w io.Writer, r pinReport) error {
	packages := map[int]bool{}
	for _, c := range r.Topology.CPUs {
		packages[c.Package] = true
	}
	smt := "no SMT"
	if r.Topology.SMT() {
		smt = "SMT"
	}
	online := r.Topology.Online()
	fmt.Fprintf(w, "Topology: %d online CPUs (%s), %d cores, %d package(s), %s\n",
		len(online), online, len(r.Topology.Cores(online)), len(packages), smt)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  CPU\tCORE\tPACKAGE\tSIBLINGS")
	for _, c := range r.Topology.CPUs {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\n", c.ID, c.Core, c.Package, c.Siblings)
	}
	tw.Flush()
	for _, warn := range r.Topology.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", warn)
	}
	fmt.Fprintf(w, "Allowed: %s (this process's affinity: taskset/cgroup cpuset)\n", r.Allowed)
	fmt.Fprintln(w, "Plan:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  server\t%s\n", r.Plan.Server)
	fmt.Fprintf(tw, "  loadgen\t%s\n", r.Plan.Gen)
	fmt.Fprintf(tw, "  backend\t%s\n", r.Plan.Backend)
	tw.Flush()
	fmt.Fprintln(w, "Notes:")
	for _, n := range r.Plan.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	return nil
}
