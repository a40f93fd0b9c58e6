package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// findings derives statements from the data, most important first.
func findings(f *results.File) []string {
	var out []string
	explained := map[*results.Step]bool{}
	out = append(out, deaths(f)...)
	out = append(out, portExhaustion(f, explained)...)
	out = append(out, workFailCycles(f)...)
	out = append(out, knobFindings(f, explained)...)
	out = append(out, connChurn(f, explained)...)
	out = append(out, poolLeak(f, explained)...)
	out = append(out, fileFindings(f)...)
	out = append(out, keyCosts(f)...)
	out = append(out, searchShapes(f)...)
	out = append(out, scaling(f)...)
	out = append(out, protocolFindings(f)...)
	out = append(out, memoryGrowth(f)...)
	out = append(out, latencyTails(f)...)
	out = append(out, generatorLimits(f)...)
	return out
}

// keyCosts: handshake rates by key type for the same proxy on the same
// layout (the key types may be in one scenario or in several). The P-256
// rate may be a lower bound (the search stopped at the generator's ceiling
// or above the generator's limit): then the factor is one too ("at least").
func keyCosts(f *results.File) []string {
	type key struct{ profile, layout, kind string }
	type rate struct {
		v     float64
		lower bool // the proxy may go higher
	}
	rates := map[key]map[string]rate{}
	var order []key
	for _, u := range f.Units {
		if !reportable(u) || u.Kind != plan.KindHandshake || u.Search == nil || !u.Search.Confirmed {
			continue
		}
		k := key{u.Profile, u.Layout, u.Kind}
		if rates[k] == nil {
			rates[k] = map[string]rate{}
			order = append(order, k)
		}
		rates[k][u.Key] = rate{u.Search.Rate, u.Search.Capped || u.Search.GeneratorLimited}
	}
	var out []string
	for _, k := range order {
		r := rates[k]
		p256 := r["p256"]
		if p256.v == 0 {
			continue
		}
		for _, rsa := range []string{"rsa4096", "rsa2048"} {
			v := r[rsa]
			if v.v == 0 || v.lower || p256.v/v.v < keyCostRatio {
				continue
			}
			at, fewer := fmtRate(p256.v), fmt.Sprintf("%.1fx fewer", p256.v/v.v)
			if p256.lower {
				at, fewer = "at least "+at+" (a lower bound: the search stopped at the generator's limit)", fmt.Sprintf("at least %.1fx fewer", p256.v/v.v)
			}
			out = append(out, fmt.Sprintf("%s (%s): %s new TLS connections/s with an ECDSA P-256 certificate, %s with %s (%s): on handshakes the certificate's key type decides the rate.",
				k.profile, k.kind, at, fmtRate(v.v), keyName(rsa), fewer))
			break
		}
	}
	return out
}

// searchShapes: queueing at the limit, and a collapse right above it.
func searchShapes(f *results.File) []string {
	var out []string
	for _, u := range f.Units {
		if !reportable(u) || u.Method != plan.MethodSearch || u.Search == nil || u.Search.LastPass == 0 {
			continue
		}
		r := searchRow(f, u)
		if r.step != nil && r.step.Result != nil && r.step.Result.Latency.P50 >= queueingP50Us && !r.genLim {
			out = append(out, fmt.Sprintf("%s (%s): median %s at its rate found of %s req/s: it is already queueing there, so that rate is a boundary it only just passes, not a comfortable operating point.",
				u.Profile, u.Scenario, fmtLatency(r.step.Result.Latency.P50), fmtRate(r.rate)))
		}
		var pass, fail *results.Step
		for _, st := range u.Steps {
			if st.Result == nil || st.Phase == string(search.PhaseConfirm) || st.Run != u.RowRun() {
				continue
			}
			if st.Verdict == string(search.Pass) && st.Rate == u.Search.LastPass {
				pass = st
			}
			// the lowest proxy failure above the last pass
			if st.Verdict == string(search.Fail) && st.Rate > u.Search.LastPass && (fail == nil || st.Rate < fail.Rate) {
				fail = st
			}
		}
		if pass != nil && fail != nil && fail.Result.AchievedRate < collapseShare*pass.Rate {
			s := fmt.Sprintf("%s (%s): throughput collapsed above %s req/s: offered %s, it delivered only %s/s", u.Profile, u.Scenario, fmtRate(pass.Rate), fmtRate(fail.Rate), fmtRate(fail.Result.AchievedRate))
			if pass.ProxySum.Samples > 0 {
				s += fmt.Sprintf(" (proxy CPU %.2f cores at the last pass, %.2f at the failure)", pass.ProxySum.CPUAvg, fail.ProxySum.CPUAvg)
			}
			out = append(out, s+".")
		}
	}
	return out
}

