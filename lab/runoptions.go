package lab

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/pin"
)

// RunOptions say which plan to run, where, and what to override: the
// flags of `loadlab lab run`, as given. Empty strings keep the plan's
// setting.
type RunOptions struct {
	Plan        string   // built-in name or YAML file
	Out         string   // results directory ("" = results/PLAN); the same one resumes
	Profiles    []string // only these of the plan's profiles; a profile file (./my.yaml) joins the plan
	Bins        []string // NAME=PATH: profile NAME runs the binary at PATH (--bin)
	Scenarios   []string // only these of its scenarios (names or kinds)
	Keys        string   // only these key types, comma-separated (certs.ParseKeyTypes)
	StepScale   float64  // multiply every duration (1 = as planned)
	Net         string   // plan.NetLoopback or plan.NetNetns
	NoCgroups   bool
	ServerCPUs  string // a list or a count (pin.ParseCountOrList)
	BackendCPUs string
	GenCPUs     string
	Memory      string // a byte size (plan.ByteSize)
	DryRun      bool   // print the layouts and the budget, run nothing
	Quiet       bool   // do not print the tables at the end

	Serve       string        // serve the live report page on this HOST:PORT while the run goes ("": no page)
	ServeLinger time.Duration // after the run, keep serving the final report this long
	AllowRemote bool          // allow a --serve address off loopback

	// Metrics, if set, hears every step (lab run --metrics-addr; the
	// caller serves it).
	Metrics *Metrics

	Stdout io.Writer // the tables
	Log    io.Writer // progress, notes, where the files went
}

// preparePlan loads the plan and applies the overrides; every error is a
// UsageError and comes before any work.
func preparePlan(o RunOptions) (*plan.Plan, error) {
	p, err := plan.Load(o.Plan)
	if err != nil {
		return nil, UsageError{err}
	}
	profiles, err := profileNames(o.Profiles, p.AddProfileFile)
	if err != nil {
		return nil, err
	}
	if err := setBinaries(p.ProfileSet(), o.Bins); err != nil {
		return nil, err
	}
	var keys []string
	if o.Keys != "" {
		kt, err := certs.ParseKeyTypes(o.Keys)
		if err != nil {
			return nil, usagef("--keys: %v", err)
		}
		for _, k := range kt {
			keys = append(keys, string(k))
		}
	}
	if err := p.Narrow(plan.Selection{Profiles: profiles, Scenarios: o.Scenarios, Keys: keys}); err != nil {
		return nil, UsageError{err}
	}
	if o.Net != "" {
		if o.Net != plan.NetLoopback && o.Net != plan.NetNetns {
			return nil, usagef("--net %q: use loopback or netns", o.Net)
		}
		p.Net = o.Net
	}
	for _, c := range []struct {
		flag, v string
		dst     *string
	}{{"--server-cpus", o.ServerCPUs, &p.CPUs.Server}, {"--backend-cpus", o.BackendCPUs, &p.CPUs.Backend}, {"--loadgen-cpus", o.GenCPUs, &p.CPUs.Gen}} {
		if c.v == "" {
			continue
		}
		if _, _, err := pin.ParseCountOrList(c.v); err != nil {
			return nil, usagef("%s: %v", c.flag, err)
		}
		*c.dst = c.v
	}
	if o.ServerCPUs != "" {
		for i := range p.Scenarios {
			if p.Scenarios[i].ServerCPUs != "" {
				p.Notes = append(p.Notes, fmt.Sprintf("scenario %s: server CPUs %s from --server-cpus instead of %s", p.Scenarios[i].Name, o.ServerCPUs, p.Scenarios[i].ServerCPUs))
				p.Scenarios[i].ServerCPUs = ""
			}
		}
	}
	if o.Memory != "" {
		var m plan.ByteSize
		if err := m.UnmarshalText([]byte(o.Memory)); err != nil {
			return nil, usagef("--memory: %v", err)
		}
		p.MemoryLimit = m
	}
	if math.IsNaN(o.StepScale) || o.StepScale != 1 {
		if err := p.Scale(o.StepScale); err != nil {
			return nil, UsageError{err}
		}
	}
	if err := p.Validate(); err != nil {
		return nil, usagef("%v (after the command-line overrides)", err)
	}
	return p, nil
}
