package results

import (
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/search"
)

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

// Remeasured is a unit's round measured again (Unit.Remeasured).
type Remeasured struct {
	Round    int              `json:"round"`
	Why      string           `json:"why"` // the first noisy step's noisy_why
	Steps    []*Step          `json:"steps"`
	Searches []*search.Result `json:"searches,omitempty"`
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
