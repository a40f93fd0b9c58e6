package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/lab/spread"
	"github.com/loadlab/loadlab/pin"
)

// The knobs the seeds turned on the machine, not in the proxy: kernel
// settings in the proxy's namespace (tcp_tw_reuse, tcp_max_tw_buckets) and
// a CPU quota instead of a cpuset. Their columns, labels and findings.

// Thresholds of the knob findings.
const (
	quotaTailRatio    = 1.5  // p99 under the quota this many times the cpuset's, either way: "moved the tail"
	quotaTailMinUs    = 1000 // ...and at least this far apart
	quotaThreadsRatio = 1.25 // threads differing by this factor: "changed the thread count"
)

// Sysctl keys the findings read.
const (
	keyTwReuse   = "net.ipv4.tcp_tw_reuse"
	keyTwBuckets = "net.ipv4.tcp_max_tw_buckets"
)

// knobsHeader names knobsCells' columns, in the detail table after the proxy's memory.
var knobsHeader = []string{"Throttled", "Procs/threads"}

// knobsCells: the share of 100 ms CFS periods the proxy was throttled in
// ("-" without a CPU quota) and the most processes/threads its group had.
func knobsCells(r row) []string {
	if r.step == nil {
		return []string{"-", "-"}
	}
	ps := r.step.ProxySum
	return []string{throttledText(ps), procsText(ps)}
}

// throttledText is "12% of 50 periods (340 ms)", "-" without a quota.
func throttledText(ps results.ProxySummary) string {
	if ps.CPUQuota <= 0 {
		return "-"
	}
	sh := ps.ThrottledShare()
	if sh < 0 {
		return "0 periods"
	}
	return fmt.Sprintf("%s of %s periods (%s ms)", fmtPct(sh), fmtInt(int64(ps.NrPeriods)), fmtInt(int64(math.Round(ps.ThrottledMs))))
}

// procsText is "3/5", "-" when nothing was sampled.
func procsText(ps results.ProxySummary) string {
	if ps.ProcsMax == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", ps.ProcsMax, ps.ThreadsMax)
}

// knobsLegend says what the knob columns and labels are (Report.Legend).
const knobsLegend = "Throttled: the share of the 100 ms CFS periods in which a proxy under a CPU quota used it up and waited for the next (cpu.stat nr_throttled / nr_periods, and the time waited); - without a quota. Procs/threads: the most processes and threads in the proxy's cgroup. [settings] after a profile: the kernel settings its scenario set in the proxy's network namespace, as read back there, and its CPU quota."

// knobsLabel is " [tcp_tw_reuse=1, 1 CPU quota]" for a row whose step ran
// with kernel settings or a quota, "" otherwise.
func knobsLabel(r row) string {
	st := r.step
	if st == nil && r.unit != nil && len(r.unit.Steps) > 0 {
		st = r.unit.Steps[0]
	}
	if st == nil {
		return ""
	}
	return knobsWords(st)
}

// knobsWords is a step's settings in brackets ("" for none).
func knobsWords(st *results.Step) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(st.Sysctls)) {
		parts = append(parts, shortKey(k)+"="+st.Sysctls[k])
	}
	if q := st.ProxySum.CPUQuota; q > 0 {
		parts = append(parts, fmt.Sprintf("%s CPU quota", fmtCoresQuota(q)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, ", ") + "]"
}

// shortKey drops net.ipv4. / net.core. from a sysctl name.
func shortKey(k string) string {
	for _, p := range []string{"net.ipv4.", "net.ipv6.", "net.core."} {
		if rest, ok := strings.CutPrefix(k, p); ok {
			return rest
		}
	}
	return k
}

// fmtCoresQuota writes a quota in cores: "1", "0.5".
func fmtCoresQuota(q float64) string { return strconv.FormatFloat(q, 'f', -1, 64) }

// knobsIntro says, for a scenario with a CPU quota or kernel settings, what
// they were and that a quota over every CPU shares them with the generator
// and the backend.
func knobsIntro(f *results.File, s *plan.Scenario, layout string) string {
	var out []string
	if q := s.Eff.ServerQuota; q > 0 {
		w := fmt.Sprintf("The proxy ran under %s CPU of quota (CFS, 100 ms periods: cgroup v1 cpu.cfs_quota_us, v2 cpu.max, as docker --cpus sets it)", fmtCoresQuota(q))
		if l := f.Layout(layout); l != nil {
			if shared := l.Server.Intersect(l.Gen.Union(l.Backend)); len(shared) > 0 {
				w += fmt.Sprintf(" over CPUs %s, which it shares with the generator (%s) and the backend (%s): the time they use on %s is time the proxy cannot have, so its rows are not a proxy alone on %s CPU", l.Server, cpusWord(l.Gen), cpusWord(l.Backend), cpusWord(shared), fmtCoresQuota(q))
			} else {
				w += fmt.Sprintf(" over CPUs %s", l.Server)
			}
		}
		out = append(out, w+".")
	}
	if len(s.Sysctls) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.Sysctls)) {
			kv = append(kv, k+" = "+s.Sysctls[k])
		}
		out = append(out, "Kernel settings in the proxy's network namespace: "+strings.Join(kv, ", ")+".")
	}
	return strings.Join(out, " ")
}

