package plan

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/netns"
	"github.com/loadlab/loadlab/pin"
)

// Bounds that keep a typo from becoming a day-long run.
const (
	maxConnections = 100_000
	maxRuns        = 1000
	maxRounds      = 100
	maxRate        = 10e6 // the generator's own limit
)

// Validate checks every field of a resolved plan before any work starts.
// The error is one line: which field, what is wrong, what to write instead.
func (p *Plan) Validate() error {
	if err := p.validate(); err != nil {
		name := p.Name
		if name == "" {
			name = "(unnamed)"
		}
		return fmt.Errorf("plan %s: %v", name, err)
	}
	return nil
}

func (p *Plan) validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("name is empty: give the plan a name")
	}
	if len(p.Profiles) == 0 {
		return fmt.Errorf("profiles is empty: name at least one of %s", strings.Join(p.ProfileSet().Names(), ", "))
	}
	known := p.ProfileSet().Names()
	for i, name := range p.Profiles {
		if !slices.Contains(known, name) {
			return fmt.Errorf("unknown profile %q: use one of %s, or a profile file (./my-proxy.yaml, relative to the plan)", name, strings.Join(known, ", "))
		}
		if slices.Contains(p.Profiles[:i], name) {
			return fmt.Errorf("profile %s is listed twice", name)
		}
	}
	if err := checkKeys("keys", p.Keys); err != nil {
		return err
	}
	if p.Rounds < 1 || p.Rounds > maxRounds {
		return fmt.Errorf("rounds must be 1 to %d (got %d)", maxRounds, p.Rounds)
	}
	if c := p.Control; c != nil {
		switch {
		case math.IsNaN(c.Rate) || c.Rate <= 0 || c.Rate > maxRate:
			return fmt.Errorf("control: rate must be above 0 and at most %g req/s (got %g)", maxRate, c.Rate)
		case c.Connections < 1 || c.Connections > maxConnections:
			return fmt.Errorf("control: connections must be 1 to %d (got %d)", maxConnections, c.Connections)
		case c.Step <= 0 || c.Discard < 0 || c.Discard >= c.Step:
			return fmt.Errorf("control: step must be > 0 and discard >= 0 and shorter than step (got %v, %v)", c.Step, c.Discard)
		}
	}
	if p.Net != NetLoopback && p.Net != NetNetns {
		return fmt.Errorf("net %q: use loopback or netns", p.Net)
	}
	if p.MemoryLimit < 0 {
		return fmt.Errorf("memory_limit must be >= 0 (0 = no limit)")
	}
	for _, c := range []struct{ name, v string }{{"cpus.server", p.CPUs.Server}, {"cpus.backend", p.CPUs.Backend}, {"cpus.loadgen", p.CPUs.Loadgen}} {
		if c.name == "cpus.server" && c.v == AllCPUs {
			continue
		}
		if _, _, err := pin.ParseCountOrList(c.v); err != nil {
			return fmt.Errorf("%s: %v", c.name, err)
		}
	}
	if err := checkQuota("cpus.server_quota", p.CPUs.ServerQuota); err != nil {
		return err
	}
	if err := checkQuota("cpus.backend_quota", p.CPUs.BackendQuota); err != nil {
		return err
	}
	switch p.IO {
	case "", gen.IOEpoll, gen.IOUring, gen.IOAuto:
	default:
		return fmt.Errorf("io %q: use epoll, uring or auto (the generator's --io)", p.IO)
	}
	if p.Timeout <= 0 {
		return fmt.Errorf("timeout must be > 0 (got %v)", p.Timeout)
	}
	if err := p.IdleMemory.validate(); err != nil {
		return fmt.Errorf("idle_memory: %v", err)
	}
	if err := p.Search.validate(); err != nil {
		return fmt.Errorf("search: %v", err)
	}
	if err := p.Pass.validate(); err != nil {
		return fmt.Errorf("pass: %v", err)
	}
	if len(p.Scenarios) == 0 {
		return fmt.Errorf("scenarios is empty: add at least one of %s", strings.Join(Kinds(), ", "))
	}
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		for j, name := range s.Profiles {
			if !slices.Contains(p.Profiles, name) {
				return fmt.Errorf("scenarios[%d] (%s): profile %s is not in the plan's profiles (%s)", i, s.label(), name, strings.Join(p.Profiles, ", "))
			}
			if slices.Contains(s.Profiles[:j], name) {
				return fmt.Errorf("scenarios[%d] (%s): profile %s is listed twice", i, s.label(), name)
			}
		}
		if err := s.validate(); err != nil {
			return fmt.Errorf("scenarios[%d] (%s): %v", i, s.label(), err)
		}
		if err := s.validateTarget(p); err != nil {
			return fmt.Errorf("scenarios[%d] (%s): %v", i, s.label(), err)
		}
		if err := s.validateKnobs(p.Net); err != nil {
			return fmt.Errorf("scenarios[%d] (%s): %v", i, s.label(), err)
		}
		for j := range i {
			if p.Scenarios[j].Name == s.Name {
				return fmt.Errorf("scenarios[%d]: name %q is used twice: give one a different name", i, s.Name)
			}
		}
		if rf := s.RateFrom; rf != nil {
			j := slices.IndexFunc(p.Scenarios[:i], func(o Scenario) bool { return o.Name == rf.Scenario })
			if j < 0 || p.Scenarios[j].Method != MethodSearch {
				return fmt.Errorf("scenarios[%d] (%s): rate_from: %q is not a search scenario listed before it", i, s.label(), rf.Scenario)
			}
			if s.Keys[0] != p.Scenarios[j].Keys[0] {
				return fmt.Errorf("scenarios[%d] (%s): rate_from: %s searches with key %s, this scenario uses %s: give both the same keys", i, s.label(), rf.Scenario, p.Scenarios[j].Keys[0], s.Keys[0])
			}
			for _, name := range p.Profiles {
				if p.RunsOn(s, name) && !p.RunsOn(&p.Scenarios[j], name) {
					return fmt.Errorf("scenarios[%d] (%s): rate_from: %s does not run on %s: add it to %s's profiles", i, s.label(), rf.Scenario, name, rf.Scenario)
				}
			}
		}
	}
	return p.validateSeeds()
}

