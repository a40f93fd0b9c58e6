package plan

import (
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
)

// Plan is one lab run: which proxies, which scenarios, how long, and what
// counts as a pass. The YAML names are the file format users edit.
type Plan struct {
	Name        string     `yaml:"name" json:"name"`
	Description string     `yaml:"description,omitempty" json:"description,omitempty"`
	Profiles    []string   `yaml:"profiles" json:"profiles"`                   // proxy profiles (loadlab lab proxies); missing binaries are skipped
	Keys        []string   `yaml:"keys,omitempty" json:"keys"`                 // certificate key types; the first is used by every scenario but handshake
	Net         string     `yaml:"net,omitempty" json:"net"`                   // loopback | netns
	MemoryLimit ByteSize   `yaml:"memory_limit,omitempty" json:"memory_limit"` // proxy cgroup memory limit (0 = none)
	CPUs        CPUs       `yaml:"cpus,omitempty" json:"cpus"`                 // CPU groups; a scenario may change the server's
	Timeout     Duration   `yaml:"timeout,omitempty" json:"timeout"`           // per request (not scaled by --step-scale)
	IO          string     `yaml:"io,omitempty" json:"io,omitempty"`           // the generator's --io for every step: epoll, uring or auto ("" = auto)
	IdleMemory  IdleMemory `yaml:"idle_memory,omitempty" json:"idle_memory"`   // idle memory measurement after each proxy's first start
	Search      Search     `yaml:"search,omitempty" json:"search"`             // max-sustainable-rate search defaults
	Pass        Pass       `yaml:"pass,omitempty" json:"pass"`                 // pass criteria defaults
	// Rounds runs every scenario's units this many times, one round after
	// another, each round in a new shuffled order (randomized multiple
	// interleaved trials): drift of the machine then spreads over every
	// proxy instead of landing on whichever ran last. A scenario may say
	// rounds: 1. Default 1.
	Rounds int `yaml:"rounds,omitempty" json:"rounds"`
	// Control measures the run's own noise once per round (nil: none).
	Control *Control `yaml:"control,omitempty" json:"control,omitempty"`
	// Seed shuffles the rounds' orders (0: a random seed, recorded in
	// results.json so the same orders can be run again).
	Seed      uint64     `yaml:"seed,omitempty" json:"seed,omitempty"`
	Scenarios []Scenario `yaml:"scenarios" json:"scenarios"`             // run in this order within a round
	Seeds     []Seed     `yaml:"seeds,omitempty" json:"seeds,omitempty"` // the seeds' findings the plan covers (seeds.go): the report's first table
	Notes     []string   `yaml:"-" json:"notes,omitempty"`               // what narrowing or the machine changed

	resolved bool // Resolve ran: a second call must not re-apply overrides over scaled values

	// profiles are the profiles the plan may name: the built-ins and the
	// profile files it or the command line named (profiles.go); nil: the
	// built-ins.
	profiles *proxy.Set
	// files maps a profile loaded from a file to the reference the plan
	// wrote (a path relative to the plan), for Marshal.
	files map[string]string
}

// CPUs are the CPU requests of the three groups, each a count ("1"), a CPU
// list ("0,2-3") or "" / "auto" for the planner's choice (pin.MakePlan).
//
// ServerQuota and BackendQuota put the proxy's and the backend's group
// under a CFS quota in cores on top of their cpuset (docker --cpus: 1.0 =
// one CPU's worth of time per 100 ms period, however many CPUs the cpuset
// has); 0 = none. A scenario may change the server's (server_quota).
type CPUs struct {
	Server       string  `yaml:"server,omitempty" json:"server"`
	Backend      string  `yaml:"backend,omitempty" json:"backend"`
	Loadgen      string  `yaml:"loadgen,omitempty" json:"loadgen"`
	ServerQuota  float64 `yaml:"server_quota,omitempty" json:"server_quota,omitempty"`
	BackendQuota float64 `yaml:"backend_quota,omitempty" json:"backend_quota,omitempty"`
}