// knobFindings are the findings of the knob scenarios; the TIME_WAIT runs
// they explain are marked in explained (the connection-churn finding
// leaves them out).
func knobFindings(f *results.File, explained map[*results.Step]bool) []string {
	var out []string
	out = append(out, twFindings(f, explained)...)
	out = append(out, quotaFindings(f)...)
	return out
}

// closedRun is the representative step of a closed-loop unit (the middle
// run by 2xx/s), nil when it has none.
func closedRun(f *results.File, u *results.Unit) *results.Step {
	if r, ok := closedRow(f, u); ok {
		return r.step
	}
	return nil
}

// defaultRun finds the run of profile's closed-loop scenario at the same
// connections with no kernel settings and no quota: the default the
// knob runs are set beside.
func defaultRun(f *results.File, like *results.Unit, conns int) (*results.Unit, *results.Step) {
	for _, u := range f.Units {
		if !reportable(u) || u.Profile != like.Profile || u.Kind != like.Kind || u.Method != plan.MethodClosed || u == like {
			continue
		}
		st := closedRun(f, u)
		if st == nil || st.Connections != conns || len(st.Sysctls) > 0 || st.ProxySum.CPUQuota > 0 {
			continue
		}
		return u, st
	}
	return nil, nil
}

// twRun is what a closed-loop run with TIME_WAIT settings shows.
type twRun struct {
	u        *results.Unit
	st       *results.Step
	rate     float64 // 2xx/s over the measured run
	secs     int
	fails    uint64 // failed and non-2xx
	n502     uint64
	ok       uint64
	tw       int // most TIME_WAIT sampled in the proxy's namespace
	overflow uint64
	recycled uint64
}

func newTwRun(u *results.Unit, st *results.Step) twRun {
	r := twRun{u: u, st: st, rate: st.Result.AchievedRate, secs: int(math.Round(st.Result.DurationS)), ok: st.Result.OK,
		fails: seriesFailures(st.Result.Seconds), n502: st.Result.Status["502"], tw: maxTimeWait(st.Proxy)}
	r.overflow, r.recycled = st.TCPExt["TCPTimeWaitOverflow"], st.TCPExt["TWRecycled"]
	return r
}

// twComparison finds the TIME_WAIT runs: the closed-loop steps with
// tcp_tw_reuse=1 or a tcp_max_tw_buckets setting, each with the default
// run of the same profile and connections (nil when the run has none).
type twPair struct {
	set  twRun
	def  *twRun
	kind string // keyTwReuse or keyTwBuckets
}

func twPairs(f *results.File) []twPair {
	var out []twPair
	for _, u := range f.Units {
		if !reportable(u) || u.Method != plan.MethodClosed {
			continue
		}
		st := closedRun(f, u)
		if st == nil || st.Result == nil {
			continue
		}
		kind := ""
		switch {
		case st.Sysctls[keyTwReuse] == "1":
			kind = keyTwReuse
		case st.Sysctls[keyTwBuckets] != "":
			kind = keyTwBuckets
		default:
			continue
		}
		p := twPair{set: newTwRun(u, st), kind: kind}
		if du, dst := defaultRun(f, u, st.Connections); du != nil {
			d := newTwRun(du, dst)
			p.def = &d
		}
		out = append(out, p)
	}
	return out
}

