package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

const knobsSynthPlan = `
name: knobs
profiles: [nginx-stock, caddy-stock]
net: netns
scenarios:
  - name: sustained-cliff
    kind: sustained
    duration: 60s
  - name: sustained-tw-reuse
    kind: sustained
    duration: 20s
    sysctls: {net.ipv4.tcp_tw_reuse: 1}
  - name: sustained-tw-buckets
    kind: sustained
    duration: 20s
    sysctls: {net.ipv4.tcp_max_tw_buckets: 8192}
  - name: cpu-cpuset
    kind: fixed-rate
    rates: [3000]
    runs: 1
    duration: 5s
  - name: cpu-quota
    kind: fixed-rate
    rates: [3000]
    runs: 1
    duration: 5s
    server_cpus: all
    server_quota: 1
seeds:
  - {finding: tw-reuse, seed: "002", says: "s", number: "433 -> 9,000 with tcp_tw_reuse", value: 20.8, scenarios: [sustained-tw-reuse, sustained-cliff], profiles: [nginx-stock]}
  - {finding: tw-buckets, seed: "002", says: "s", number: "2,625 with 8,192 buckets against 433", value: 6.06, scenarios: [sustained-tw-buckets, sustained-cliff], profiles: [nginx-stock]}
  - {finding: quota-workers, seed: "001", says: "s", number: "8 workers for 1 CPU of quota", value: 8, scenarios: [cpu-quota], profiles: [nginx-stock, caddy-stock]}
`

// knobUnit is a one-step unit of scenario on profile with st.
func knobUnit(scenario, kind, method, profile, layout string, st *results.Step) *results.Unit {
	return &results.Unit{ID: scenario + "/" + profile + "/p256/" + layout, Scenario: scenario, Family: scenario, Kind: kind, Method: method,
		Profile: profile, Proxy: proxyOf(profile), Key: "p256", Layout: layout, Status: results.StatusDone, Steps: []*results.Step{st}}
}

// knobsFile: nginx-stock's default cliff over 60 s (28,231 then 502),
// 13,900/s without failures with tcp_tw_reuse=1 over 20 s, 14,000/s with
// tw_buckets 8192 (TIME_WAIT 8,192, 270,000 entries dropped), and
// nginx-stock and caddy-stock at 3,000 req/s under 1 CPU of quota over
// CPUs 0-1 and on a 1-CPU cpuset.
func knobsFile(t *testing.T) *results.File {
	f := synthFileOf(t, knobsSynthPlan)
	f.Machine.Kernel, f.Machine.TwReuseDelayMs, f.Machine.Timestamps, f.Machine.MaxTwBuckets = "6.18.44", 1000, 1, 131072
	f.Layouts = append(f.Layouts, results.Layout{ID: "2cpu", Request: "all", Plan: pin.Plan{Server: pin.NewCPUSet(0, 1), Backend: pin.NewCPUSet(1), Gen: pin.NewCPUSet(1)}})
	closed := func(secs []result.Second, tw []int, ext map[string]uint64, sys map[string]string) *results.Step {
		var ok, bad uint64
		for _, s := range secs {
			ok += s.OK
			bad += s.Non2xx
		}
		st := mkStep(1, spec{phase: results.PhaseRun, run: 1, ok: ok, bad: bad, secs: secs, tw: tw, conns: ok, reqs: ok, status502: bad})
		st.Result.AchievedRate, st.Result.DurationS = float64(ok)/float64(len(secs)), float64(len(secs))
		st.Sysctls, st.TCPExt = sys, ext
		return st
	}
	cliff := cliffSeconds()[:60]
	reuse := closed(flat(20, 13900), rising(20, 14500), map[string]uint64{"TW": 278000, "TWRecycled": 263000}, map[string]string{"net.ipv4.tcp_tw_reuse": "1"})
	buckets := closed(flat(20, 14000), rising(20, 8192), map[string]uint64{"TW": 8192, "TCPTimeWaitOverflow": 271808}, map[string]string{"net.ipv4.tcp_max_tw_buckets": "8192"})
	fixed := func(p99 int64, quota float64, periods, throttled uint64, procs, threads int) *results.Step {
		st := mkStep(1, spec{phase: results.PhaseRun, run: 1, rate: 3000, ok: 3000 * 5, p99: p99, cpu: 0.4})
		st.Proxy[0].CPUQuota, st.Proxy[0].NrPeriods, st.Proxy[0].NrThrottled, st.Proxy[0].ThrottledMs = quota, periods, throttled, float64(throttled)*20
		st.Proxy[0].Procs, st.Proxy[0].Threads = procs, threads
		st.ProxySum = results.Summarize(st.Proxy, 0)
		return st
	}
	f.Units = append(f.Units,
		knobUnit("sustained-cliff", plan.KindSustained, plan.MethodClosed, "nginx-stock", "1cpu", closed(cliff, rising(60, 28232), nil, nil)),
		knobUnit("sustained-tw-reuse", plan.KindSustained, plan.MethodClosed, "nginx-stock", "1cpu", reuse),
		knobUnit("sustained-tw-buckets", plan.KindSustained, plan.MethodClosed, "nginx-stock", "1cpu", buckets),
		knobUnit("cpu-cpuset", plan.KindFixedRate, plan.MethodFixed, "nginx-stock", "1cpu", fixed(2000, 0, 0, 0, 3, 3)),
		knobUnit("cpu-quota", plan.KindFixedRate, plan.MethodFixed, "nginx-stock", "2cpu", fixed(45_000, 1, 50, 10, 3, 3)),
		knobUnit("cpu-cpuset", plan.KindFixedRate, plan.MethodFixed, "caddy-stock", "1cpu", fixed(3000, 0, 0, 0, 1, 9)),
		knobUnit("cpu-quota", plan.KindFixedRate, plan.MethodFixed, "caddy-stock", "2cpu", fixed(6600, 1, 50, 0, 1, 9)),
	)
	return f
}