// Control is the run's noise, measured: at the start of every round the
// generator against loadlab serve on the first layout's server CPUs (the
// generator's ceiling target, no proxy, no backend), one step at a fixed
// Rate and one closed loop, each Step long with Discard left out, both at
// Connections. The same load each round: what moves it between rounds is
// the machine. Each row's vs_control is its value over its round's.
type Control struct {
	Rate        float64  `yaml:"rate" json:"rate"`
	Connections int      `yaml:"connections" json:"connections"`
	Step        Duration `yaml:"step" json:"step"`
	Discard     Duration `yaml:"discard" json:"discard"`
}

// AllCPUs as server CPUs ("all") is every usable CPU, shared with the
// generator and the backend: with a server_quota, seed 001's "1 CPU" of
// docker --cpus on a machine with more.
const AllCPUs = "all"

// IdleMemory is seed 001's idle RAM method: one request, Quiet, then
// Samples readings Every apart; the median is reported. Samples 0 skips it.
type IdleMemory struct {
	Quiet   Duration `yaml:"quiet" json:"quiet"`
	Samples int      `yaml:"samples" json:"samples"`
	Every   Duration `yaml:"every" json:"every"`
}

// Search configures the max-sustainable-rate search (seed 002's method).
// Fields a plan leaves out take DefaultSearch's values; an explicit 0 is 0.
type Search struct {
	Start          float64  `yaml:"start" json:"start"`                     // first rate, req/s
	Max            float64  `yaml:"max" json:"max"`                         // doubling stops here; a pass at Max ends the search
	Min            float64  `yaml:"min" json:"min"`                         // bisection below Start gives up under this rate
	Growth         float64  `yaml:"growth" json:"growth"`                   // factor between probe steps (2 = doubling)
	Precision      float64  `yaml:"precision" json:"precision"`             // bisect until (fail-pass)/pass <= this
	Step           Duration `yaml:"step" json:"step"`                       // length of a search step, discard included
	Discard        Duration `yaml:"discard" json:"discard"`                 // leading part of every step left out (gen warmup)
	ConfirmRuns    int      `yaml:"confirm_runs" json:"confirm_runs"`       // passes in a row the found rate needs
	ConfirmStep    Duration `yaml:"confirm_step" json:"confirm_step"`       // length of a confirmation step
	StepDown       float64  `yaml:"step_down" json:"step_down"`             // a failed confirmation lowers the rate by this fraction
	MaxStepDowns   int      `yaml:"max_step_downs" json:"max_step_downs"`   // then the search gives up
	CooldownCap    Duration `yaml:"cooldown_cap" json:"cooldown_cap"`       // longest wait for TIME_WAIT to drain after a failed step
	CooldownMargin int      `yaml:"cooldown_margin" json:"cooldown_margin"` // TIME_WAIT sockets above the pre-run count still called drained
}

// Pass are the criteria every search step (and fixed-rate run) is judged by.
type Pass struct {
	P95         Duration `yaml:"p95" json:"p95"`                   // corrected p95 must be below
	P99         Duration `yaml:"p99" json:"p99"`                   // corrected p99 must be below
	MaxErrors   float64  `yaml:"max_errors" json:"max_errors"`     // failed + non-2xx share must be below (0.01 = 1%)
	MinAchieved float64  `yaml:"min_achieved" json:"min_achieved"` // 2xx/s must reach this share of the offered rate
}