// againstDefault says "N 2xx/s against M with the default over its S s
// (K×; F/s in its first T s)".
func againstDefault(p twPair) string {
	if p.def == nil || p.def.rate <= 0 {
		return fmt.Sprintf("%s 2xx/s over %d s (no default run of %s at %d connections to set it beside)", fmtRate(p.set.rate), p.set.secs, p.set.u.Profile, p.set.st.Connections)
	}
	d := p.def
	s := fmt.Sprintf("%s 2xx/s over %d s against %s with the default in %s over %d s (%.1f×", fmtRate(p.set.rate), p.set.secs, fmtRate(d.rate), d.u.Scenario, d.secs, p.set.rate/d.rate)
	if d.secs > p.set.secs && p.set.secs > 0 {
		s += fmt.Sprintf("; %s/s in its first %d s", fmtRate(okRate(d.st.Result.Seconds, 0, p.set.secs)), p.set.secs)
	}
	s += ")"
	if d.n502 > 0 {
		s += fmt.Sprintf(", which ended in %s 502s", fmtInt(int64(d.n502)))
	}
	return s
}

// twFindings: what tcp_tw_reuse=1 and tcp_max_tw_buckets did to a proxy
// that opens a backend connection per request, beside the default.
func twFindings(f *results.File, explained map[*results.Step]bool) []string {
	ports := f.Machine.Ports()
	var out []string
	for _, p := range twPairs(f) {
		r := p.set
		explained[r.st] = true
		name := fmt.Sprintf("%s%s (%s, %d connections)", r.u.Profile, knobsWords(r.st), r.u.Scenario, r.st.Connections)
		served := ""
		if ports > 0 && r.ok > uint64(ports) {
			served = fmt.Sprintf(", %s requests through a %s-port range", fmtInt(int64(r.ok)), fmtInt(int64(ports)))
		}
		var s string
		switch p.kind {
		case keyTwReuse:
			s = fmt.Sprintf("tcp_tw_reuse=1: %s: %s 502s and %s failed or non-2xx, %s%s", name, fmtInt(int64(r.n502)), fmtInt(int64(r.fails)), againstDefault(p), served)
			if r.tw >= 0 {
				s += fmt.Sprintf("; TIME_WAIT in its namespace peaked at %s", fmtInt(int64(r.tw)))
			}
			if r.recycled > 0 {
				s += fmt.Sprintf(" while the kernel reused %s TIME_WAIT ports for new connections (TcpExt TWRecycled)", fmtInt(int64(r.recycled)))
			}
			s += ". " + twReuseHow(f.Machine)
		case keyTwBuckets:
			limit := r.st.Sysctls[keyTwBuckets]
			n, _ := strconv.Atoi(limit)
			if r.overflow > 0 {
				s = fmt.Sprintf("tcp_max_tw_buckets %s: %s: the kernel dropped %s TIME_WAIT entries (TcpExt TCPTimeWaitOverflow)", fmtInt(int64(n)), name, fmtInt(int64(r.overflow)))
			} else {
				s = fmt.Sprintf("tcp_max_tw_buckets %s: %s: the kernel dropped no TIME_WAIT entry (TcpExt TCPTimeWaitOverflow 0)", fmtInt(int64(n)), name)
			}
			if r.tw >= 0 {
				s += fmt.Sprintf(", TIME_WAIT stayed at or below %s", fmtInt(int64(r.tw)))
			}
			if r.n502 == 0 && r.fails == 0 {
				s += " and no 502 came"
			} else {
				s += fmt.Sprintf(", and %s 502s and %s failed or non-2xx came", fmtInt(int64(r.n502)), fmtInt(int64(r.fails)))
			}
			s += ": " + againstDefault(p) + served + "."
			if r.overflow > 0 && r.n502 == 0 {
				s += " Dropped entries free their ports at once, so the range never fills: why seed 002's 2 GB server (8,192 buckets) held 2,625 req/s while the 8 GB one (32,768, more than the range) fell to 433."
			}
			if f.Machine.MaxTwBuckets > 0 {
				s += fmt.Sprintf(" This machine's default is %s", fmtInt(int64(f.Machine.MaxTwBuckets)))
				if ports > 0 && f.Machine.MaxTwBuckets > ports {
					s += fmt.Sprintf(", more than the %s ports: every entry stays its 60 s", fmtInt(int64(ports)))
				}
				s += "."
			}
		}
		out = append(out, s)
	}
	return out
}

