package results

import (
	"fmt"
	"strconv"
	"strings"
)

// Which part limited a step (Step.LimitedBy, Unit.LimitedBy): the first
// that matches, in this order.
const (
	LimitGenerator = "generator" // the generator's self-check: it was the bottleneck
	LimitPorts     = "ports"     // the proxy ran out of local ports: EADDRNOTAVAIL, or the range full of TIME_WAIT
	LimitBackend   = "backend"   // the backend busy >= SaturatedShare of its CPUs (or quota)
	LimitProxy     = "proxy"     // the proxy busy >= SaturatedShare of its CPUs (or quota), or throttled in >= ThrottledShare of periods
	LimitNone      = "none"      // no part saturated: the limit is latency or errors (a queue, a pool)
)

// Thresholds of LimitOf.
const (
	SaturatedShare = 0.90 // a part is saturated at this share of its CPUs, averaged over the measured window
	ThrottledShare = 0.20 // a part under a CPU quota is limited by it when throttled in this share of periods
	PortsFullShare = 0.80 // TIME_WAIT at this share of the port range counts as the range full
)

// Capacity is what each part of a step had: CPUs in its cpuset (a quota
// below that is read from the step's samples) and the proxy's port range.
type Capacity struct {
	ProxyCPUs   int
	BackendCPUs int
	Ports       int // the proxy namespace's ephemeral port range (0 = unknown)
}

// LimitOf says which part limited step st, and why, from its recorded
// numbers: the generator's self-check, the proxy's "Cannot assign requested
// address" lines during the step and the generator's addr_not_avail
// errors, TIME_WAIT against the port range, and the proxy's and backend's
// CPU averaged over the measured window against their CPUs or quota. The
// first that matches wins: generator, ports, backend, proxy, none.
func LimitOf(st *Step, c Capacity) (limit, why string) {
	if st == nil || st.Result == nil {
		return "", ""
	}
	res := st.Result
	if res.Generator.Bottleneck {
		return LimitGenerator, "the generator's self-check: " + res.Generator.Reason
	}
	ports := c.Ports
	if n := portRangeSize(st.Sysctls["net.ipv4.ip_local_port_range"]); n > 0 {
		ports = n // the range the scenario set in the proxy's namespace
	}
	var portWhy []string
	if st.ProxyAddrErrors > 0 {
		portWhy = append(portWhy, fmt.Sprintf("the proxy logged %d \"Cannot assign requested address\" lines", st.ProxyAddrErrors))
	}
	if n := res.Errors["addr_not_avail"]; n > 0 {
		portWhy = append(portWhy, fmt.Sprintf("the generator counted %d addr_not_avail errors", n))
	}
	if tw := st.ProxySum.TimeWaitMax; ports > 0 && float64(tw) >= PortsFullShare*float64(ports) {
		portWhy = append(portWhy, fmt.Sprintf("TIME_WAIT in the proxy's namespace reached %d of the %d-port range", tw, ports))
	}
	if len(portWhy) > 0 {
		return LimitPorts, strings.Join(portWhy, "; ")
	}
	if ok, why := saturated("backend", st.BackendSum, c.BackendCPUs); ok {
		return LimitBackend, why
	}
	if ok, why := saturated("proxy", st.ProxySum, c.ProxyCPUs); ok {
		return LimitProxy, why
	}
	return LimitNone, ""
}

// saturated reports whether a part was busy at SaturatedShare of what it
// had: its cpuset's CPUs, or its CPU quota when lower (sum.CPUQuota, read
// from the group), or throttled in ThrottledShare of the quota's periods.
func saturated(part string, sum ProxySummary, cpus int) (bool, string) {
	if sum.Samples == 0 {
		return false, ""
	}
	capCores, what := float64(cpus), fmt.Sprintf("%d CPU(s)", cpus)
	if q := sum.CPUQuota; q > 0 && (cpus <= 0 || q < capCores) {
		capCores, what = q, fmt.Sprintf("a quota of %.2f CPU", q)
	}
	if sh := sum.ThrottledShare(); sh >= ThrottledShare {
		return true, fmt.Sprintf("the %s was throttled in %d of %d quota periods (%.0f%%)", part, sum.NrThrottled, sum.NrPeriods, 100*sh)
	}
	if capCores > 0 && sum.CPUAvg >= SaturatedShare*capCores {
		return true, fmt.Sprintf("the %s used %.2f cores on average of %s (%.0f%%)", part, sum.CPUAvg, what, 100*sum.CPUAvg/capCores)
	}
	return false, ""
}

// portRangeSize is the size of an ip_local_port_range value "32768 60999"
// (0 if it does not parse).
func portRangeSize(v string) int {
	f := strings.Fields(v)
	if len(f) != 2 {
		return 0
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return 0
	}
	return hi - lo + 1
}

// ThrottledShare is the share of periods the proxy was throttled in (-1
// when it ran in none: no quota).
func (s ProxySummary) ThrottledShare() float64 {
	if s.NrPeriods == 0 {
		return -1
	}
	return float64(s.NrThrottled) / float64(s.NrPeriods)
}