// Scenario is one test of every profile. Kind picks what is measured,
// Method how: "search" (max sustainable rate, Runs whole searches), "fixed" (each of Rates, Runs
// times) or "closed" (closed loop at Connections, Runs times; the middle run
// by rate is reported).
type Scenario struct {
	Name       string   `yaml:"name,omitempty" json:"name"`                   // unique in the plan; default Kind
	Kind       string   `yaml:"kind" json:"kind"`                             // keepalive-1k | keepalive-1k-h2 | handshake | file-1m | h3 | fixed-rate | sustained | hosts
	Method     string   `yaml:"method,omitempty" json:"method"`               // search | fixed | closed (default by kind)
	Path       string   `yaml:"path,omitempty" json:"path"`                   // backend path (default by kind, or by size)
	Size       string   `yaml:"size,omitempty" json:"size,omitempty"`         // 1k | 100k | 1m: the body requested (replaces the kind's path; not with path)
	Scheme     string   `yaml:"scheme,omitempty" json:"scheme"`               // https (default) | http: plain HTTP on the server's HTTP port
	Role       string   `yaml:"role,omitempty" json:"role"`                   // proxy (default) | origin: which of the plan's profiles it runs on
	Keys       []string `yaml:"keys,omitempty" json:"keys"`                   // handshake: every key type; others: the plan's first
	Profiles   []string `yaml:"profiles,omitempty" json:"profiles,omitempty"` // only these of the plan's profiles (default: all of them)
	ServerCPUs string   `yaml:"server_cpus,omitempty" json:"server_cpus"`     // overrides cpus.server (scaling runs); "all" = every CPU, shared
	// ServerQuota and BackendQuota override cpus.server_quota and
	// cpus.backend_quota (cores; 0 = none).
	ServerQuota  *float64 `yaml:"server_quota,omitempty" json:"server_quota,omitempty"`
	BackendQuota *float64 `yaml:"backend_quota,omitempty" json:"backend_quota,omitempty"`
	// Sysctls are set in the proxy's network namespace before the proxy
	// starts (the listen-queue ones in the backend's too): only keys each
	// namespace has its own copy of (net.ipv4.*, net.ipv6.*,
	// net.core.somaxconn), and only in netns mode. The same profile with
	// other settings is another scenario with its own name.
	Sysctls map[string]string `yaml:"sysctls,omitempty" json:"sysctls,omitempty"`
	// Backends is how many backends sit behind the proxy (default 1, left
	// 0 in the resolved plan; kind hosts: 20, seed 001's twenty apps).
	// From 2, or in kind hosts, they
	// are named backends app01..appNN in one loadlab serve, and every
	// profile routes appNN.lab.test to backend NN (NamedBackends).
	Backends int `yaml:"backends,omitempty" json:"backends,omitempty"`
	// Host is the Host header of every request (seed 001's hey -host),
	// one of the routed hosts; default app01.lab.test. Not with Spread.
	Host string `yaml:"host,omitempty" json:"host,omitempty"`
	// Spread sends the requests round-robin over every routed host (a
	// targets file, gen's Targets) instead of to Host: each backend gets
	// its share. Needs two backends or more.
	Spread      bool     `yaml:"spread,omitempty" json:"spread,omitempty"`
	Connections int      `yaml:"connections,omitempty" json:"connections"`
	Duration    Duration `yaml:"duration,omitempty" json:"duration"` // fixed and closed runs
	Warmup      Duration `yaml:"warmup,omitempty" json:"warmup"`     // fixed and closed runs: leading part left out
	Runs        int      `yaml:"runs,omitempty" json:"runs"`         // per round: fixed: runs per rate; closed: runs; search: whole searches (the median rate found over all rounds is the row)
	// Rounds overrides the plan's rounds for this scenario (1: once, in
	// the first round; a 60 s cliff needs no second look).
	Rounds *int      `yaml:"rounds,omitempty" json:"rounds,omitempty"`
	Rates  []float64 `yaml:"rates,omitempty" json:"rates"` // fixed: offered rates, req/s
	// RateFrom, for method fixed instead of rates, derives the one offered
	// rate in the run: Share of the rate the same profile and key
	// sustained in the named search scenario of this plan (which must run
	// first). A quota then meets a load near the proxy's own capacity.
	RateFrom *RateFrom `yaml:"rate_from,omitempty" json:"rate_from,omitempty"`
	// PacingTolerance is the generator's pacing tolerance for the
	// scenario's open-loop steps (gen --pacing-tolerance): unset, 1 ms for
	// searches (their thresholds are hundreds of ms, and batched sends cost
	// the shared core far less) and 0 for fixed-rate runs (their sub-ms p99
	// matters); an explicit 0 is 0.
	PacingTolerance *Duration `yaml:"pacing_tolerance,omitempty" json:"pacing_tolerance,omitempty"`
	SearchOver      yaml.Node `yaml:"search,omitempty" json:"-"` // overrides of the plan's search fields
	PassOver        yaml.Node `yaml:"pass,omitempty" json:"-"`   // overrides of the plan's pass fields
	Eff             Effective `yaml:"-" json:"effective"`        // filled by Resolve
}

// RateFrom derives a fixed-rate scenario's rate from a search of the run
// (Scenario.RateFrom).
type RateFrom struct {
	Scenario string  `yaml:"scenario" json:"scenario"` // a search scenario of the plan
	Share    float64 `yaml:"share" json:"share"`       // of its rate found, in (0, 1]
}