// twReuseHow says what tcp_tw_reuse=1 does on this kernel.
func twReuseHow(m results.Machine) string {
	delay := "1 s"
	if m.TwReuseDelayMs > 0 {
		delay = fmtInt(int64(m.TwReuseDelayMs)) + " ms (tcp_tw_reuse_delay)"
	}
	s := fmt.Sprintf("On this kernel (%s) tcp_tw_reuse=1 acts on outgoing connections only: the proxy's connect() to the backend may take a local port whose connection to the same backend address and port is in TIME_WAIT once that entry's last TCP timestamp is %s old", orDash(m.Kernel), delay)
	if m.Timestamps == 0 {
		s += "; TCP timestamps are off here (tcp_timestamps=0), and without them no port is reused"
	} else {
		s += fmt.Sprintf(", with TCP timestamps on (tcp_timestamps=%d)", m.Timestamps)
	}
	return s + "; incoming connections are not affected, and the default 2 does this for loopback only, not across the lab's veth."
}

// quotaPair is one profile at one rate under a CPU quota and on a cpuset
// alone.
type quotaPair struct {
	profile    string
	rate       float64
	quota, cpu *results.Unit
	qs, cs     *results.Step
}

// quotaPairs finds fixed-rate steps under a CPU quota and the same
// profile's step at the same rate without one, with the same kernel
// settings (the median run by p99 of each).
func quotaPairs(f *results.File) []quotaPair {
	type side struct {
		u  *results.Unit
		st *results.Step
	}
	var quota, plain []side
	for _, u := range f.Units {
		if !reportable(u) || u.Method != plan.MethodFixed {
			continue
		}
		for _, r := range fixedRows(f, u) {
			if r.step == nil || r.step.Result == nil {
				continue
			}
			if r.step.ProxySum.CPUQuota > 0 {
				quota = append(quota, side{u, r.step})
			} else {
				plain = append(plain, side{u, r.step})
			}
		}
	}
	var out []quotaPair
	for _, q := range quota {
		for _, c := range plain {
			if c.u.Profile == q.u.Profile && c.st.Rate == q.st.Rate && c.u.Key == q.u.Key && maps.Equal(c.st.Sysctls, q.st.Sysctls) {
				out = append(out, quotaPair{profile: q.u.Profile, rate: q.st.Rate, quota: q.u, cpu: c.u, qs: q.st, cs: c.st})
				break
			}
		}
	}
	return out
}

