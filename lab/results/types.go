package results

import (
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/pin"
)

// Version is the results.json format version.
const Version = 1

// FileName is the name of the results file in the output directory.
const FileName = "results.json"

// File is results.json. Field names are a contract: add, never rename.
type File struct {
	Version  int         `json:"version"`
	PlanHash string      `json:"plan_hash"` // what must match for a resume
	Plan     *plan.Plan  `json:"plan"`      // resolved, narrowed, scaled
	Options  RunOptions  `json:"options"`
	Started  time.Time   `json:"started"`
	Updated  time.Time   `json:"updated"`
	Finished bool        `json:"finished"`
	Machine  Machine     `json:"machine"`
	Layouts  []Layout    `json:"layouts"`
	Proxies  []ProxyInfo `json:"proxies"`
	// Profiles are what ran for each profile (profiles.go): its profile
	// file, binary and rendered config, one record per profile.
	Profiles []ProfileRecord `json:"profiles,omitempty"`
	// LoadlabSHA256 is the SHA-256 of the loadlab binary that started
	// the run: a resume with another binary is refused.
	LoadlabSHA256 string       `json:"loadlab_sha256,omitempty"`
	Checks        []ProxyCheck `json:"checks,omitempty"` // the checks of each profile and key type (checks.go): the report's Checks section
	// Configs5Hosts are the profiles' configs rendered for five host names
	// (seed 001's "lines for five hostnames"), one per profile of the
	// plan, kept under the run directory.
	Configs5Hosts []ConfigSize `json:"configs_5_hosts,omitempty"`
	Units         []*Unit      `json:"units"`
	// Ceilings are the generator's own limits: per search scenario, key
	// type and layout, the same rate search against loadlab serve on the
	// proxy's CPUs (no proxy), run before the first unit's search.
	Ceilings []*Unit `json:"ceilings,omitempty"`
	// Rounds are the plan's rounds in the order they ran: each round runs
	// every scenario's units once, scenario by scenario, the units of a
	// scenario in the order Order gives, shuffled from RoundSeed.
	RoundSeed uint64   `json:"round_seed,omitempty"`
	Rounds    []Round  `json:"rounds,omitempty"`
	Notes     []string `json:"notes,omitempty"` // what the run could not do as planned, and why
}

// Round is one round of a plan with rounds: the unit IDs in the order it
// ran them (Order), and whether it ran to its end (its remeasure
// included: a round done is never measured again).
type Round struct {
	Round int      `json:"round"` // 1..N
	Order []string `json:"order"`
	Done  bool     `json:"done"`
	// Remeasure are the units the round chose to measure again at its end
	// (its noisiest, at most scenario.MaxRemeasure), recorded before they
	// run: a resumed run finishes them and chooses no other.
	Remeasure []string `json:"remeasure,omitempty"`
	// Control is the round's control (plan control): the generator
	// against loadlab serve, no proxy, measured before the round's first
	// unit: its step at the control's fixed rate (run 1) and its closed
	// loop (run 2).
	Control *Unit `json:"control,omitempty"`
	// ControlAfter (the last round only) is the control measured after
	// the round's units: the end of the last round, as the next round's
	// control is the end of the others.
	ControlAfter *Unit `json:"control_after,omitempty"`
	// ControlMoved is how far the control's closed loop moved across the
	// round, from its control to the one that ended it: (end - start) /
	// start (0: not both measured). Beyond NoisyControl either way, every
	// step of the round is flagged noisy.
	ControlMoved float64 `json:"control_moved,omitempty"`
}

// RunOptions are the command-line settings outside the plan that change
// what is measured.
type RunOptions struct {
	NoCgroups bool `json:"no_cgroups"`
}