func TestKnobFindings(t *testing.T) {
	r, md := build(t, knobsFile(t))
	all := strings.Join(r.Findings, "\n")
	for _, want := range []string{
		// tw_reuse beside the default
		"tcp_tw_reuse=1: nginx-stock [tcp_tw_reuse=1] (sustained-tw-reuse, 100 connections): 0 502s and 0 failed or non-2xx, 13,900 2xx/s over 20 s against 471 with the default in sustained-cliff over 60 s (29.5×; 1,412/s in its first 20 s), which ended in ",
		"278,000 requests through a 28,232-port range",
		"the kernel reused 263,000 TIME_WAIT ports for new connections (TcpExt TWRecycled)",
		"On this kernel (6.18.44) tcp_tw_reuse=1 acts on outgoing connections only",
		"is 1,000 ms (tcp_tw_reuse_delay) old, with TCP timestamps on (tcp_timestamps=1)",
		// tw_buckets
		"tcp_max_tw_buckets 8,192: nginx-stock [tcp_max_tw_buckets=8192] (sustained-tw-buckets, 100 connections): the kernel dropped 271,808 TIME_WAIT entries (TcpExt TCPTimeWaitOverflow), TIME_WAIT stayed at or below 8,192 and no 502 came: 14,000 2xx/s over 20 s",
		"why seed 002's 2 GB server (8,192 buckets) held 2,625 req/s",
		"This machine's default is 131,072, more than the 28,232 ports",
		// quota against cpuset
		"nginx-stock at 3,000 req/s: 1 CPU of quota over CPUs 0-1 (cpu-quota) against a 1-CPU cpuset (CPU 0) (cpu-cpuset): p99 45 ms against 2.00 ms, throttled in 20.0% of 50 periods (200 ms), 3/3 processes/threads against 3/3: the quota raised the tail 22.5×",
		"nginx's worker_processes auto started 2 workers for 1 CPU of quota",
		// never throttled: the quota did not act, whatever the tail did
		"caddy-stock at 3,000 req/s: 1 CPU of quota over CPUs 0-1 (cpu-quota) against a 1-CPU cpuset (CPU 0) (cpu-cpuset): p99 6.60 ms against 3.00 ms, throttled in 0% of 50 periods (0 ms), 1/9 processes/threads against 1/9: the quota never throttled it (0 of 50 periods), so at this rate it did not act; the p99's 2.2× is the CPUs it shares with the generator and the backend, or noise, not the quota.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack\n%s", want)
		}
	}
	for _, want := range []string{
		"| nginx-stock [tcp_tw_reuse=1] |",
		"| nginx-stock [1 CPU quota] | 3,000 |",
		"| 20.0% of 50 periods (200 ms) | 3/3 |",
		"The proxy ran under 1 CPU of quota (CFS, 100 ms periods",
		"over CPUs 0-1, which it shares with the generator (CPU 1) and the backend (CPU 1): the time they use on CPU 1 is time the proxy cannot have",
		"Kernel settings in the proxy's network namespace: net.ipv4.tcp_max_tw_buckets = 8192.",
		// the seeds beside this machine
		"| 002 | tw-reuse | 433 -> 9,000 with tcp_tw_reuse | 471 -> 13,900 2xx/s (29.5×), 0 502s with it, 471,000 without | yes | 1.42x the seed's |",
		"| 002 | tw-buckets | 2,625 with 8,192 buckets against 433 | 14,000 2xx/s with 8192 buckets against 471 (29.8×), 271,808 TIME_WAIT entries dropped, TIME_WAIT at most 8,192, 0 502s | yes | 4.91x the seed's |",
		"| 001 | quota-workers | 8 workers for 1 CPU of quota | nginx-stock: 2 workers for 1 CPU of quota (worker_processes auto); caddy-stock: 1/9 processes/threads under the quota, 1/9 on the cpuset | yes | 2 workers against the seed's 8: one per online CPU here |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks\n%s", want)
		}
	}
	if t.Failed() {
		t.Log(all)
		t.Log(md)
	}
}

// Over three runs a side, the quota "raised the tail" only when the two
// sides' p99 ranges are apart; where they overlap the finding says there
// was no change beyond this run's noise, with that noise.
func TestQuotaFindingAgainstNoise(t *testing.T) {
	runs := func(u *results.Unit, p99s ...int64) {
		st0 := u.Steps[0]
		u.Steps = nil
		for i, p := range p99s {
			c := *st0
			res := *st0.Result
			res.Latency.P99 = p
			c.Result, c.Run = &res, i+1
			u.Steps = append(u.Steps, &c)
		}
	}
	for _, c := range []struct {
		cpuset, quota []int64
		want          string
	}{
		{[]int64{2000, 2100, 9000}, []int64{4400, 4600, 45000}, "no change in the tail beyond this run's noise (882.6%), nor in the worker count"},
		{[]int64{2000, 2100, 2200}, []int64{40000, 45000, 50000}, "the quota raised the tail 21.4×"},
	} {
		f := knobsFile(t)
		runs(f.Unit("cpu-cpuset/nginx-stock/p256/1cpu"), c.cpuset...)
		runs(f.Unit("cpu-quota/nginx-stock/p256/2cpu"), c.quota...)
		r, _ := build(t, f)
		all := strings.Join(r.Findings, "\n")
		if !strings.Contains(all, c.want) || !strings.Contains(all, "over 3 runs") {
			t.Errorf("cpuset %v, quota %v: want %q in\n%s", c.cpuset, c.quota, c.want, all)
		}
	}
}