// quotaFindings: the same fixed rate under a CPU quota over the layout's
// CPUs and on a cpuset alone: p99, throttling and processes/threads, and
// whether the quota moved the tail or the worker count.
func quotaFindings(f *results.File) []string {
	var out []string
	for _, p := range quotaPairs(f) {
		qp, cp := p.qs.ProxySum, p.cs.ProxySum
		q99, c99 := p.qs.Result.Latency.P99, p.cs.Result.Latency.P99
		cpus := ""
		if l := f.Layout(p.quota.Layout); l != nil {
			cpus = " over CPUs " + l.Server.String()
		}
		onCPUs := ""
		if l := f.Layout(p.cpu.Layout); l != nil {
			onCPUs = fmt.Sprintf(" (CPU %s)", l.Server)
		}
		qv, cv := p99Runs(p.quota, p.rate), p99Runs(p.cpu, p.rate)
		s := fmt.Sprintf("%s at %s req/s: %s CPU of quota%s (%s) against a %d-CPU cpuset%s (%s): p99 %s%s against %s%s, throttled in %s%s, %s processes/threads against %s",
			p.profile, fmtRate(p.rate), fmtCoresQuota(qp.CPUQuota), cpus, p.quota.Scenario, cpusetSize(f, p.cpu), onCPUs, p.cpu.Scenario,
			fmtLatency(q99), latRange(qv), fmtLatency(c99), latRange(cv), throttledText(qp), throttledRange(p.quota, p.rate), procsText(qp), procsText(cp))
		tail := q99 > 0 && c99 > 0 && math.Max(float64(q99), float64(c99)) >= quotaTailRatio*math.Min(float64(q99), float64(c99)) && absDiff(q99, c99) >= quotaTailMinUs
		// Over several runs a change must also leave both sides' ranges
		// apart: within them it is this run's noise.
		noise, within := runsNoise(qv, cv)
		if tail && within {
			tail = false
		}
		workers := qp.ProcsMax > 0 && cp.ProcsMax > 0 && (qp.ProcsMax != cp.ProcsMax ||
			float64(max(qp.ThreadsMax, cp.ThreadsMax)) >= quotaThreadsRatio*float64(min(qp.ThreadsMax, cp.ThreadsMax)))
		var moved []string
		if tail {
			dir := "raised"
			if q99 < c99 {
				dir = "lowered"
			}
			moved = append(moved, fmt.Sprintf("%s the tail %.1f×", dir, math.Max(float64(q99), float64(c99))/math.Min(float64(q99), float64(c99))))
		}
		if workers {
			if qp.ProcsMax != cp.ProcsMax {
				moved = append(moved, "changed the worker count")
			} else {
				moved = append(moved, "changed the thread count")
			}
		}
		switch {
		case qp.NrPeriods > 0 && qp.NrThrottled == 0:
			// Unthrottled, the quota did not act: a difference is the
			// shared CPUs' (the proxy runs beside the generator and the
			// backend there) or the run's noise.
			s += fmt.Sprintf(": the quota never throttled it (0 of %s periods), so at this rate it did not act", fmtInt(int64(qp.NrPeriods)))
			if tail {
				s += fmt.Sprintf("; the p99's %.1f× is the CPUs it shares with the generator and the backend, or noise, not the quota", math.Max(float64(q99), float64(c99))/math.Min(float64(q99), float64(c99)))
			}
		case len(moved) > 0:
			s += ": the quota " + strings.Join(moved, " and ")
		case within && q99 > 0 && c99 > 0:
			s += fmt.Sprintf(": no change in the tail beyond this run's noise (%s), nor in the worker count", pctWords(noise))
		default:
			s += ": at this rate the quota moved neither the tail nor the worker count"
		}
		if missed := missedRate(p.qs, p.cs); missed != "" {
			s += "; " + missed
		}
		if qp.ProcsMax > 1 && float64(qp.ProcsMax-1) > qp.CPUQuota && p.quota.Proxy == "nginx" {
			s += fmt.Sprintf("; nginx's worker_processes auto started %d workers for %s CPU of quota: it counts the machine's online CPUs, not the quota (seed 001: 8 workers on its 8 CPUs)", qp.ProcsMax-1, fmtCoresQuota(qp.CPUQuota))
		}
		out = append(out, s+".")
	}
	return out
}

// p99Runs are the p99s of u's runs at rate (one per run, over rounds).
func p99Runs(u *results.Unit, rate float64) []float64 {
	var out []float64
	for _, st := range u.Steps {
		if st.Result != nil && !st.Interrupted && st.Rate == rate {
			out = append(out, float64(st.Result.Latency.P99))
		}
	}
	return out
}

// latRange is " (min–max over N runs)" for more than one run, else "".
func latRange(v []float64) string {
	if len(v) < 2 {
		return ""
	}
	sp := spread.Of(v)
	return fmt.Sprintf(" (%s–%s over %d runs)", fmtLatency(int64(sp.Min)), fmtLatency(int64(sp.Max)), len(v))
}

// throttledRange is the throttled share's min–max over u's runs at rate,
// for more than one run.
func throttledRange(u *results.Unit, rate float64) string {
	var sh []float64
	for _, st := range u.Steps {
		if st.Result != nil && !st.Interrupted && st.Rate == rate {
			if v := st.ProxySum.ThrottledShare(); v >= 0 {
				sh = append(sh, v)
			}
		}
	}
	if len(sh) < 2 {
		return ""
	}
	sp := spread.Of(sh)
	return fmt.Sprintf(" (%s–%s over %d runs)", fmtPct(sp.Min), fmtPct(sp.Max), len(sh))
}

