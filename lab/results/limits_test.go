package results

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
)

// LimitOf: each part on its own, and the order when several hold.
func TestLimitOf(t *testing.T) {
	c := Capacity{ProxyCPUs: 1, BackendCPUs: 2, Ports: 28232}
	step := func(mod func(st *Step)) *Step {
		st := &Step{Result: &result.Result{Errors: map[string]uint64{}}, ProxySum: ProxySummary{Samples: 5, CPUAvg: 0.5, TimeWaitMax: 100}, BackendSum: ProxySummary{Samples: 5, CPUAvg: 0.4}}
		mod(st)
		return st
	}
	for _, tc := range []struct {
		name, want, why string
		mod             func(st *Step)
	}{
		{"nothing saturated", LimitNone, "", func(*Step) {}},
		{"proxy busy", LimitProxy, "the proxy used 0.95 cores on average of 1 CPU(s) (95%)", func(st *Step) { st.ProxySum.CPUAvg = 0.95 }},
		{"backend busy", LimitBackend, "the backend used 1.85 cores on average of 2 CPU(s) (92%)", func(st *Step) { st.BackendSum.CPUAvg = 1.85 }},
		{"backend before proxy", LimitBackend, "backend", func(st *Step) { st.BackendSum.CPUAvg, st.ProxySum.CPUAvg = 1.9, 0.99 }},
		{"proxy's log", LimitPorts, `the proxy logged 12 "Cannot assign requested address" lines`, func(st *Step) { st.ProxyAddrErrors = 12 }},
		{"generator's addr_not_avail", LimitPorts, "the generator counted 3 addr_not_avail errors", func(st *Step) { st.Result.Errors["addr_not_avail"] = 3 }},
		{"range full", LimitPorts, "TIME_WAIT in the proxy's namespace reached 28200 of the 28232-port range", func(st *Step) { st.ProxySum.TimeWaitMax = 28200 }},
		{"ports before backend", LimitPorts, "Cannot assign", func(st *Step) { st.ProxyAddrErrors, st.BackendSum.CPUAvg = 1, 2 }},
		{"generator first", LimitGenerator, "the generator's self-check: loop 0", func(st *Step) {
			st.Result.Generator = result.Generator{Bottleneck: true, Reason: "loop 0 (cpu 1) had no time to spare"}
			st.ProxyAddrErrors, st.BackendSum.CPUAvg = 1, 2
		}},
		{"no backend samples", LimitNone, "", func(st *Step) { st.BackendSum = ProxySummary{CPUAvg: 5} }},
		{"backend at its quota", LimitBackend, "the backend used 0.48 cores on average of a quota of 0.50 CPU (96%)", func(st *Step) { st.BackendSum.CPUAvg, st.BackendSum.CPUQuota = 0.48, 0.5 }},
		{"proxy throttled", LimitProxy, "the proxy was throttled in 30 of 100 quota periods (30%)", func(st *Step) {
			st.ProxySum.CPUAvg, st.ProxySum.CPUQuota, st.ProxySum.NrPeriods, st.ProxySum.NrThrottled = 0.6, 1, 100, 30
		}},
		{"proxy quota not reached", LimitNone, "", func(st *Step) { st.ProxySum.CPUQuota, st.ProxySum.NrPeriods, st.ProxySum.NrThrottled = 1, 100, 5 }},
		{"the scenario's port range", LimitPorts, "reached 900 of the 1000-port range", func(st *Step) {
			st.ProxySum.TimeWaitMax, st.Sysctls = 900, map[string]string{"net.ipv4.ip_local_port_range": "60000 60999"}
		}},
	} {
		got, why := LimitOf(step(tc.mod), c)
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %s (%q), want %s (%q)", tc.name, got, why, tc.want, tc.why)
		}
	}
	if got, _ := LimitOf(&Step{}, c); got != "" {
		t.Errorf("a step without a result: %q, want none recorded", got)
	}
}