// Machine describes where the run happened.
type Machine struct {
	Hostname   string     `json:"hostname"`
	Kernel     string     `json:"kernel"`
	GoVersion  string     `json:"go_version"`
	Allowed    pin.CPUSet `json:"allowed_cpus"`
	Net        string     `json:"net"`
	PortRange  [2]int     `json:"port_range"`   // net.ipv4.ip_local_port_range
	TwReuse    int        `json:"tcp_tw_reuse"` // net.ipv4.tcp_tw_reuse
	FinTimeout int        `json:"tcp_fin_timeout"`
	// How tcp_tw_reuse=1 works here: a connect() may take a port whose
	// TIME_WAIT entry's last timestamp is older than tcp_tw_reuse_delay
	// (ms; Linux 6.13+, before that 1 s) and only with TCP timestamps on.
	TwReuseDelayMs int `json:"tcp_tw_reuse_delay_ms,omitempty"`
	Timestamps     int `json:"tcp_timestamps"`
	MaxTwBuckets   int `json:"tcp_max_tw_buckets"` // TIME_WAIT entries the kernel keeps (beyond: TCPTimeWaitOverflow)
}

// Ports is the size of the ephemeral port range (0 if unknown).
func (m Machine) Ports() int {
	if m.PortRange[1] < m.PortRange[0] || m.PortRange[0] == 0 {
		return 0
	}
	return m.PortRange[1] - m.PortRange[0] + 1
}

// Layout is one set of CPU groups (the plan's, or a scenario's
// server_cpus for the scaling runs).
//
// Its CPU groups are the run's one CPU plan (pin.Plan: server, backend,
// loadgen, notes), made once from the layout and used as is by every
// session on it.
type Layout struct {
	ID      string `json:"id"`      // e.g. "1cpu"
	Request string `json:"request"` // what the plan asked for the server
	pin.Plan
}

// ProxyInfo is one proxy profile with one key type on one layout: its
// version and idle memory (seed 001's method, measured after its first
// start).
type ProxyInfo struct {
	Layout  string `json:"layout"`
	Profile string `json:"profile"`
	Proxy   string `json:"proxy"`
	Key     string `json:"key"`
	Version string `json:"version"`
	// Routes is the number of host routes the proxy had (the scenario's
	// named backends, seed 001's twenty), 0 for the lab's one site: its
	// idle memory is measured once per number of routes.
	Routes      int      `json:"routes,omitempty"`
	IdleMemory  uint64   `json:"idle_memory"`  // median memory.current (v1 usage_in_bytes), page cache included: the seeds' total, bytes (0 = not measured)
	IdleSamples []uint64 `json:"idle_samples"` // every memory.current reading
	Error       string   `json:"error,omitempty"`

	// What the proxy needs idle (the headline): anonymous + kernel
	// memory from memory.stat and kmem, and the page cache charged to its
	// group, which depends on what read the binary's pages first.
	IdleNeed        uint64   `json:"idle_anon_kernel"`         // median, bytes
	IdleFile        uint64   `json:"idle_page_cache"`          // median, bytes
	IdleNeedSamples []uint64 `json:"idle_anon_kernel_samples"` // every reading
}

// ConfigSize is one profile's config rendered with five host routes
// (app01.lab.test to app05.lab.test, each to its own backend): the files,
// kept under Dir, and their lines that are neither blank nor a comment
// (proxy.ConfigLines), per file and summed.
type ConfigSize struct {
	Profile string            `json:"profile"`
	Dir     string            `json:"dir"` // relative to the run directory
	Files   []proxy.FileLines `json:"files"`
	Lines   int               `json:"config_lines_5_hosts"`
	Error   string            `json:"error,omitempty"` // the profile could not be rendered
}

// ConfigSize returns the five-host rendering of profile, or nil.
func (f *File) ConfigSize(profile string) *ConfigSize {
	for i := range f.Configs5Hosts {
		if f.Configs5Hosts[i].Profile == profile {
			return &f.Configs5Hosts[i]
		}
	}
	return nil
}

// Unit statuses.
const (
	StatusPending     = "pending"
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusSkipped     = "skipped"
	StatusError       = "error"
)