// Effective are a scenario's search and pass settings after Resolve.
type Effective struct {
	Search          Search   `json:"search"`
	Pass            Pass     `json:"pass"`
	PacingTolerance Duration `json:"pacing_tolerance"`
	Rounds          int      `json:"rounds"`                  // rounds this scenario runs in (1..the plan's)
	ServerQuota     float64  `json:"server_quota,omitempty"`  // cores (0 = none)
	BackendQuota    float64  `json:"backend_quota,omitempty"` // cores (0 = none)
}

// Default pacing tolerances (see Scenario.PacingTolerance).
const (
	SearchPacingTolerance = Duration(time.Millisecond)
	FixedPacingTolerance  = Duration(0)
)

// Scenario kinds.
const (
	KindKeepalive = "keepalive-1k"
	// KindKeepaliveH2 is keepalive-1k over HTTP/2 (ALPN h2 on the TLS
	// listener), for the profiles that speak it.
	KindKeepaliveH2 = "keepalive-1k-h2"
	KindHandshake   = "handshake"
	KindFile        = "file-1m"
	KindH3          = "h3"
	KindFixedRate   = "fixed-rate"
	KindSustained   = "sustained"
	// KindHosts is seed 001's method: one proxy in front of many backends
	// reached by host name (Backends), a closed loop of 50 connections to
	// one of them (Host) or to all of them in turn (Spread), 3 runs of
	// 30 s, the row the middle run by 2xx/s with that run's p99.
	KindHosts = "hosts"
)

// RunsOn reports whether scenario s runs on profile (its own profiles
// list, or every profile of the plan of its role when it has none).
func (p *Plan) RunsOn(s *Scenario, profile string) bool {
	if len(s.Profiles) > 0 {
		return slices.Contains(s.Profiles, profile)
	}
	return p.profileRole(profile) == s.role()
}

// NamedBackends is the number of named backends the scenario's sessions
// start (lab/session Options.Backends): Backends in kind hosts or from
// 2, else 0, the lab's one backend served as its one site.
func (s *Scenario) NamedBackends() int {
	if s.Kind == KindHosts || s.Backends > 1 {
		return s.Backends
	}
	return 0
}

// HostHeader is the Host of the scenario's requests: Host, or the first
// app's with named backends ("" otherwise: the lab's one site).
func (s *Scenario) HostHeader() string {
	if s.Host != "" {
		return s.Host
	}
	if s.NamedBackends() > 0 {
		return backend.AppHost(1)
	}
	return ""
}

// Kinds lists the scenario kinds in their usual order.
func Kinds() []string {
	return []string{KindKeepalive, KindKeepaliveH2, KindHandshake, KindFile, KindH3, KindFixedRate, KindSustained, KindHosts}
}

// Methods.
const (
	MethodSearch = "search"
	MethodFixed  = "fixed"
	MethodClosed = "closed"
)

// Network modes.
const (
	NetLoopback = "loopback"
	NetNetns    = "netns"
)

// DefaultSearch is seed 002's method: start low, double until a step
// fails, bisect to 8%, 30 s steps with the first 6 s discarded, confirm 3
// times for 75 s, step down 8% on a failed confirmation, cool down up to
// 100 s after a failed step.
func DefaultSearch() Search {
	return Search{
		Start: 100, Max: 1_000_000, Min: 1, Growth: 2, Precision: 0.08,
		Step: Duration(30 * time.Second), Discard: Duration(6 * time.Second),
		ConfirmRuns: 3, ConfirmStep: Duration(75 * time.Second),
		StepDown: 0.08, MaxStepDowns: 10,
		CooldownCap: Duration(100 * time.Second), CooldownMargin: 50,
	}
}

// DefaultPass is seed 002's pass rule: p95 < 500 ms, p99 < 1 s, errors
// < 1%, at least 97% of the offered rate delivered.
func DefaultPass() Pass {
	return Pass{P95: Duration(500 * time.Millisecond), P99: Duration(time.Second), MaxErrors: 0.01, MinAchieved: 0.97}
}

// DefaultTimeout is the per-request timeout when the plan sets none.
const DefaultTimeout = 10 * time.Second
