package report

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/pin"
)

// Synthetic results: what a run would have recorded, built by hand so each
// test controls exactly the pattern it checks.

const synthPlan = `
name: synth
profiles: [nginx-stock, nginx-keepalive, caddy-stock]
keys: [p256, rsa4096]
idle_memory: {quiet: 1s, samples: 3, every: 1s}
scenarios:
  - kind: keepalive-1k
  - name: keepalive-1k@4cpu
    kind: keepalive-1k
    server_cpus: "4"
  - kind: handshake
  - kind: fixed-rate
    rates: [1000]
    runs: 2
    duration: 90s
  - kind: sustained
    duration: 90s
`

func synthFile(t *testing.T) *results.File {
	t.Helper()
	return synthFileOf(t, synthPlan)
}

// synthFileOf is synthFile for another plan.
func synthFileOf(t *testing.T, planYAML string) *results.File {
	t.Helper()
	p, err := plan.Parse([]byte(planYAML))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return &results.File{
		Version: results.Version, Plan: p, Started: now, Updated: now.Add(time.Hour), Finished: true,
		Machine: results.Machine{Hostname: "box", Kernel: "6.1", PortRange: [2]int{32768, 60999}, TwReuse: 2, FinTimeout: 60, Net: "netns", Allowed: pin.NewCPUSet(0, 1, 2, 3, 4, 5, 6, 7)},
		Layouts: []results.Layout{
			{ID: "1cpu", Request: "1", Plan: pin.Plan{Server: pin.NewCPUSet(0), Backend: pin.NewCPUSet(2), Gen: pin.NewCPUSet(1)}},
			{ID: "4cpu", Request: "4", Plan: pin.Plan{Server: pin.NewCPUSet(0, 1, 2, 3), Backend: pin.NewCPUSet(6, 7), Gen: pin.NewCPUSet(4, 5)}},
		},
		Proxies: []results.ProxyInfo{
			{Layout: "1cpu", Profile: "nginx-stock", Proxy: "nginx", Key: "p256", Version: "nginx 1.22.1", IdleNeed: 5 << 20, IdleFile: 1 << 20, IdleMemory: 6 << 20, IdleSamples: []uint64{6 << 20}, IdleNeedSamples: []uint64{5 << 20}},
			{Layout: "1cpu", Profile: "nginx-keepalive", Proxy: "nginx", Key: "p256", Version: "nginx 1.22.1", IdleNeed: 5 << 20, IdleFile: 1 << 20, IdleMemory: 6 << 20},
			{Layout: "1cpu", Profile: "caddy-stock", Proxy: "caddy", Key: "p256", Version: "v2.11.9", IdleNeed: 10 << 20, IdleFile: 1 << 20, IdleMemory: 11 << 20},
		},
	}
}

// spec builds a step.
type spec struct {
	phase        string
	rate         float64
	verdict      string
	ok, bad      uint64 // measured window
	p50, p99     int64
	secs         []result.Second
	tw           []int
	conns, reqs  uint64
	genLimited   bool
	confirm, run int
	cpu          float64
	mem          uint64
	status502    uint64
}