// NoisySteal is the steal share (of the lab's CPUs over a step) above
// which the step is flagged noisy. Measured on the 2-core development VM
// on 2026-12-02: over 60 one-second windows of a quiet minute the steal of
// both CPUs was median 0%, p95 0.5%, max 0.5%; earlier stops saw 1-5% in
// noisy minutes, when steps disagreed. 2% is four times the quiet maximum:
// a 3 s step on 2 CPUs that loses 120 ms to the host.
const NoisySteal = 0.02

// NoisyControl is how far the control's closed loop may move across a
// round (from the round's control to the next, the smaller of the two
// the base) before every step of the round is flagged noisy: the same
// load on the same target, moved by the machine alone. Measured on the
// 2-core development VM on 2026-12-02: across the rounds of one quiet make
// lab the control's closed loop moved +11.5% and -3.5% (129,335, 144,251
// and 139,137 2xx/s); on a noisier day one run's rounds spread ±19%
// around their median, while the proxies' medians moved up to 11%. 20% is
// beyond the quiet moves and catches a round that lost a fifth of the
// machine.
const NoisyControl = 0.2

// NoisyForeign is the CPU (cores) that something outside the lab may use
// of the lab's CPUs during a step before the step is flagged noisy: a
// process that competes with the generator, the proxy or the backend for
// their CPUs moves their numbers. Measured on the 2-core development VM on
// 2026-12-02 (6 fixed-rate steps of 3 s at 3,000 req/s on nginx-stock):
// quiet, foreign 0.04 to 0.34 cores (the cgroups' 1 s samples over the
// measured window against /proc/stat over the whole step: about ±0.35 is
// the measure's own noise, negative values included); with a spinner on
// the generator's CPU, 0.43 and 0.63 over the two steps it overlapped.
// 0.5 catches a disturbance of half a core or more and no quiet step.
const NoisyForeign = 0.5

// HostCPU is the steal and iowait time of the lab's CPUs over one step,
// each a share of their time (CPUs x wall time), 0..1.
type HostCPU struct {
	CPUs   int     `json:"cpus"`
	Steal  float64 `json:"steal"`
	IOWait float64 `json:"iowait"`
	// Busy is the lab's CPUs' busy time over the step (cores: user,
	// nice, system, irq), Self the generator's process's CPU time (cores),
	// Foreign what is left of Busy after Self and the proxy's and the
	// backend's cgroups: CPU that something outside the lab took.
	Busy    float64 `json:"busy_cores,omitempty"`
	Self    float64 `json:"self_cores,omitempty"`
	Foreign float64 `json:"foreign_cores,omitempty"`
}

// RateFrom is a fixed-rate unit's rate derived from a search of the run:
// Rate = Share x Found, Found being the rate Unit's search sustained.
type RateFrom struct {
	Unit  string  `json:"unit"`  // ID of the search unit
	Found float64 `json:"found"` // its rate found, req/s
	Share float64 `json:"share"`
	Rate  float64 `json:"rate"` // the rate offered here, req/s
}