// scaling: the same scenario on layouts with different server CPU counts.
func scaling(f *results.File) []string {
	var out []string
	for _, t := range scalingRows(f) {
		if t.genLim || t.small <= 0 || t.large <= 0 || t.cpuRatio <= 1 {
			continue
		}
		factor := t.large / t.small
		switch {
		case factor < scaleFlat:
			out = append(out, fmt.Sprintf("%s (%s) did not scale: %s on %s, %s on %s (%s on %.0fx the CPUs).", t.profile, t.family, fmtRate(t.small), cpuWords(t.smallCPUs), fmtRate(t.large), cpuWords(t.largeCPUs), fmtFactor(factor), t.cpuRatio))
		case factor >= scaleLinearShare*t.cpuRatio:
			out = append(out, fmt.Sprintf("%s (%s) scaled almost linearly: %s on %.0fx the server CPUs.", t.profile, t.family, fmtFactor(factor), t.cpuRatio))
		}
	}
	return out
}

// memoryGrowth: memory under load far above idle.
func memoryGrowth(f *results.File) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range f.Units {
		if !reportable(u) || seen[u.Profile] {
			continue
		}
		pi := idleOf(f, u) // with the unit's routes
		if pi == nil || pi.IdleNeed == 0 {
			continue
		}
		var top *results.Step
		for _, st := range u.Steps {
			if st.Result != nil && (top == nil || st.ProxySum.NeedMax > top.ProxySum.NeedMax) {
				top = st
			}
		}
		if top == nil {
			continue
		}
		if m := top.ProxySum.NeedMax; float64(m) >= memGrowth*float64(pi.IdleNeed) && m >= memGrowthMin {
			seen[u.Profile] = true
			out = append(out, fmt.Sprintf("%s grew from %s idle to %s under load (anon+kernel, %s).", u.Profile, fmtMiB(pi.IdleNeed), fmtMiB(m), stepName(u, top)))
		}
	}
	return out
}

// latencyTails: a p95 far above the median at a fixed, moderate rate.
func latencyTails(f *results.File) []string {
	var out []string
	for _, u := range f.Units {
		if !reportable(u) || u.Method != plan.MethodFixed {
			continue
		}
		for _, r := range fixedRows(f, u) {
			if r.step == nil || r.genLim || r.errShare > 0.01 {
				continue
			}
			l := r.step.Result.Latency
			if l.P95 >= tailMinUs && l.P50 > 0 && l.P95 >= tailRatio*l.P50 {
				out = append(out, fmt.Sprintf("%s at %s req/s (%s): p95 %s with a median of %s.", u.Profile, fmtRate(r.rate), u.Scenario, fmtLatency(l.P95), fmtLatency(l.P50)))
			}
		}
	}
	return out
}

// generatorLimits: how many rows the generator bounded.
func generatorLimits(f *results.File) []string {
	var names []string
	for _, u := range f.Units {
		if !reportable(u) {
			continue
		}
		for _, r := range rowsOf(f, u) {
			if r.genLim {
				names = append(names, u.Scenario+" "+r.label(true))
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	return []string{fmt.Sprintf("In %d row(s) the generator, not the proxy, was the bottleneck (%s): those rows are marked † and left out of the rankings; give the generator more CPUs (cpus.loadgen, --loadgen-cpus) to measure them.", len(names), strings.Join(names, "; "))}
}
