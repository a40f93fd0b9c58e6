package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/loadlab/loadlab/internal/units"
	"os"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/check"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/pin"
	"github.com/spf13/cobra"
)

// labCheckFlags are the flags of `loadlab lab check`.
type labCheckFlags struct {
	profiles    string
	keys        string
	net         string
	noCgroups   bool
	serverCPUs  string
	backendCPUs string
	loadgenCPUs string
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
	fl.StringVar(&f.profiles, "profiles", "", "comma-separated profiles to check (default: all; see loadlab lab proxies)")
	fl.StringVar(&f.keys, "keys", "p256,rsa2048,rsa4096", "certificate key types to check each profile with")
	fl.StringVar(&f.net, "net", session.NetLoopback, "network: loopback, or netns (backend, proxy and generator in their own namespaces joined by veth)")
	fl.BoolVar(&f.noCgroups, "no-cgroups", false, "run without cgroups: pin with CPU affinity only, measure via /proc")
	fl.StringVar(&f.serverCPUs, "server-cpus", "", "CPUs for the proxy, e.g. 0 or 0-1 (default: from the CPU plan)")
	fl.StringVar(&f.backendCPUs, "backend-cpus", "", "CPUs for the backend (default: from the CPU plan)")
	fl.StringVar(&f.loadgenCPUs, "loadgen-cpus", "", "CPUs for the load generator (default: from the CPU plan)")
	fl.StringVar(&f.memory, "memory", "2GiB", "memory limit of each proxy's cgroup, e.g. 512MiB, 2GiB, 0 for none")
	fl.StringVar(&f.dir, "dir", "results/lab-check", "run directory: certificates, proxy configs and logs")
	fl.StringVar(&f.proxyUser, "proxy-user", "", "user the proxies serve as (default: "+session.DefaultProxyUser+", created if missing, when run as root)")
	fl.DurationVar(&f.idleQuiet, "idle-quiet", 2*time.Second, "idle memory: quiet period after the one request (seed 001: 10m)")
	fl.IntVar(&f.idleSamples, "idle-samples", 5, "idle memory: readings, the median is reported (seed 001: 20)")
	fl.DurationVar(&f.idleEvery, "idle-every", 500*time.Millisecond, "idle memory: time between readings (seed 001: 30s)")
	fl.StringVar(&f.jsonOut, "json", "", "also write the rows as JSON to FILE (- for stdout)")
	return cmd
}

// parseLabCheck turns the flags into the check's configuration; errors are
// usage errors.
func parseLabCheck(f labCheckFlags) (check.Config, error) {
	var c check.Config
	profiles, err := labCheckProfiles(f.profiles)
	if err != nil {
		return c, err
	}
	c.Profiles = profiles
	keys, err := certs.ParseKeyTypes(f.keys)
	if err != nil {
		return c, usagef("--keys: %v", err)
	}
	if f.net != session.NetLoopback && f.net != session.NetNS {
		return c, usagef("--net %q: use loopback or netns", f.net)
	}
	var cpus [3]pin.CPUSet
	for i, v := range []struct{ flag, val string }{{"--server-cpus", f.serverCPUs}, {"--backend-cpus", f.backendCPUs}, {"--loadgen-cpus", f.loadgenCPUs}} {
		if v.val == "" {
			continue
		}
		if cpus[i], err = pin.ParseList(v.val); err != nil {
			return c, usagef("%s: %v", v.flag, err)
		}
	}
	mem, err := units.ParseBytes(f.memory)
	if err != nil {
		return c, usagef("--memory: %v (0 = no limit)", err)
	}
	if f.idleSamples < 1 || f.idleQuiet < 0 || f.idleEvery < 0 {
		return c, usagef("--idle-samples must be at least 1 and --idle-quiet, --idle-every not negative")
	}
	self, err := os.Executable()
	if err != nil {
		return c, fmt.Errorf("cannot find the loadlab binary: %v", err)
	}
	c.Session = session.Options{
		Dir: f.dir, Net: f.net, NoCgroups: f.noCgroups,
		ServerCPUs: cpus[0], BackendCPUs: cpus[1], LoadgenCPUs: cpus[2],
		MemoryLimit: mem, Keys: keys, Self: self, ProxyUser: f.proxyUser,
	}
	c.Idle = check.Idle{Quiet: f.idleQuiet, Samples: f.idleSamples, Every: f.idleEvery}
	return c, nil
}

// labCheckProfiles resolves --profiles; an unknown name is a usage error
// that lists the known ones.
func labCheckProfiles(list string) ([]proxy.Profile, error) {
	if strings.TrimSpace(list) == "" {
		return proxy.All(), nil
	}
	var out []proxy.Profile
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		p, err := proxy.Get(name)
		if err != nil {
			return nil, usagef("--profiles: %v", err)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, usagef("--profiles is empty: give names such as nginx-stock,caddy-stock")
	}
	return out, nil
}

// runLabCheck opens the lab, checks every profile and prints the rows.
func runLabCheck(cmd *cobra.Command, f labCheckFlags) error {
	c, err := parseLabCheck(f)
	if err != nil {
		return err
	}
	jsonW, closeJSON, err := openOut(f.jsonOut, cmd.OutOrStdout())
	if err != nil {
		return usagef("--json: %v", err)
	}
	defer closeJSON() //nolint:errcheck // early-return cleanup: the success path closes it and reports its error

	// First signal: cancel the run, which winds down and cleans up through
	// the deferred janitor; second signal: the janitor runs right away.
	var j cleanup.Janitor
	ctx, sig, stopSignals := signalContext(cmd.Context())
	defer stopSignals()
	ctx, stopJanitor := j.OnSignal(ctx)
	defer stopJanitor()
	defer func() {
		if err := j.Run(); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "loadlab: cleanup:", check.OneLine(err))
		}
	}()
	c.Session.Janitor = &j
	c.Session.Log = cmd.ErrOrStderr()
	c.Log = cmd.ErrOrStderr()

	rep, err := check.Run(ctx, c)
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return errors.New(check.OneLine(err))
	}
	if err := j.Run(); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "loadlab: cleanup:", check.OneLine(err))
	}
	rep.Interrupted = interrupted
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
		return exitError{code: sig.exitCode(), err: errors.New("lab check interrupted; everything it started was stopped and removed")}
	}
	if failed := rep.Failed(); len(failed) > 0 {
		return fmt.Errorf("lab check: %d profile(s) failed: %s (logs under %s)", len(failed), strings.Join(failed, ", "), rep.Dir)
	}
	return nil
}
