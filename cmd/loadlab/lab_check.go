package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

// labCheckFlags are the flags of `loadlab lab check`.
type labCheckFlags struct {
	profiles    string
	bins        []string
	keys        string
	net         string
	noCgroups   bool
	serverCPUs  string
	backendCPUs string
	genCPUs     string
	memory      string
	dir         string
	proxyUser   string
	idleQuiet   time.Duration
	idleSamples int
	idleEvery   time.Duration
	jsonOut     string
}

func newLabCheckCmd() *cobra.Command {
	var f labCheckFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Start each installed proxy profile under its cgroup and check it: byte-identical bodies per key type, idle memory, restart",
		Long: `Start each installed proxy profile in turn, inside its own cgroup (cpuset and
memory limit) as an unprivileged user, against the lab's backend, and check it:

  - /1k and /1m fetched through the proxy are byte-identical (sha256) to the
    backend's, over HTTPS with each key type, over h2, and over HTTP/3 where
    the profile serves it
  - idle memory as seed 001 measured it (one request, a quiet period, the
    median of N readings of the cgroup's memory), shortened here
  - a restart: seconds until it answers again, and whether the served
    certificate is unchanged

One row per profile; a proxy that is not installed is a row that says how to
install it. Exit 1 when an installed profile fails a check, 130 on Ctrl-C
(everything started is stopped and removed on every exit path).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLabCheck(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.profiles, "profiles", "", "comma-separated profiles to check: built-in names and profile files (./my-nginx.yaml) (default: every built-in; see loadlab lab proxies)")
	fl.StringArrayVar(&f.bins, "bin", nil, "NAME=PATH: profile NAME runs the binary at PATH (repeatable)")
	fl.StringVar(&f.keys, "keys", "p256,rsa2048,rsa4096", "certificate key types to check each profile with")
	fl.StringVar(&f.net, "net", lab.NetLoopback, "network: loopback, or netns (backend, proxy and generator in their own namespaces joined by veth)")
	fl.BoolVar(&f.noCgroups, "no-cgroups", false, "run without cgroups: pin with CPU affinity only, measure via /proc")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs for the proxy, e.g. 0 or 0-1 (default: from the CPU plan)")
	fl.StringVar(&f.backendCPUs, "backend-cpus", "", "CPUs for the backend (default: from the CPU plan)")
	fl.StringVar(&f.genCPUs, "loadgen-cpus", "", "CPUs for the load generator (default: from the CPU plan)")
	fl.StringVar(&f.memory, "memory", "2GiB", "memory limit of each proxy's cgroup, e.g. 512MiB, 2GiB, 0 for none")
	fl.StringVar(&f.dir, "dir", "results/lab-check", "run directory: certificates, proxy configs and logs")
	fl.StringVar(&f.proxyUser, "proxy-user", "", "user the proxies serve as (default: "+lab.DefaultProxyUser+", created if missing, when run as root)")
	fl.DurationVar(&f.idleQuiet, "idle-quiet", 2*time.Second, "idle memory: quiet period after the one request (seed 001: 10m)")
	fl.IntVar(&f.idleSamples, "idle-samples", 5, "idle memory: readings, the median is reported (seed 001: 20)")
	fl.DurationVar(&f.idleEvery, "idle-every", 500*time.Millisecond, "idle memory: time between readings (seed 001: 30s)")
	fl.StringVar(&f.jsonOut, "json", "", "also write the rows as JSON to FILE (- for stdout)")
	return cmd
}

// runLabCheck checks every profile (lab.Check) and prints the rows.
func runLabCheck(cmd *cobra.Command, f labCheckFlags) error {
	jsonW, closeJSON, err := openOut(f.jsonOut, cmd.OutOrStdout())
	if err != nil {
		return usagef("--json: %v", err)
	}
	defer closeJSON() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error

	ctx, sig, stopSignals := signalContext(cmd.Context())
	defer stopSignals()
	rep, err := lab.Check(ctx, lab.CheckOptions{
		Profiles: f.profiles, Bins: f.bins, Keys: f.keys, Net: f.net, NoCgroups: f.noCgroups,
		ServerCPUs: f.serverCPUs, BackendCPUs: f.backendCPUs, GenCPUs: f.genCPUs,
		Memory: f.memory, Dir: f.dir, ProxyUser: f.proxyUser,
		IdleQuiet: f.idleQuiet, IdleSamples: f.idleSamples, IdleEvery: f.idleEvery,
		Log: cmd.ErrOrStderr(),
	})
	interrupted := errors.Is(err, lab.ErrInterrupted)
	if err != nil && !interrupted {
		return err
	}
	rep.WriteTable(cmd.OutOrStdout())
	if jsonW != nil {
		enc := json.NewEncoder(jsonW)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("write --json: %v", err)
		}
		if err := closeJSON(); err != nil {
			return fmt.Errorf("write --json: %v", err)
		}
	}
	if interrupted {
		return exitError{code: sig.exitCode(), err: err}
	}
	if failed := rep.Failed(); len(failed) > 0 {
		return fmt.Errorf("lab check: %d profile(s) failed: %s (logs under %s)", len(failed), strings.Join(failed, ", "), rep.Dir)
	}
	return nil
}
