package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// The seeds beside this machine: the report's first table. Each row is one
// of the plan's seeds (plan.Seed): the seed's number, cited in the plan,
// this run's number, whether the run reproduced the finding (the same
// effect in the same direction) and by how much the size differs.
//
// A row's measurement is a seedMeasure registered in seedMeasures under the
// plan's finding name. To add a row: write the measure (it reads only this
// run's results), add it to seedMeasures, and cite the seed in the plan's
// seeds: list. TestBuiltinSeedsHaveMeasures holds the built-in plans to it.

// seedMeasures are the findings a plan's seeds may name.
var seedMeasures = map[string]seedMeasure{
	"cliff":       cliffSeed,
	"pool-leak":   poolLeakSeed,
	"key-factor":  keyFactorSeed,
	"idle-memory": idleMemorySeed,
	// servers serving files themselves (files.go)
	"sendfile":     sendfileSeed,
	"https-faster": httpsFasterSeed,
	"per-core":     perCoreSeed,
	// the machine's knobs (findings_knobs.go)
	"tw-reuse":      twReuseSeed,
	"tw-buckets":    twBucketsSeed,
	"quota-workers": quotaWorkersSeed,
	// seed 001's table: apps behind one proxy by host (seeds_hosts.go)
	"hosts-idle-memory": hostsIdleSeed,
	"hosts-rate":        hostsRateSeed,
	"hosts-p99":         hostsP99Seed,
	"hosts-502":         hosts502Seed,
	"config-lines":      configLinesSeed,
	"h3-build":          h3BuildSeed,
	"restart":           restartSeed,
}

// seedLevelFactor: a level (an amount, not a comparison) is reproduced
// when this run's is within this factor of the seed's, either way.
const seedLevelFactor = 2.0

// seedsTable is the table of the plan's seeds; false when it cites none.
func seedsTable(f *results.File) (Table, bool) {
	if f.Plan == nil || len(f.Plan.Seeds) == 0 {
		return Table{}, false
	}
	t := Table{Caption: "Seeds beside this machine", Header: []string{"Seed", "Finding", "Seed's number", "This run", "Reproduced", "Size against the seed's"}}
	for _, s := range f.Plan.Seeds {
		o := seedOutcome{run: "-", reproduced: seedNotMeasured}
		if m, ok := seedMeasures[s.Finding]; ok {
			o = m(f, s)
			if yes, n := seedRounds(f, m, s); n > 0 {
				o.reproduced = roundsWords(yes, n)
			}
		} else {
			o.run = "no measurement called " + s.Finding + " in this version of loadlab"
		}
		run := o.run
		if s.Note != "" {
			run += " (" + s.Note + ")"
		}
		t.Rows = append(t.Rows, []string{s.Seed, s.Finding, s.Number, run, o.reproduced, orDash(o.size)})
		t.Marks = append(t.Marks, "")
		t.Footnotes = append(t.Footnotes, fmt.Sprintf("Seed %s, %s: \"%s\"", s.Seed, s.Finding, s.Says))
	}
	t.Footnotes = append(t.Footnotes, "Reproduced: the same effect in the same direction as the seed; the size may differ (last column). The seed's number is cited from the seed (the plan's seeds: list); every other number is this run's.")
	if n := roundCount(f); n > 1 {
		t.Footnotes = append(t.Footnotes, fmt.Sprintf("This run has %d rounds: a finding measured in each is judged in each, and Reproduced says in how many it held (yes when in most); This run's number is over all rounds (medians). A finding measured once (a scenario of rounds: 1, the idle memory) has one verdict.", n))
	}
	return t, true
}

// cliffSeed: seed 003's cliff, a proxy that opens a backend connection per
// request serves a port range's worth of requests and then answers 502.
// This run's number is the 2xx before the first failing second (with the
// requests in flight then), the failures' kind and when.
func cliffSeed(f *results.File, s plan.Seed) seedOutcome {
	for _, u := range seedUnits(f, s, seedProfile(s, 0)) {
		for _, st := range u.Steps {
			if st.Result == nil || st.Interrupted {
				continue
			}
			ps := st.Result.PerSecond
			ff := firstFailure(ps)
			if !ff.found {
				return seedOutcome{run: fmt.Sprintf("%s: no failure in %d s (%s 2xx/s)", u.Profile, len(ps), fmtRate(st.Result.AchievedRate)), reproduced: seedNo}
			}
			served := ff.okBefore
			if ff.drySecond >= 0 && ff.okUntilDry > served {
				served = ff.okUntilDry
			}
			fails := seriesFailures(ps)
			is502 := st.Result.Status["502"] > 0 && st.Result.Status["502"]*2 >= fails
			kind := "failures"
			if is502 {
				kind = "502"
			}
			run := fmt.Sprintf("%s then %s (t=%d s)", fmtInt(int64(served)), kind, ff.second)
			size := timesSeed(float64(served), s)
			if p, narrowed := stepPorts(f, st); p > 0 {
				run += fmt.Sprintf(", %s-port range", fmtInt(int64(p)))
				if narrowed {
					// The seed's number is its range less one: compare
					// the share of the range served, not the count.
					run += fmt.Sprintf(" (the scenario's ip_local_port_range; the machine's has %s)", fmtInt(int64(f.Machine.Ports())))
					size = fmt.Sprintf("%.2fx the range less one, as the seed's %s of its range", float64(served)/float64(p-1), fmtInt(int64(s.Value)))
				}
			}
			return seedOutcome{run: run, reproduced: yesNo(is502 && served > 0), size: size}
		}
	}
	return seedOutcome{run: "-", reproduced: seedNotMeasured}
}

