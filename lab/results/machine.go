package results

import (
	"github.com/loadlab/loadlab/pin"
)

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
