package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// label is the row's proxy cell: the profile and, when it matters, the key.
func (r row) label(withKey bool) string {
	name := r.profile
	if r.version != "" {
		name += " [" + r.version + "]"
	}
	if withKey {
		return name + knobsLabel(r) + " (" + keyName(r.key) + ")"
	}
	return name + knobsLabel(r)
}

// withVersions labels the rows with their binaries' versions where rows
// of one server ran two versions (seed 003's nginx 1.28.3 beside 1.31.6).
func withVersions(f *results.File, rows []row) {
	versions := map[string]map[string]bool{} // server -> versions
	ver := func(r row) (server, version string) {
		if pi := f.ProxyInfo(r.unit.Layout, r.unit.Profile, r.unit.Key); pi != nil {
			return r.unit.Proxy, pi.Version
		}
		return r.unit.Proxy, ""
	}
	for _, r := range rows {
		s, v := ver(r)
		if v == "" {
			continue
		}
		if versions[s] == nil {
			versions[s] = map[string]bool{}
		}
		versions[s][v] = true
	}
	for i := range rows {
		if s, v := ver(rows[i]); v != "" && len(versions[s]) > 1 {
			rows[i].version = v
		}
	}
}

// newRow fills what every kind of row shares from step st.
func newRow(f *results.File, u *results.Unit, st *results.Step) row {
	r := row{unit: u, step: st, profile: u.Profile, key: u.Key, genText: "ok"}
	if pi := idleOf(f, u); pi != nil {
		r.memIdle = pi.IdleNeed
	}
	if st == nil || st.Result == nil {
		r.genText = "-"
		return r
	}
	res := st.Result
	r.achieved = res.AchievedRate
	r.errShare = search.MeasureOf(res).ErrorShare()
	if res.Generator.Bottleneck {
		r.genLim, r.genText, r.genWhy = true, "bottleneck", res.Generator.Reason
	}
	r.headroom = loadWords(res.Generator)
	return r
}

// genLoad is the largest share of wall time a generator loop had no time
// to spare (busy + starved), -1 when the result does not say.
func genLoad(g result.Generator) float64 {
	load := -1.0
	for i, b := range g.Busy {
		s := 0.0
		if i < len(g.Starved) {
			s = g.Starved[i]
		}
		load = max(load, b+s)
	}
	return load
}

// loadWords says how loaded the generator's busiest loop was.
func loadWords(g result.Generator) string {
	if l := genLoad(g); l >= 0 {
		return fmt.Sprintf("busy+starved %.0f%%", 100*l)
	}
	return ""
}

// searchRow is the row of a rate search: the rate found, with the latency
// measured at exactly that rate (its last passing confirmation).
func searchRow(f *results.File, u *results.Unit) row {
	var best *results.Step
	sr := u.Search
	run := u.RowRun() // the row's search, of several
	best = u.ConfirmedStep(sr, run)
	if best == nil { // not confirmed: the highest passing step, if any
		for _, st := range u.Steps {
			if st.Run == run && st.Verdict == string(search.Pass) && st.Result != nil && (best == nil || st.Rate > best.Rate) {
				best = st
			}
		}
	}
	r := newRow(f, u, best)
	ceil, ceilByGen := f.CeilingOf(u).CeilingRate()
	switch {
	case sr != nil && sr.Confirmed:
		r.rate = sr.Rate
		switch {
		case sr.Capped && ceilByGen && u.MaxRate == ceil:
			r.rateText = "≥ " + fmtRate(sr.Rate) + " (generator ceiling on this machine)"
			if sr.Rate < ceil { // confirmed a step down from it
				r.rateText = "≥ " + fmtRate(sr.Rate) + " (at the generator ceiling on this machine, " + fmtRate(ceil) + ")"
			}
			r.atCeil = true
		case sr.Capped:
			r.rateText = "≥ " + fmtRate(sr.Rate) + " (plan max)"
		}
	case sr != nil && sr.LastPass > 0:
		r.rateText = "not confirmed (last pass " + fmtRate(sr.LastPass) + ")"
	case sr != nil:
		r.rateText = "none passed (lowest tried " + fmtRate(sr.FirstFail) + ")"
	default:
		r.rateText = "-"
	}
	if vals, prec := searchRuns(f, u); r.rate > 0 && len(vals) > 0 {
		r.setRuns(vals, prec)
	}
	if ceil > 0 && r.rate > 0 {
		h := fmt.Sprintf("ceiling %s, %.1fx", fmtRate(ceil), ceil/r.rate)
		switch {
		case r.atCeil:
			h = "none: at the ceiling"
		case !ceilByGen && ceil < r.rate:
			// The reference target gave up first, below this proxy:
			// the generator's limit is above both, by an unknown factor.
			h = fmt.Sprintf("unknown: above %s (the reference target's limit, not the generator's)", fmtRate(r.rate))
		case !ceilByGen:
			h = "≥ " + h
		}
		if l := loadWords(rowGen(r)); l != "" {
			h += "; " + l
		}
		r.headroom = h
	}
	if sr != nil && sr.GeneratorLimited {
		r.genLim = true
		r.genText = "bottleneck above this rate"
		if r.genWhy == "" {
			r.genWhy = generatorReason(u)
		}
		if sr.Confirmed {
			// Over several searches the value is their median with its
			// range, as the column's footnote says, not the row search's.
			r.rateText = "≥ " + r.valueText()
		}
	}
	return r
}