// stepPorts is the ephemeral port range a step ran with: the scenario's
// ip_local_port_range as the proxy's namespace read it back (narrowed),
// else the machine's.
func stepPorts(f *results.File, st *results.Step) (ports int, narrowed bool) {
	if v, ok := st.Sysctls["net.ipv4.ip_local_port_range"]; ok {
		var lo, hi int
		if n, _ := fmt.Sscanf(v, "%d %d", &lo, &hi); n == 2 && hi >= lo && lo > 0 {
			return hi - lo + 1, hi-lo+1 != f.Machine.Ports()
		}
	}
	return f.Machine.Ports(), false
}

// poolLeakSeed: seed 003's pool leak, a backend pool smaller than the
// concurrency closes the rest after each request, so closed connections
// pile up in TIME_WAIT; the larger pool does not. Profiles: the leaking
// one, then its fix.
func poolLeakSeed(f *results.File, s plan.Seed) seedOutcome {
	peak := func(profile string) (tw int, cpr float64, ok bool) {
		var reqs, conns uint64
		for _, u := range seedUnits(f, s, profile) {
			for _, st := range u.Steps {
				if st.Result == nil {
					continue
				}
				ok = true
				tw = max(tw, maxTimeWait(st.Proxy))
				if st.Backend.Valid {
					reqs += st.Backend.Requests
					conns += st.Backend.Accepted
				}
			}
		}
		cpr = -1
		if reqs > 0 {
			cpr = float64(conns) / float64(reqs)
		}
		return tw, cpr, ok
	}
	leaky, fixed := seedProfile(s, 0), seedProfile(s, 1)
	tw, cpr, ok := peak(leaky)
	if !ok {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	ports := f.Machine.Ports()
	run := fmt.Sprintf("%s: TIME_WAIT up to %s", leaky, fmtInt(int64(tw)))
	size := ""
	if ports > 0 {
		run += fmt.Sprintf(" (%.0f%% of the range)", 100*float64(tw)/float64(ports))
		size = fmt.Sprintf("%.0f%% of the range against the seed's 100%%", 100*float64(tw)/float64(ports))
	}
	if cpr >= 0 {
		run += fmt.Sprintf(", %.2f new backend connections per request", cpr)
	}
	leak := tw >= leakMinTimeWait && cpr > 0.02 && cpr < newConnPerReq
	if fixed != "" {
		if ftw, fcpr, fok := peak(fixed); fok {
			run += fmt.Sprintf("; %s: %s", fixed, fmtInt(int64(ftw)))
			if fcpr >= 0 {
				run += fmt.Sprintf(", %.2f per request", fcpr)
			}
			leak = leak && ftw*10 <= tw
		}
	}
	return seedOutcome{run: run, reproduced: yesNo(leak), size: size}
}

// keyFactorSeed: seed 002's key-type factor, the handshake rate with the
// first key type over the rate with the second, on one proxy. A first rate
// that is a lower bound (the search stopped at the generator's limit)
// makes the factor one too.
func keyFactorSeed(f *results.File, s plan.Seed) seedOutcome {
	if len(s.Keys) < 2 {
		return seedOutcome{run: "the plan's seed names fewer than two keys", reproduced: seedNotMeasured}
	}
	type found struct {
		rate  float64
		lower bool
	}
	by := map[string]found{}
	for _, u := range seedUnits(f, s, seedProfile(s, 0)) {
		if u.Search == nil || !u.Search.Confirmed {
			continue
		}
		by[u.Key] = found{u.Search.Rate, u.Search.Capped || u.Search.GeneratorLimited}
	}
	a, b := by[s.Keys[0]], by[s.Keys[1]]
	if a.rate == 0 || b.rate == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	factor := a.rate / b.rate
	ge := ""
	if a.lower {
		ge = "≥ "
	}
	run := fmt.Sprintf("%s%.1fx (%s: %s%s vs %s new TLS connections/s)", ge, factor, seedProfile(s, 0), ge, fmtRate(a.rate), fmtRate(b.rate))
	if b.lower {
		// The slower key's rate is a lower bound too: the factor is
		// not known.
		return seedOutcome{run: run + "; the " + keyName(s.Keys[1]) + " rate is a lower bound", reproduced: seedNotMeasured}
	}
	size := timesSeed(factor, s)
	if size != "" && a.lower {
		size = "≥ " + size
	}
	return seedOutcome{run: run, reproduced: yesNo(factor >= keyCostRatio), size: size}
}

// idleMemorySeed: seed 001's idle memory of one proxy, memory.current of
// its cgroup (what the seed's cap charged), median after one request and
// the plan's quiet time. A level: reproduced within seedLevelFactor.
func idleMemorySeed(f *results.File, s plan.Seed) seedOutcome {
	profile := seedProfile(s, 0)
	var vals []uint64
	var need uint64
	for _, p := range f.Proxies {
		if p.Profile == profile && p.Error == "" && p.IdleMemory > 0 {
			vals = append(vals, p.IdleMemory)
			need = p.IdleNeed
		}
	}
	if len(vals) == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	mib := float64(vals[(len(vals)-1)/2]) / (1 << 20)
	run := fmt.Sprintf("%s: %.1f MiB idle", profile, mib)
	if need > 0 {
		run += fmt.Sprintf(" (anon+kernel %s)", fmtMiB(need))
	}
	o := seedOutcome{run: run, reproduced: seedNotMeasured, size: timesSeed(mib, s)}
	if s.Value > 0 {
		o.reproduced = yesNo(mib <= s.Value*seedLevelFactor && mib*seedLevelFactor >= s.Value)
	}
	return o
}

// seedNames lists the registered measurements (for errors and tests).
func seedNames() string {
	var names []string
	for n := range seedMeasures {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