// runsNoise is the larger relative min–max spread of two sides' runs
// ((max-min)/median), and whether their ranges overlap: a difference
// between them is then within this run's noise. Sides of fewer than two
// runs have no measured noise (0, false).
func runsNoise(a, b []float64) (noise float64, within bool) {
	if len(a) < 2 || len(b) < 2 {
		return 0, false
	}
	sa, sb := spread.Of(a), spread.Of(b)
	for _, sp := range []spread.Summary{sa, sb} {
		if sp.Median > 0 {
			noise = max(noise, (sp.Max-sp.Min)/sp.Median)
		}
	}
	return noise, sa.Min <= sb.Max && sb.Min <= sa.Max
}

// cpusetSize is the number of server CPUs of u's layout.
func cpusetSize(f *results.File, u *results.Unit) int {
	if l := f.Layout(u.Layout); l != nil {
		return len(l.Server)
	}
	return 0
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// twPairFor is the first TIME_WAIT comparison of kind in s's scenarios on
// its first profile.
func twPairFor(f *results.File, s plan.Seed, kind string) (twPair, bool) {
	for _, p := range twPairs(f) {
		if p.kind == kind && slices.Contains(s.Scenarios, p.set.u.Scenario) && (len(s.Profiles) == 0 || p.set.u.Profile == s.Profiles[0]) {
			return p, true
		}
	}
	return twPair{}, false
}

// twReuseSeed: seed 002's one line, tcp_tw_reuse=1 raised a proxy that
// opens a backend connection per request from 433 to 9,000 req/s (a factor
// of 20). Reproduced: no 502 with it, and more 2xx/s than the default by
// keyCostRatio at least.
func twReuseSeed(f *results.File, s plan.Seed) seedOutcome {
	p, ok := twPairFor(f, s, keyTwReuse)
	if !ok || p.def == nil || p.def.rate <= 0 {
		return twReuseSearchSeed(f, s)
	}
	factor := p.set.rate / p.def.rate
	run := fmt.Sprintf("%s -> %s 2xx/s (%.1f×), %s 502s with it, %s without", fmtRate(p.def.rate), fmtRate(p.set.rate), factor, fmtInt(int64(p.set.n502)), fmtInt(int64(p.def.n502)))
	return seedOutcome{run: run, reproduced: yesNo(p.set.n502 == 0 && factor >= keyCostRatio), size: timesSeed(factor, s)}
}

// twBucketsSeed: seed 002's 2 GB server, whose 8,192 TIME_WAIT buckets
// made the kernel drop entries and free their ports, held 2,625 req/s
// against 433 on the 8 GB one. Reproduced: entries dropped, no 502, more
// 2xx/s than the default.
func twBucketsSeed(f *results.File, s plan.Seed) seedOutcome {
	p, ok := twPairFor(f, s, keyTwBuckets)
	if !ok || p.def == nil || p.def.rate <= 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	factor := p.set.rate / p.def.rate
	run := fmt.Sprintf("%s 2xx/s with %s buckets against %s (%.1f×), %s TIME_WAIT entries dropped, TIME_WAIT at most %s, %s 502s",
		fmtRate(p.set.rate), p.set.st.Sysctls[keyTwBuckets], fmtRate(p.def.rate), factor, fmtInt(int64(p.set.overflow)), fmtInt(int64(p.set.tw)), fmtInt(int64(p.set.n502)))
	return seedOutcome{run: run, reproduced: yesNo(p.set.overflow > 0 && p.set.n502 == 0 && factor > 1), size: timesSeed(factor, s)}
}

// quotaWorkersSeed: seed 001's "one CPU" was a quota, and nginx's
// worker_processes auto started a worker per machine CPU (eight) for one
// CPU of quota. This run: the workers nginx started under the quota
// (processes less the master); reproduced when they are more than the
// quota's cores. Other profiles of the seed are listed with their
// processes/threads under the quota and on the cpuset.
func quotaWorkersSeed(f *results.File, s plan.Seed) seedOutcome {
	pairs := quotaPairs(f)
	out := seedOutcome{run: "-", reproduced: seedNotMeasured}
	var parts []string
	for _, profile := range s.Profiles {
		for _, p := range pairs {
			if p.profile != profile || !slices.Contains(s.Scenarios, p.quota.Scenario) {
				continue
			}
			qp := p.qs.ProxySum
			if p.quota.Proxy == "nginx" && qp.ProcsMax > 1 && out.reproduced == seedNotMeasured {
				workers := qp.ProcsMax - 1
				parts = append(parts, fmt.Sprintf("%s: %d workers for %s CPU of quota (worker_processes auto)", profile, workers, fmtCoresQuota(qp.CPUQuota)))
				out.reproduced = yesNo(float64(workers) > qp.CPUQuota)
				out.size = fmt.Sprintf("%d workers against the seed's %d: one per online CPU here", workers, int(s.Value))
			} else {
				parts = append(parts, fmt.Sprintf("%s: %s processes/threads under the quota, %s on the cpuset", profile, procsText(qp), procsText(p.cs.ProxySum)))
			}
			break
		}
	}
	if len(parts) > 0 {
		out.run = strings.Join(parts, "; ")
	}
	return out
}

// twReuseSearchSeed is twReuseSeed for rate searches (seed 002's own
// method): the rate found with tcp_tw_reuse=1 against the rate found by
// the same profile's search of the same kind without kernel settings,
// both among s's scenarios.
func twReuseSearchSeed(f *results.File, s plan.Seed) seedOutcome {
	var with, without *results.Unit
	var plain []*results.Unit
	for _, u := range seedUnits(f, s, seedProfile(s, 0)) {
		if u.Method != plan.MethodSearch || u.Search == nil || len(u.Steps) == 0 {
			continue
		}
		if u.Steps[0].Sysctls[keyTwReuse] == "1" {
			if with == nil {
				with = u
			}
		} else if len(u.Steps[0].Sysctls) == 0 && u.Steps[0].ProxySum.CPUQuota == 0 {
			plain = append(plain, u)
		}
	}
	// The default on the same CPU layout first (a 4-CPU scenario runs
	// on fewer CPUs on a smaller machine, beside the 1-CPU one).
	for _, u := range plain {
		if without == nil || with != nil && u.Layout == with.Layout && without.Layout != with.Layout {
			without = u
		}
	}
	if with == nil || without == nil {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	a, b := without.Search.Rate, with.Search.Rate
	if !without.Search.Confirmed {
		a = 0
	}
	if !with.Search.Confirmed {
		b = 0
	}
	if a <= 0 {
		return seedOutcome{run: fmt.Sprintf("%s: no rate confirmed without tcp_tw_reuse (%s), %s req/s with it", with.Profile, without.Scenario, fmtRate(b)), reproduced: seedNotMeasured}
	}
	factor := b / a
	ge := ""
	if with.Search.Capped || with.Search.GeneratorLimited {
		ge = "≥ "
	}
	run := fmt.Sprintf("%s -> %s%s req/s found (%s%.1f×; %s, %s)", fmtRate(a), ge, fmtRate(b), ge, factor, without.Scenario, with.Scenario)
	return seedOutcome{run: run, reproduced: yesNo(factor >= keyCostRatio), size: timesSeed(factor, s)}
}

// cpusWord is "CPU 1" or "CPUs 0-1".
func cpusWord(c pin.CPUSet) string {
	if len(c) == 1 {
		return "CPU " + c.String()
	}
	return "CPUs " + c.String()
}

// missedRate says when a side of a quota comparison did not deliver the
// offered rate (its verdict failed): then the p99s compare overloads,
// not the quota.
func missedRate(q, c *results.Step) string {
	var parts []string
	for _, side := range []struct {
		name string
		st   *results.Step
	}{{"under the quota", q}, {"on the cpuset", c}} {
		if side.st.Verdict != string(search.Pass) {
			parts = append(parts, fmt.Sprintf("%s/s %s", fmtRate(side.st.Result.AchievedRate), side.name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	which := "one step"
	if len(parts) == 2 {
		which = "both steps"
	}
	return fmt.Sprintf("not a clean comparison: %s failed the pass criteria (delivered %s of %s/s offered), so the tails are overload's", which, strings.Join(parts, ", "), fmtRate(q.Rate))
}