// Unit is one scenario against one proxy profile with one key type on one
// layout.
type Unit struct {
	ID       string         `json:"id"`
	Scenario string         `json:"scenario"`
	Family   string         `json:"family"` // scenarios that differ only in server CPUs share a family (the first one's name)
	Kind     string         `json:"kind"`
	Method   string         `json:"method"`
	Profile  string         `json:"profile"`
	Proxy    string         `json:"proxy"`
	Key      string         `json:"key"`
	Layout   string         `json:"layout"`
	Status   string         `json:"status"`
	Reason   string         `json:"reason,omitempty"` // why skipped or failed
	Search   *search.Result `json:"search,omitempty"` // with runs > 1: the search of the median rate found (Searches[SearchRun-1])
	// Searches are every search of a scenario with runs > 1, in run
	// order; their steps carry run 1..N. Empty for one search.
	Searches  []*search.Result `json:"searches,omitempty"`
	SearchRun int              `json:"search_run,omitempty"` // which of Searches is Search (1-based)
	// VsControl is the unit's value in each round over its round's
	// control's (control.go): what drift of the machine moves alike in
	// both cancels out.
	VsControl *VsControl `json:"vs_control,omitempty"`
	// Remeasured are the unit's rounds measured again at the end of their
	// round because a step of theirs was noisy (Step.Noisy): the first
	// measurement's steps and searches, kept for the record; Steps and
	// Searches hold the second. Read as results, they are not.
	Remeasured []Remeasured `json:"remeasured,omitempty"`
	// RoundsDone counts the rounds whose part of the unit ran to its end
	// (plan rounds: a unit is done after its scenario's last round).
	RoundsDone int     `json:"rounds_done,omitempty"`
	Ceiling    string  `json:"ceiling,omitempty"`    // ID of the generator ceiling measured for this unit's scenario (File.Ceilings)
	MaxRate    float64 `json:"search_max,omitempty"` // the search's upper bound: the plan's max, or the ceiling when the generator bounded it
	// RateFrom, for a fixed-rate scenario with rate_from, is where its
	// rate came from in this run.
	RateFrom *RateFrom `json:"rate_from,omitempty"`
	Steps    []*Step   `json:"steps"`
	// LimitedBy is the part that limited the unit's reported step: for a
	// search the first failed step above the rate found (else the step its
	// row shows); fixed and closed rows read their own step's.
	LimitedBy  string    `json:"limited_by,omitempty"`
	LimitedWhy string    `json:"limited_by_why,omitempty"`
	ErrorLog   *ErrorLog `json:"error_log,omitempty"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished"`
}

// Remeasured is a unit's round measured again (Unit.Remeasured).
type Remeasured struct {
	Round    int              `json:"round"`
	Why      string           `json:"why"` // the first noisy step's noisy_why
	Steps    []*Step          `json:"steps"`
	Searches []*search.Result `json:"searches,omitempty"`
}

// ErrorLog counts known causes in the proxy's error log after the unit.
type ErrorLog struct {
	Lines   int               `json:"lines"`
	Causes  map[string]int    `json:"causes"`
	Samples map[string]string `json:"samples,omitempty"` // first line of each cause
	// CutLines counts lines longer than the buffer the log is read
	// through (64 KiB): each was judged by its start.
	CutLines int `json:"cut_lines,omitempty"`
}

// Step phases besides the search's.
const (
	PhaseRun = "run" // a fixed-rate or closed-loop run
)