func checkKeys(field string, keys []string) error {
	for i, k := range keys {
		if !certs.KeyType(k).Valid() {
			return fmt.Errorf("%s: unknown key type %q: use p256, rsa2048 or rsa4096", field, k)
		}
		if slices.Contains(keys[:i], k) {
			return fmt.Errorf("%s: key type %s is listed twice", field, k)
		}
	}
	return nil
}

func (m IdleMemory) validate() error {
	switch {
	case m.Samples < 0 || m.Samples > 1000:
		return fmt.Errorf("samples must be 0 (skip) to 1000 (got %d)", m.Samples)
	case m.Quiet < 0:
		return fmt.Errorf("quiet must be >= 0 (got %v)", m.Quiet)
	case m.Samples > 1 && m.Every <= 0:
		return fmt.Errorf("every must be > 0 when samples > 1 (got %v)", m.Every)
	}
	return nil
}

// bad reports a float that is NaN or infinite.
func bad(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

func (s Search) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"start", s.Start}, {"max", s.Max}, {"min", s.Min}, {"growth", s.Growth}, {"precision", s.Precision}, {"step_down", s.StepDown}} {
		if bad(f.v) {
			return fmt.Errorf("%s must be a finite number", f.name)
		}
	}
	switch {
	case s.Start <= 0:
		return fmt.Errorf("start must be > 0 req/s (got %g)", s.Start)
	case s.Max < s.Start || s.Max > maxRate:
		return fmt.Errorf("max must be between start (%g) and %g req/s (got %g)", s.Start, maxRate, s.Max)
	case s.Min <= 0 || s.Min > s.Start:
		return fmt.Errorf("min must be > 0 and <= start %g (got %g)", s.Start, s.Min)
	case s.Growth < 1.05 || s.Growth > 100:
		return fmt.Errorf("growth must be between 1.05 and 100 (2 = doubling; got %g)", s.Growth)
	case s.Precision < 0.001 || s.Precision >= 1:
		return fmt.Errorf("precision must be at least 0.001 and below 1 (0.08 = 8%%; got %g)", s.Precision)
	case s.Step <= 0:
		return fmt.Errorf("step must be > 0 (got %v)", s.Step)
	case s.Discard < 0 || s.Discard >= s.Step:
		return fmt.Errorf("discard must be >= 0 and shorter than step %v (got %v)", s.Step, s.Discard)
	case s.ConfirmRuns < 1 || s.ConfirmRuns > maxRuns:
		return fmt.Errorf("confirm_runs must be 1 to %d (got %d)", maxRuns, s.ConfirmRuns)
	case s.ConfirmStep <= s.Discard:
		return fmt.Errorf("confirm_step must be longer than discard %v (got %v)", s.Discard, s.ConfirmStep)
	case s.StepDown <= 0 || s.StepDown >= 1:
		return fmt.Errorf("step_down must be between 0 and 1 (0.08 = 8%%; got %g)", s.StepDown)
	case s.MaxStepDowns < 0 || s.MaxStepDowns > maxRuns:
		return fmt.Errorf("max_step_downs must be 0 to %d (got %d)", maxRuns, s.MaxStepDowns)
	case s.CooldownCap < 0:
		return fmt.Errorf("cooldown_cap must be >= 0 (got %v)", s.CooldownCap)
	case s.CooldownMargin < 0:
		return fmt.Errorf("cooldown_margin must be >= 0 (got %d)", s.CooldownMargin)
	}
	return nil
}