func mkStep(seq int, s spec) *results.Step {
	if s.phase == "" {
		s.phase = string(search.PhaseProbe)
	}
	if s.verdict == "" {
		s.verdict = string(search.Pass)
	}
	if s.p50 == 0 {
		s.p50 = 500
	}
	if s.p99 == 0 {
		s.p99 = 2000
	}
	if s.secs == nil {
		s.secs = []result.Second{{T: 0, OK: s.ok}}
	}
	dur := 24.0
	res := &result.Result{
		RequestedRate: s.rate, AchievedRate: float64(s.ok) / dur, Requests: s.ok + s.bad, OK: s.ok, DurationS: dur,
		Status: map[string]uint64{"200": s.ok}, Errors: map[string]uint64{},
		Latency:   result.Latency{P50: s.p50, P90: (s.p50 + s.p99) / 3, P95: (s.p50 + s.p99) / 2, P99: s.p99, P999: s.p99 * 2, Max: s.p99 * 4},
		Seconds:   s.secs,
		Generator: result.Generator{Bottleneck: s.genLimited},
	}
	if s.status502 > 0 {
		res.Status["502"] = s.status502
	}
	if s.genLimited {
		res.Generator.Reason = "loop 0 (cpu 1) was 97% busy (limit 90%): add CPUs with --cpus or lower the load"
	}
	st := &results.Step{Seq: seq, Phase: s.phase, Rate: s.rate, Verdict: s.verdict, Result: res, Confirm: s.confirm, Run: s.run, Connections: 100,
		Spectrum: []results.SpectrumPoint{{P: 0, Us: s.p50 / 2}, {P: 50, Us: s.p50}, {P: 90, Us: s.p50 * 2}, {P: 99, Us: s.p99}, {P: 99.9, Us: s.p99 * 2}, {P: 100, Us: s.p99 * 4}}}
	for i, tw := range s.tw {
		st.Proxy = append(st.Proxy, synthSample(float64(i+1), s.cpu, s.mem, tw))
	}
	if len(st.Proxy) == 0 {
		st.Proxy = []results.ProxySample{synthSample(1, s.cpu, s.mem, 0)}
	}
	st.ProxySum = results.Summarize(st.Proxy, 0)
	if s.reqs > 0 {
		st.Backend = results.BackendDelta{Accepted: s.conns, Requests: s.reqs, Valid: true}
	}
	return st
}

// searchUnit is a finished search that found rate (confirmed 3 times).
func searchUnit(scenario, profile, key, layout string, rate float64, extra ...spec) *results.Unit {
	u := &results.Unit{ID: scenario + "/" + profile + "/" + key + "/" + layout, Scenario: scenario, Family: "keepalive-1k", Kind: plan.KindKeepalive, Method: plan.MethodSearch,
		Profile: profile, Proxy: proxyOf(profile), Key: key, Layout: layout, Status: results.StatusDone}
	if scenario == "handshake" {
		u.Kind, u.Family = plan.KindHandshake, "handshake"
	}
	seq := 0
	for _, e := range extra {
		seq++
		u.Steps = append(u.Steps, mkStep(seq, e))
	}
	for i := 1; i <= 3; i++ {
		seq++
		u.Steps = append(u.Steps, mkStep(seq, spec{phase: "confirm", confirm: i, rate: rate, ok: uint64(rate * 24), p50: 500, p99: 2500, cpu: 0.8, mem: 9 << 20}))
	}
	u.Search = &search.Result{Rate: rate, Confirmed: true, LastPass: rate, FirstFail: rate * 1.05, Steps: seq}
	return u
}

func proxyOf(profile string) string {
	if profile[:5] == "caddy" {
		return "caddy"
	}
	return "nginx"
}

// cliffSeconds: nginx-stock's 28,231-then-502 over a 90 s closed-loop run.
func cliffSeconds() []result.Second {
	var ps []result.Second
	total := uint64(0)
	for s := 0; s < 90; s++ {
		switch {
		case total+4000 <= 28231:
			ps = append(ps, result.Second{T: s, OK: 4000})
			total += 4000
		case total < 28231:
			ps = append(ps, result.Second{T: s, OK: 28231 - total, Non2xx: 3000})
			total = 28231
		default:
			ps = append(ps, result.Second{T: s, Non2xx: 9000})
		}
	}
	return ps
}

func rising(n, top int) []int {
	var tw []int
	for i := 0; i < n; i++ {
		tw = append(tw, min(top, top*(i+1)/8))
	}
	return tw
}

func sustainedUnit(profile string, s spec) *results.Unit {
	s.phase, s.run = results.PhaseRun, 1
	return &results.Unit{ID: "sustained/" + profile + "/p256/1cpu", Scenario: "sustained", Family: "sustained", Kind: plan.KindSustained, Method: plan.MethodClosed,
		Profile: profile, Proxy: proxyOf(profile), Key: "p256", Layout: "1cpu", Status: results.StatusDone, Steps: []*results.Step{mkStep(1, s)},
		ErrorLog: &results.ErrorLog{Lines: 5, Causes: map[string]int{}}}
}

