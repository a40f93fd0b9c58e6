package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// scaleRow is one proxy's result of one test on its smallest and largest
// server CPU layouts.
type scaleRow struct {
	family, profile, key string
	small, large         float64
	smallCPUs, largeCPUs int
	cpuRatio             float64
	genLim               bool
	perLayout            map[string]float64
	limits               []string // per layout, fewest CPUs first: "1 CPU: proxy"
}

// scalingRows finds tests run on more than one layout (a plan's scaling
// runs: the same scenario with different server_cpus).
func scalingRows(f *results.File) []scaleRow {
	type point struct {
		cpus   int
		rate   float64
		genLim bool
		layout string
		limit  string
	}
	groups := map[string][]point{}
	var order []string
	for _, u := range f.Units {
		if !reportable(u) || u.Method == plan.MethodFixed {
			continue
		}
		l := f.Layout(u.Layout)
		if l == nil {
			continue
		}
		rows := rowsOf(f, u)
		if len(rows) == 0 {
			continue
		}
		r := rows[0]
		rate := r.rate
		if r.rateText != "" && !r.genLim {
			rate = 0
		}
		fam := u.Family
		if fam == "" {
			fam = u.Scenario
		}
		k := fam + "\x00" + u.Profile + "\x00" + u.Key
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], point{cpus: len(l.Server), rate: rate, genLim: r.genLim, layout: u.Layout, limit: r.limitedBy})
	}
	var out []scaleRow
	for _, k := range order {
		pts := groups[k]
		if len(pts) < 2 {
			continue
		}
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].cpus < pts[j].cpus })
		lo, hi := pts[0], pts[len(pts)-1]
		if lo.cpus == hi.cpus {
			continue
		}
		u := unitByKey(f, k)
		sr := scaleRow{family: u.Family, profile: u.Profile, key: u.Key, small: lo.rate, large: hi.rate,
			smallCPUs: lo.cpus, largeCPUs: hi.cpus, cpuRatio: float64(hi.cpus) / float64(lo.cpus), perLayout: map[string]float64{}}
		for _, p := range pts {
			sr.genLim = sr.genLim || p.genLim
			sr.perLayout[p.layout] = p.rate
			sr.limits = append(sr.limits, fmt.Sprintf("%d CPU: %s", p.cpus, orDash(p.limit)))
		}
		out = append(out, sr)
	}
	return out
}

func unitByKey(f *results.File, k string) *results.Unit {
	for _, u := range f.Units {
		fam := u.Family
		if fam == "" {
			fam = u.Scenario
		}
		if fam+"\x00"+u.Profile+"\x00"+u.Key == k {
			return u
		}
	}
	return &results.Unit{}
}

// scalingTable shows each proxy's result per layout and the factor between
// its smallest and largest layout.
func scalingTable(f *results.File) (Table, bool) {
	rows := scalingRows(f)
	if len(rows) == 0 {
		return Table{}, false
	}
	var layouts []string
	for _, l := range f.Layouts {
		for _, r := range rows {
			if _, ok := r.perLayout[l.ID]; ok && !contains(layouts, l.ID) {
				layouts = append(layouts, l.ID)
			}
		}
	}
	t := Table{Caption: "Scaling across server CPU counts", Header: []string{"Test", "Proxy"}}
	for _, id := range layouts {
		l := f.Layout(id)
		t.Header = append(t.Header, fmt.Sprintf("%d server CPU(s)", len(l.Server)))
	}
	t.Header = append(t.Header, "Factor", limitHeader)
	for _, r := range rows {
		line := []string{r.family, r.profile + " (" + keyName(r.key) + ")"}
		for _, id := range layouts {
			v, ok := r.perLayout[id]
			switch {
			case !ok:
				line = append(line, "-")
			case v == 0:
				line = append(line, "no rate")
			default:
				line = append(line, fmtRate(v))
			}
		}
		factor := "-"
		if r.small > 0 && r.large > 0 {
			factor = fmt.Sprintf("%s on %.0fx the CPUs", fmtFactor(r.large/r.small), r.cpuRatio)
		}
		t.Rows = append(t.Rows, append(line, factor, strings.Join(r.limits, ", ")))
		t.Marks = append(t.Marks, map[bool]string{true: "†"}[r.genLim])
	}
	if slices.Contains(t.Marks, "†") {
		t.Footnotes = append(t.Footnotes, "† the generator was the bottleneck in at least one of the runs: the factor is not the proxy's.")
	}
	return t, true
}