func (p Pass) validate() error {
	switch {
	case p.P95 <= 0:
		return fmt.Errorf("p95 must be > 0 (got %v)", p.P95)
	case p.P99 <= 0:
		return fmt.Errorf("p99 must be > 0 (got %v)", p.P99)
	case bad(p.MaxErrors) || p.MaxErrors < 0 || p.MaxErrors > 1:
		return fmt.Errorf("max_errors must be a fraction between 0 and 1 (0.01 = 1%%; got %g)", p.MaxErrors)
	case bad(p.MinAchieved) || p.MinAchieved <= 0 || p.MinAchieved > 1:
		return fmt.Errorf("min_achieved must be a fraction between 0 and 1 (0.97 = 97%%; got %g)", p.MinAchieved)
	}
	return nil
}

func (s *Scenario) validate() error {
	if _, ok := kindDefaults[s.Kind]; !ok {
		return fmt.Errorf("unknown kind %q: use one of %s", s.Kind, strings.Join(Kinds(), ", "))
	}
	if strings.TrimSpace(s.Name) == "" || strings.ContainsAny(s.Name, "/\\ \t\n,") {
		return fmt.Errorf("name %q: use letters, digits, '-', '_' or '@'", s.Name)
	}
	switch s.Method {
	case MethodSearch, MethodFixed, MethodClosed:
	default:
		return fmt.Errorf("unknown method %q: use search, fixed or closed", s.Method)
	}
	if !strings.HasPrefix(s.Path, "/") || strings.ContainsAny(s.Path, " \t\r\n") {
		return fmt.Errorf("path %q must start with / and have no spaces", s.Path)
	}
	if len(s.Keys) == 0 {
		return fmt.Errorf("keys is empty")
	}
	if err := checkKeys("keys", s.Keys); err != nil {
		return err
	}
	if s.ServerCPUs != AllCPUs {
		if _, _, err := pin.ParseCountOrList(s.ServerCPUs); err != nil {
			return fmt.Errorf("server_cpus: %v", err)
		}
	}
	if s.Connections < 1 || s.Connections > maxConnections {
		return fmt.Errorf("connections must be 1 to %d (got %d)", maxConnections, s.Connections)
	}
	if s.Runs < 1 || s.Runs > maxRuns {
		return fmt.Errorf("runs must be 1 to %d (got %d)", maxRuns, s.Runs)
	}
	if r := s.Eff.Rounds; r < 1 || r > maxRounds {
		return fmt.Errorf("rounds must be 1 to %d (got %d)", maxRounds, r)
	}
	if s.Method != MethodSearch {
		if s.Duration <= 0 {
			return fmt.Errorf("duration must be > 0 (got %v)", s.Duration)
		}
		if s.Warmup < 0 || s.Warmup >= s.Duration {
			return fmt.Errorf("warmup must be >= 0 and shorter than duration %v (got %v)", s.Duration, s.Warmup)
		}
	}
	if t := s.Eff.PacingTolerance; t < 0 || t > Duration(time.Second) {
		return fmt.Errorf("pacing_tolerance must be between 0 and 1s (got %v)", t)
	}
	for _, r := range s.Rates {
		if bad(r) || r <= 0 || r > maxRate {
			return fmt.Errorf("rates: %g is not a rate: use req/s > 0 and <= %g", r, maxRate)
		}
	}
	if rf := s.RateFrom; rf != nil {
		switch {
		case s.Method != MethodFixed:
			return fmt.Errorf("rate_from only applies to method fixed (this scenario is %s)", s.Method)
		case len(s.Rates) > 0:
			return fmt.Errorf("rate_from replaces rates: give one of them")
		case bad(rf.Share) || rf.Share <= 0 || rf.Share > 1:
			return fmt.Errorf("rate_from: share must be in (0, 1] (got %g), e.g. 0.9 for 90%% of the rate found", rf.Share)
		}
	}
	if s.Method == MethodFixed && len(s.Rates) == 0 && s.RateFrom == nil {
		return fmt.Errorf("method fixed needs rates, e.g. rates: [1500, 5000], or rate_from")
	}
	if s.Method != MethodFixed && len(s.Rates) > 0 {
		return fmt.Errorf("rates only apply to method fixed (this scenario is %s)", s.Method)
	}
	if err := s.validateHosts(); err != nil {
		return err
	}
	if err := s.Eff.Search.validate(); err != nil {
		return fmt.Errorf("search: %v", err)
	}
	if err := s.Eff.Pass.validate(); err != nil {
		return fmt.Errorf("pass: %v", err)
	}
	return nil
}