// Step is one generator run.
type Step struct {
	Seq            int             `json:"seq"`
	Phase          string          `json:"phase"`             // probe, bisect, confirm, run
	Rate           float64         `json:"rate"`              // offered req/s (0 = closed loop)
	Confirm        int             `json:"confirm,omitempty"` // confirmation 1..N
	Run            int             `json:"run,omitempty"`     // run 1..N at this rate; search steps: the search 1..N they belong to (runs > 1); over rounds the runs go on counting (round 2 of runs: 1 is run 2)
	Round          int             `json:"round,omitempty"`   // the plan's round 1..N the step ran in (0: a plan of one round)
	Connections    int             `json:"connections"`
	Verdict        string          `json:"verdict"` // pass, fail, gen-limited, died (search.Verdict)
	Reasons        []string        `json:"reasons,omitempty"`
	Interrupted    bool            `json:"interrupted"`
	Error          string          `json:"error,omitempty"` // the run could not start
	Started        time.Time       `json:"started"`
	Result         *result.Result  `json:"result,omitempty"`
	Spectrum       []SpectrumPoint `json:"spectrum,omitempty"` // corrected latency by percentile
	Proxy          []ProxySample   `json:"proxy_samples,omitempty"`
	ProxySum       ProxySummary    `json:"proxy"`
	Backend        BackendDelta    `json:"backend"`
	CooldownS      float64         `json:"cooldown_s"`                // waited after this step
	CooldownTW     [2]int          `json:"cooldown_time_wait"`        // TIME_WAIT before and after the wait
	CooldownCapped bool            `json:"cooldown_capped,omitempty"` // the wait ended at its cap with TIME_WAIT still above the limit

	// A proxy or backend that died during the step (faults.go). Such a
	// step ends the unit's search: its numbers measure a dead server.
	ProxyExit   *ProcessExit `json:"proxy_exit,omitempty"`
	BackendExit *ProcessExit `json:"backend_exit,omitempty"`

	// The state the step started in. In netns mode every step starts in
	// fresh namespaces (RenewS: the time that took) and StartTimeWait
	// must be 0; in loopback mode it is what the cool-down left.
	RenewS            float64 `json:"renew_s,omitempty"`       // fresh namespaces, backend and proxy restarted (netns mode)
	StartTimeWait     int     `json:"start_time_wait"`         // TIME_WAIT in the proxy's and the generator's namespaces when the step started (-1 = not counted)
	StartChecked      bool    `json:"start_checked,omitempty"` // StartTimeWait was counted (results of older versions lack it)
	StartUnclean      bool    `json:"start_unclean,omitempty"` // StartTimeWait was above the limit (netns: 0; loopback: the pre-run count plus cooldown_margin)
	BackendReqsBefore uint64  `json:"backend_requests_before"` // requests the running backend had served before the step (through the proxy: the lab's own probes and earlier steps in these namespaces)

	// The scenario's kernel settings as the proxy's namespace read them
	// back at the start of the step, and how the namespace's TcpExt
	// counters (/proc/net/netstat) grew over the step (TCPExtCounters).
	Sysctls map[string]string `json:"sysctls,omitempty"`
	TCPExt  map[string]uint64 `json:"tcp_ext,omitempty"`
	// The backend's cgroup sampled like the proxy's (no TIME_WAIT).
	BackendSamples []ProxySample `json:"backend_samples,omitempty"`
	BackendSum     ProxySummary  `json:"backend_summary"`
	// ProxyAddrErrors are the "Cannot assign requested address" lines the
	// proxy logged during the step (its local ports ran out).
	ProxyAddrErrors int `json:"proxy_addr_not_avail,omitempty"`
	// Host is the machine's steal and iowait time over the generator's run
	// (/proc/stat of the CPUs the lab may use): how much of the machine
	// the host took while the step measured.
	Host *HostCPU `json:"host,omitempty"`
	// Noisy marks a step measured while the host took more than
	// NoisySteal of the lab's CPUs (Host.Steal); NoisyWhy says by how much.
	Noisy    bool   `json:"noisy,omitempty"`
	NoisyWhy string `json:"noisy_why,omitempty"`
	// LimitedBy is the part that limited the step (LimitOf: generator,
	// ports, backend, proxy, none), LimitedWhy the numbers that say so.
	LimitedBy  string `json:"limited_by,omitempty"`
	LimitedWhy string `json:"limited_by_why,omitempty"`
}

// TCPExtCounters are the TcpExt counters a step records: TIME_WAIT entries
// made (TW), reused for a new outgoing connection (TWRecycled), killed
// early (TWKilled) and not made because tcp_max_tw_buckets was reached
// (TCPTimeWaitOverflow), and listen queues that overflowed (ListenOverflows,
// ListenDrops).
var TCPExtCounters = []string{"TW", "TWRecycled", "TWKilled", "TCPTimeWaitOverflow", "ListenOverflows", "ListenDrops"}

// TCPExtDelta is after-before for each of TCPExtCounters both readings
// have (nil when either is missing).
func TCPExtDelta(before, after map[string]uint64) map[string]uint64 {
	if before == nil || after == nil {
		return nil
	}
	out := map[string]uint64{}
	for _, k := range TCPExtCounters {
		b, ok1 := before[k]
		a, ok2 := after[k]
		if ok1 && ok2 && a >= b {
			out[k] = a - b
		}
	}
	return out
}