// rowGen is the generator account of the row's step.
func rowGen(r row) result.Generator {
	if r.step == nil || r.step.Result == nil {
		return result.Generator{}
	}
	return r.step.Result.Generator
}

// generatorReason is the reason of the unit's first generator-limited step.
func generatorReason(u *results.Unit) string {
	for _, st := range u.Steps {
		if st.Verdict == string(search.GenLimited) && st.Result != nil {
			return fmt.Sprintf("at %s req/s: %s", fmtRate(st.Rate), st.Result.Generator.Reason)
		}
	}
	return ""
}

// fixedRows gives one row per offered rate: the median run by p99, with
// every run's p99 listed.
func fixedRows(f *results.File, u *results.Unit) []row {
	var rates []float64
	by := map[float64][]*results.Step{}
	for _, st := range u.Steps {
		if st.Result == nil || st.Interrupted {
			continue
		}
		if _, ok := by[st.Rate]; !ok {
			rates = append(rates, st.Rate)
		}
		by[st.Rate] = append(by[st.Rate], st)
	}
	var rows []row
	for _, rate := range rates {
		steps := slices.Clone(by[rate])
		sort.SliceStable(steps, func(i, j int) bool { return steps[i].Result.Latency.P99 < steps[j].Result.Latency.P99 })
		med := steps[(len(steps)-1)/2]
		r := newRow(f, u, med)
		r.rate = rate
		if len(steps) > 1 {
			var p99s []string
			for _, st := range by[rate] {
				p99s = append(p99s, fmtLatency(st.Result.Latency.P99))
			}
			r.runs = "p99 per run: " + strings.Join(p99s, ", ")
		}
		// The row is the median run: its generator's verdict is the row's;
		// other runs' bottlenecks are counted beside their p99s (with
		// rounds, one noisy minute out of three must not drop the row).
		if g := med.Result.Generator; g.Bottleneck {
			r.genLim, r.genText, r.genWhy = true, "bottleneck", g.Reason
		}
		others := 0
		for _, st := range steps {
			if st != med && st.Result.Generator.Bottleneck {
				others++
			}
		}
		if others > 0 {
			r.runs += fmt.Sprintf("; the generator was the bottleneck in %d other run(s) of %d", others, len(steps))
		}
		rows = append(rows, r)
	}
	return rows
}

// closedRow is the middle run by 2xx rate (seed 001: "the middle run by
// requests per second, and the 99th percentile from that same run").
func closedRow(f *results.File, u *results.Unit) (row, bool) {
	var steps []*results.Step
	for _, st := range u.Steps {
		if st.Result != nil && !st.Interrupted {
			steps = append(steps, st)
		}
	}
	if len(steps) == 0 {
		return row{}, false
	}
	sorted := slices.Clone(steps)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Result.AchievedRate < sorted[j].Result.AchievedRate })
	med := sorted[(len(sorted)-1)/2]
	r := newRow(f, u, med)
	r.rate = med.Result.AchievedRate
	var vals []float64
	for _, st := range steps {
		vals = append(vals, st.Result.AchievedRate)
	}
	r.setRuns(vals, noiseFloor)
	if len(steps) > 1 {
		var rs []string
		for _, st := range steps {
			rs = append(rs, fmtRate(st.Result.AchievedRate))
		}
		r.runs = fmt.Sprintf("median of %d runs (%s)", len(steps), strings.Join(rs, ", "))
	}
	return r, true
}

// rowsOf returns a unit's table rows, marked (rank.go).
func rowsOf(f *results.File, u *results.Unit) []row {
	var rows []row
	switch u.Method {
	case plan.MethodSearch:
		rows = []row{searchRow(f, u)}
	case plan.MethodFixed:
		rows = fixedRows(f, u)
	default:
		if r, ok := closedRow(f, u); ok {
			rows = []row{r}
		}
	}
	for i := range rows {
		limitRow(&rows[i])
	}
	if n := roundCount(f); n > 1 && u.Method != plan.MethodFixed && len(rows) == 1 {
		for k := 1; k <= n; k++ {
			v, _, ok := f.RoundValue(u, k)
			if !ok {
				v = 0
			}
			rows[0].rounds = append(rows[0].rounds, v)
		}
	}
	markRows(rows)
	return rows
}

// reportable reports whether a unit has results to show.
func reportable(u *results.Unit) bool {
	return u.Status == results.StatusDone && len(u.Steps) > 0
}
