package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/check"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/pin"
)

// Network modes of a check (lab run's come from its plan).
const (
	NetLoopback = session.NetLoopback
	NetNS       = session.NetNS
)

// DefaultProxyUser is the user the proxies serve as when none is given.
const DefaultProxyUser = session.DefaultProxyUser

// CheckOptions are the flags of `loadlab lab check`, as given.
type CheckOptions struct {
	Profiles    string   // comma-separated names and profile files (empty: every built-in)
	Bins        []string // NAME=PATH: profile NAME runs the binary at PATH (--bin)
	Keys        string   // comma-separated key types
	Net         string   // NetLoopback or NetNS
	NoCgroups   bool
	ServerCPUs  string // CPU lists (empty: from the CPU plan)
	BackendCPUs string
	GenCPUs     string
	Memory      string // each proxy's memory limit, a byte size (0: none)
	Dir         string // certificates, configs and logs
	ProxyUser   string
	IdleQuiet   time.Duration
	IdleSamples int
	IdleEvery   time.Duration

	Log io.Writer // progress
}

// Check starts each profile in turn under its cgroup and checks it
// (package check). Bad input is a UsageError, before any work. A signal on
// ctx stops what was started; the rows so far come back with an error
// wrapping ErrInterrupted. Everything the check started is stopped and
// removed on every return.
func Check(ctx context.Context, o CheckOptions) (check.Report, error) {
	c, err := parseCheck(o)
	if err != nil {
		return check.Report{}, err
	}
	// First signal: cancel the check, which winds down and cleans up
	// through the deferred janitor; second signal: the janitor runs at once.
	var j cleanup.Janitor
	ctx, stopJanitor := j.OnSignal(ctx)
	defer stopJanitor()
	defer func() {
		if err := j.Run(); err != nil {
			fmt.Fprintln(o.Log, "loadlab: cleanup:", check.OneLine(err))
		}
	}()
	c.Session.Janitor = &j

	rep, err := checkRun(ctx, c)
	interrupted := ctx.Err() != nil
	if err != nil && !interrupted {
		return rep, errors.New(check.OneLine(err))
	}
	if err := j.Run(); err != nil {
		fmt.Fprintln(o.Log, "loadlab: cleanup:", check.OneLine(err))
	}
	rep.Interrupted = interrupted
	if interrupted {
		return rep, fmt.Errorf("lab check %w; everything it started was stopped and removed", ErrInterrupted)
	}
	return rep, nil
}

// checkRun is check.Run; a variable for tests (the real one starts
// proxies).
var checkRun = check.Run

// parseCheck turns the options into the check's configuration; errors are
// UsageErrors.
func parseCheck(o CheckOptions) (check.Config, error) {
	var c check.Config
	set, profiles, err := checkProfiles(o.Profiles, o.Bins)
	if err != nil {
		return c, err
	}
	c.Profiles = profiles
	keys, err := certs.ParseKeyTypes(o.Keys)
	if err != nil {
		return c, usagef("--keys: %v", err)
	}
	if o.Net != session.NetLoopback && o.Net != session.NetNS {
		return c, usagef("--net %q: use loopback or netns", o.Net)
	}
	var cpus [3]pin.CPUSet
	for i, v := range []struct{ flag, val string }{{"--server-cpus", o.ServerCPUs}, {"--backend-cpus", o.BackendCPUs}, {"--loadgen-cpus", o.GenCPUs}} {
		if v.val == "" {
			continue
		}
		if cpus[i], err = pin.ParseList(v.val); err != nil {
			return c, usagef("%s: %v", v.flag, err)
		}
	}
	mem, err := units.ParseBytes(o.Memory)
	if err != nil {
		return c, usagef("--memory: %v (0 = no limit)", err)
	}
	if o.IdleSamples < 1 || o.IdleQuiet < 0 || o.IdleEvery < 0 {
		return c, usagef("--idle-samples must be at least 1 and --idle-quiet, --idle-every not negative")
	}
	self, err := os.Executable()
	if err != nil {
		return c, fmt.Errorf("cannot find the loadlab binary: %w", err)
	}
	c.Session = session.Options{
		Dir: o.Dir, Net: o.Net, NoCgroups: o.NoCgroups,
		ServerCPUs: cpus[0], BackendCPUs: cpus[1], GenCPUs: cpus[2],
		MemoryLimit: mem, Keys: keys, Self: self, ProxyUser: o.ProxyUser, Profiles: set,
	}
	c.Idle = check.Idle{Quiet: o.IdleQuiet, Samples: o.IdleSamples, Every: o.IdleEvery}
	c.Session.Log, c.Log = o.Log, o.Log
	return c, nil
}

// checkProfiles is profileSet for a check: a profile file whose binary is
// missing or refused is a UsageError too, before anything starts (a
// built-in's is a row that says how to install it).
func checkProfiles(list string, bins []string) (*proxy.Set, []proxy.Profile, error) {
	set, profiles, err := profileSet(list, bins)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range profiles {
		if !p.Source.Builtin {
			if _, err := p.Find(); err != nil {
				return nil, nil, usagef("profile %s (%s): %v", p.Name, p.Source.File, err)
			}
		}
	}
	return set, profiles, nil
}