// SpectrumPoint is the corrected latency at one percentile.
type SpectrumPoint struct {
	P  float64 `json:"p"`  // percentile, 0-100
	Us int64   `json:"us"` // latency, µs
}

// ProxySample is one reading of the proxy's cgroup and namespace.
type ProxySample struct {
	T         float64 `json:"t"`          // seconds since the step started
	CPU       float64 `json:"cpu"`        // cores busy since the previous sample
	Mem       uint64  `json:"mem"`        // memory charged (bytes): memory.current, page cache included
	MemAnon   uint64  `json:"mem_anon"`   // anonymous memory
	MemKernel uint64  `json:"mem_kernel"` // kernel memory (slab, stacks, socket buffers)
	MemFile   uint64  `json:"mem_file"`   // page cache
	MemPeak   uint64  `json:"mem_peak"`   // highest charge so far
	TimeWait  int     `json:"time_wait"`  // TIME_WAIT sockets (-1 = not counted)
	Procs     int     `json:"procs"`
	Threads   int     `json:"threads"`
	// CFS bandwidth since the previous sample (all omitted without a
	// CPU quota): the quota (cores), periods run, periods throttled and
	// the time throttled.
	CPUQuota    float64 `json:"cpu_quota,omitempty"`
	NrPeriods   uint64  `json:"nr_periods,omitempty"`
	NrThrottled uint64  `json:"nr_throttled,omitempty"`
	ThrottledMs float64 `json:"throttled_ms,omitempty"`
}

// ProxySummary condenses the samples of the measured window (after the
// discard).
type ProxySummary struct {
	Samples     int     `json:"samples"`
	CPUAvg      float64 `json:"cpu_avg"` // cores
	CPUMax      float64 `json:"cpu_max"`
	MemAvg      uint64  `json:"mem_avg"` // memory.current
	MemMax      uint64  `json:"mem_max"`
	NeedAvg     uint64  `json:"anon_kernel_avg"` // anon + kernel: what the proxy needs under load
	NeedMax     uint64  `json:"anon_kernel_max"`
	FileMax     uint64  `json:"page_cache_max"`
	TimeWaitMax int     `json:"time_wait_max"` // -1 = not counted
	ProcsMax    int     `json:"procs_max"`     // most processes in the proxy's group
	ThreadsMax  int     `json:"threads_max"`   // most threads

	// CFS bandwidth over the window (cpu.stat deltas; 0 without a quota):
	// the quota in cores as read back, the 100 ms periods the proxy ran
	// in, those in which it used up its quota and waited, and how long it
	// waited in all.
	CPUQuota    float64 `json:"cpu_quota_cores"`
	NrPeriods   uint64  `json:"nr_periods"`
	NrThrottled uint64  `json:"nr_throttled"`
	ThrottledMs float64 `json:"throttled_ms"`
}

// ThrottledShare is the share of periods the proxy was throttled in (-1
// when it ran in none: no quota).
func (s ProxySummary) ThrottledShare() float64 {
	if s.NrPeriods == 0 {
		return -1
	}
	return float64(s.NrThrottled) / float64(s.NrPeriods)
}

// BackendDelta is what the backend saw during the step.
type BackendDelta struct {
	Accepted uint64 `json:"accepted"` // new TCP connections
	Requests uint64 `json:"requests"`
	// Apps are the requests each named backend served (app01 first;
	// nil for the lab's one backend): how the proxy spread the step's
	// requests over its routes.
	Apps  []uint64 `json:"apps,omitempty"`
	Valid bool     `json:"valid"` // both readings succeeded
}

// ConnsPerRequest is new backend connections per backend request (1 =
// a new connection for every request; 0 = all reused), -1 if unknown.
func (b BackendDelta) ConnsPerRequest() float64 {
	if !b.Valid || b.Requests == 0 {
		return -1
	}
	return float64(b.Accepted) / float64(b.Requests)
}