// validateHosts checks backends, host and spread: a count the backend
// serves, a host it routes, a spread over two or more, and no backends
// for servers that serve their own files.
func (s *Scenario) validateHosts() error {
	n := s.NamedBackends()
	switch {
	case s.Backends < 0 || s.Backends > backend.MaxApps:
		return fmt.Errorf("backends must be 1 to %d (got %d)", backend.MaxApps, s.Backends)
	case s.IsOrigin() && (n > 0 || s.Host != "" || s.Spread):
		return fmt.Errorf("backends, host and spread need role proxy: an origin serves the lab's files itself, with no backend behind it")
	case s.Host != "" && s.Spread:
		return fmt.Errorf("host %s and spread: true are both set: spread sends every request to the next host in turn; keep one", s.Host)
	case s.Spread && n < 2:
		return fmt.Errorf("spread: true needs two backends or more to spread over (backends: %d)", max(s.Backends, 1))
	case s.Spread && s.Kind == KindH3:
		return fmt.Errorf("spread: true with kind h3: the HTTP/3 client sends one request line; spread over HTTP/1.1 or HTTP/2")
	}
	if s.Host == "" {
		return nil
	}
	if n == 0 {
		return fmt.Errorf("host %s needs named backends: set backends: 2 or more, or kind hosts", s.Host)
	}
	for i := 1; i <= n; i++ {
		if s.Host == backend.AppHost(i) {
			return nil
		}
	}
	return fmt.Errorf("host %q is not a routed host: use one of %s to %s", s.Host, backend.AppHost(1), backend.AppHost(n))
}

// checkQuota refuses a CPU quota that is not a number of cores the kernel
// takes (at least 0.01, at most cgroup.MaxCPUQuota); 0 is none.
func checkQuota(field string, q float64) error {
	if bad(q) || q < 0 || (q > 0 && q < 0.01) || q > cgroup.MaxCPUQuota {
		return fmt.Errorf("%s %g: give cores between 0.01 and %d (1 = one CPU, like docker --cpus 1), or 0 for none", field, q, cgroup.MaxCPUQuota)
	}
	return nil
}

// validateKnobs checks the scenario's quotas and sysctls: each key one a
// network namespace has its own copy of and present on this kernel, and
// netns mode (in loopback mode a sysctl would change the host's setting).
func (s *Scenario) validateKnobs(net string) error {
	if err := checkQuota("server_quota", s.Eff.ServerQuota); err != nil {
		return err
	}
	if err := checkQuota("backend_quota", s.Eff.BackendQuota); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Sysctls))
	for k := range s.Sysctls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := netns.CheckSysctl(k); err != nil {
			return fmt.Errorf("sysctls: %v", err)
		}
		if err := netns.CheckSysctlValue(k, s.Sysctls[k]); err != nil {
			return fmt.Errorf("sysctls: %v", err)
		}
		if net != NetNetns {
			return fmt.Errorf("sysctls: %s needs net: netns (in loopback mode it would change the host's setting)", k)
		}
	}
	return nil
}