// fullFile has every pattern the findings look for.
func fullFile(t *testing.T) *results.File {
	f := synthFile(t)
	f.Units = append(f.Units,
		searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000),
		searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 20000,
			spec{rate: 16000, ok: 16000 * 24}, spec{rate: 32000, verdict: "gen-limited", ok: 25000 * 24, p99: 1_500_000, genLimited: true}),
		// caddy: collapses above its limit
		searchUnit("keepalive-1k", "caddy-stock", "p256", "1cpu", 11960,
			spec{rate: 8000, ok: 8000 * 24}, spec{phase: "bisect", rate: 11960, ok: 11960 * 24, cpu: 0.52}, spec{phase: "bisect", rate: 14000, verdict: "fail", ok: 1900 * 24, p99: 3_000_000}),
		searchUnit("keepalive-1k@4cpu", "nginx-stock", "p256", "4cpu", 15200),
		searchUnit("keepalive-1k@4cpu", "caddy-stock", "p256", "4cpu", 12400),
		searchUnit("handshake", "nginx-stock", "p256", "1cpu", 4100),
		searchUnit("handshake", "nginx-stock", "rsa4096", "1cpu", 410),
		sustainedUnit("nginx-stock", spec{ok: 28231, bad: 500000, status502: 500000, secs: cliffSeconds(), tw: rising(90, 28200), conns: 28231 + 500, reqs: 28231 + 500}),
		sustainedUnit("nginx-keepalive", spec{ok: 20000 * 90, secs: flat(90, 20000), tw: make([]int, 90), conns: 40, reqs: 20000 * 90}),
		sustainedUnit("caddy-stock", spec{ok: 900000, secs: slowing(90, 12000, 6885), tw: rising(90, 27000), conns: 300000, reqs: 900000, mem: 200 << 20}),
	)
	f.Units[len(f.Units)-1].Steps[0].Connections = 100
	fixed := &results.Unit{ID: "fixed-rate/nginx-stock/p256/1cpu", Scenario: "fixed-rate", Family: "fixed-rate", Kind: plan.KindFixedRate, Method: plan.MethodFixed,
		Profile: "nginx-stock", Proxy: "nginx", Key: "p256", Layout: "1cpu", Status: results.StatusDone}
	fixed.Steps = []*results.Step{
		mkStep(1, spec{phase: "run", run: 1, rate: 1000, verdict: "fail", ok: 60000, bad: 30000, secs: cycleSeconds(), conns: 90000, reqs: 60000}),
		mkStep(2, spec{phase: "run", run: 2, rate: 1000, ok: 90000, p50: 900, p99: 1500}),
	}
	f.Units = append(f.Units, fixed,
		&results.Unit{ID: "keepalive-1k/h2o/p256/1cpu", Scenario: "keepalive-1k", Profile: "h2o", Key: "p256", Layout: "1cpu", Status: results.StatusSkipped, Reason: "not installed: h2o"})
	return f
}

func flat(n int, v uint64) []result.Second {
	var ps []result.Second
	for i := 0; i < n; i++ {
		ps = append(ps, result.Second{T: i, OK: v})
	}
	return ps
}

func slowing(n int, from, to uint64) []result.Second {
	var ps []result.Second
	for i := 0; i < n; i++ {
		v := from
		if i >= n/3 {
			v = to
		}
		ps = append(ps, result.Second{T: i, OK: v})
	}
	return ps
}

// cycleSeconds: works 30 s, fails 30 s, works 30 s at 1,000 req/s.
func cycleSeconds() []result.Second {
	var ps []result.Second
	for i := 0; i < 90; i++ {
		if i >= 30 && i < 60 {
			ps = append(ps, result.Second{T: i, Non2xx: 1000})
		} else {
			ps = append(ps, result.Second{T: i, OK: 1000})
		}
	}
	return ps
}

// synthSample splits memory.current mem (when at least 2 MiB) into 1 MiB
// of page cache, 1 MiB of kernel memory and the rest anonymous.
func synthSample(t, cpu float64, mem uint64, tw int) results.ProxySample {
	s := results.ProxySample{T: t, CPU: cpu, Mem: mem, TimeWait: tw}
	if mem >= 2<<20 {
		s.MemAnon, s.MemKernel, s.MemFile = mem-2<<20, 1<<20, 1<<20
	}
	return s
}
