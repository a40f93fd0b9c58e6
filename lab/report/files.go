package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// Seed 003's file-serving table and findings: the servers that serve the
// lab's files themselves (origin scenarios), one row per server x size x
// scheme, the median run with the spread of the runs (lab/spread).

// fileFloor is the relative run-to-run noise of one closed-loop run that
// two sets of runs are widened by before they are called different (seed
// 003: "run-to-run spread stayed at or under 3.1% on the file tests").
const fileFloor = 0.03

// cpuBoundShare: a server that used at least this share of its CPUs in
// every file test was CPU-bound (seed 003: 1.86 to 1.95 of 2 cores).
const cpuBoundShare = 0.85

// fileRow is one server on one file test.
type fileRow struct {
	row
	test    fileTest
	origin  *results.ProfileRecord
	cpus    int       // server CPUs of the layout
	rates   []float64 // 2xx/s of every run
	perCore []float64 // 2xx/s per core of every run with CPU measured
	cores   float64   // the row's (median) run's server CPU
}

// fileTest is one size over one scheme.
type fileTest struct {
	size, scheme string
}

// words names the test as the seed does: "1 KB over HTTP".
func (t fileTest) words() string {
	return sizeWords(t.size) + " over " + strings.ToUpper(t.scheme)
}

// perCoreRate is the row's 2xx/s per server core (0 when its CPU was not
// measured).
func (r fileRow) perCoreRate() float64 {
	if r.cores <= 0 {
		return 0
	}
	return r.rate / r.cores
}

// fileRows are the rows of the origin scenarios, by test (size, then
// scheme: HTTP first) and then in run order.
func fileRows(f *results.File) []fileRow {
	var out []fileRow
	for i := range f.Plan.Scenarios {
		s := &f.Plan.Scenarios[i]
		if !s.IsOrigin() {
			continue
		}
		test := fileTest{size: s.Size, scheme: s.Scheme}
		if test.size == "" {
			test.size = plan.SizeOfPath(s.Path)
		}
		for _, u := range unitsOf(f, s.Name) {
			prof := profileOf(f, u.Profile)
			if prof == nil {
				continue
			}
			rows := rowsOf(f, u)
			if len(rows) == 0 {
				continue
			}
			fr := fileRow{row: rows[0], test: test, origin: prof}
			if l := f.Layout(u.Layout); l != nil {
				fr.cpus = len(l.Server)
			}
			for _, st := range u.Steps {
				if st.Result == nil || st.Interrupted {
					continue
				}
				fr.rates = append(fr.rates, st.Result.AchievedRate)
				if st.ProxySum.Samples > 0 && st.ProxySum.CPUAvg > 0 {
					fr.perCore = append(fr.perCore, st.Result.AchievedRate/st.ProxySum.CPUAvg)
				}
			}
			if fr.step != nil && fr.step.ProxySum.Samples > 0 {
				fr.cores = fr.step.ProxySum.CPUAvg
			}
			out = append(out, fr)
		}
	}
	order := func(t fileTest) int {
		i := slices.Index(plan.SizeNames(), t.size) * 2
		if t.scheme == plan.SchemeHTTPS {
			i++
		}
		return i
	}
	slices.SortStableFunc(out, func(a, b fileRow) int { return order(a.test) - order(b.test) })
	return out
}

// filesTable is seed 003's table; false when the plan ran no origin.
func filesTable(f *results.File) (Table, bool) {
	rows := fileRows(f)
	if len(rows) == 0 {
		return Table{}, false
	}
	t := Table{Caption: "Serving files", Header: []string{"Server", "Size", "Scheme", "2xx/s", "p99", "Server CPU", "2xx/s per core", "Run spread", limitHeader}}
	var plain []row
	for _, r := range rows {
		p99 := "-"
		if r.step != nil && r.step.Result != nil {
			p99 = fmtLatency(r.step.Result.Latency.P99)
		}
		cpu, perCore := "-", "-"
		if r.step != nil {
			cpu = fmtCores(r.step.ProxySum.CPUAvg, r.step.ProxySum.Samples)
			if r.cpus > 0 && r.step.ProxySum.Samples > 0 {
				cpu += fmt.Sprintf(" of %d", r.cpus)
			}
		}
		if pc := r.perCoreRate(); pc > 0 {
			perCore = fmtRate(pc)
		}
		t.Rows = append(t.Rows, []string{r.profile, sizeWords(r.test.size), strings.ToUpper(r.test.scheme), fmtRate(r.rate), p99, cpu, perCore, spreadWords(r.rates), limitCell(r.row)})
		plain = append(plain, r.row)
	}
	finish(&t, plain)
	t.Footnotes = append(t.Footnotes,
		"Each server serves the lab's files itself (the backend's bytes, the same for every server); the row is the median run by 2xx/s, its p99 and server CPU from that run. Run spread: (max − min) / median of the runs' 2xx/s, with their min–max.",
		"2xx/s per core: 2xx/s over the server CPU the server's cgroup used in that run. caddy-respond serves no file (respond \"hello\" 200): the cost of Caddy's request path without the file.")
	return t, true
}

// spreadWords says how far the runs' rates spread: "2.1% (20,981–21,420,
// n=3)".
func spreadWords(rates []float64) string {
	s := spread.Of(rates)
	switch {
	case s.N == 0:
		return "-"
	case s.N == 1:
		return "one run"
	case s.Median <= 0:
		return fmt.Sprintf("n=%d", s.N)
	}
	return fmt.Sprintf("%.1f%% (%s–%s, n=%d)", 100*(s.Max-s.Min)/s.Median, fmtRate(s.Min), fmtRate(s.Max), s.N)
}

// fileFindings: per test, how much faster per core the fastest file
// server was than each other; the sendfile effect; a server faster over
// HTTPS than over HTTP; the cost of the file path (caddy-respond beside
// caddy-files); whether the servers were CPU-bound.
func fileFindings(f *results.File) []string {
	rows := fileRows(f)
	if len(rows) == 0 {
		return nil
	}
	var out []string
	out = append(out, perCoreFindings(rows)...)
	out = append(out, sendfileFindings(rows)...)
	out = append(out, schemeFindings(rows)...)
	out = append(out, respondFindings(rows)...)
	out = append(out, cpuBoundFinding(rows)...)
	return out
}

// tests lists the tests of rows in row order.
func tests(rows []fileRow) []fileTest {
	var ts []fileTest
	for _, r := range rows {
		if !slices.Contains(ts, r.test) {
			ts = append(ts, r.test)
		}
	}
	return ts
}

// perCoreFindings: in each test, the file server with the most 2xx/s per
// core against each other file server (rows a mark leaves out of
// rankings, and caddy-respond, are not compared).
func perCoreFindings(rows []fileRow) []string {
	var out []string
	for _, t := range tests(rows) {
		var in []fileRow
		for _, r := range rows {
			if r.test == t && r.origin.ServesFiles() && r.ranked() && r.perCoreRate() > 0 {
				in = append(in, r)
			}
		}
		if len(in) < 2 {
			continue
		}
		slices.SortStableFunc(in, func(a, b fileRow) int {
			switch {
			case a.perCoreRate() > b.perCoreRate():
				return -1
			case a.perCoreRate() < b.perCoreRate():
				return 1
			}
			return 0
		})
		best := in[0]
		var parts, tied []string
		for _, o := range in[1:] {
			if spread.Tied(o.perCore, best.perCore, fileFloor) {
				tied = append(tied, o.profile)
				continue
			}
			parts = append(parts, fmt.Sprintf("%s faster per core than %s (%s vs %s 2xx/s per core)", fmtFactor(best.perCoreRate()/o.perCoreRate()), o.profile, fmtRate(best.perCoreRate()), fmtRate(o.perCoreRate())))
		}
		s := fmt.Sprintf("%s served %s ", best.profile, t.words())
		switch {
		case len(parts) > 0:
			s += strings.Join(parts, ", ")
			if len(tied) > 0 {
				s += "; tied within run-to-run noise with " + strings.Join(tied, ", ")
			}
		default:
			s = fmt.Sprintf("%s: %s and %s served as much per core, within run-to-run noise", upperFirst(t.words()), best.profile, strings.Join(tied, ", "))
		}
		out = append(out, s+".")
	}
	return out
}

// sendfileFindings: nginx-files against nginx-files-nosendfile in each
// test they both ran.
func sendfileFindings(rows []fileRow) []string {
	var out []string
	for _, t := range tests(rows) {
		on, off := findFileRow(rows, t, "nginx-files"), findFileRow(rows, t, "nginx-files-nosendfile")
		if on == nil || off == nil || on.rate <= 0 || off.rate <= 0 || !on.ranked() || !off.ranked() {
			continue
		}
		change := pctChange(off.rate / on.rate)
		if spread.Tied(off.rates, on.rates, fileFloor) {
			why := ""
			if t.scheme == plan.SchemeHTTPS {
				why = ": over TLS nginx reads and encrypts every body in userspace either way (no kernel TLS)"
			}
			out = append(out, fmt.Sprintf("Sendfile on and off could not be told apart on %s: %s 2xx/s with it, %s without (%s), within the runs' spread%s.", t.words(), fmtRate(on.rate), fmtRate(off.rate), change, why))
			continue
		}
		verb := "fell"
		if off.rate > on.rate {
			verb = "rose"
		}
		s := fmt.Sprintf("With sendfile off, nginx's %s %s from %s to %s 2xx/s (%s)", t.words(), verb, fmtRate(on.rate), fmtRate(off.rate), change)
		if a, b := on.perCoreRate(), off.perCoreRate(); a > 0 && b > 0 {
			s += fmt.Sprintf("; per core %s vs %s", fmtRate(a), fmtRate(b))
		}
		out = append(out, s+notBound(*on, *off)+".")
	}
	return out
}

// schemeFindings: a server that served a size faster over HTTPS than over
// HTTP, beyond the runs' spread.
func schemeFindings(rows []fileRow) []string {
	var out []string
	for _, r := range rows {
		if r.test.scheme != plan.SchemeHTTPS || !r.ranked() {
			continue
		}
		h := findFileRow(rows, fileTest{size: r.test.size, scheme: plan.SchemeHTTP}, r.profile)
		if h == nil || !h.ranked() || r.rate <= h.rate || spread.Tied(h.rates, r.rates, fileFloor) {
			continue
		}
		out = append(out, fmt.Sprintf("%s served %s faster over HTTPS (%s 2xx/s) than over plain HTTP (%s, %s): TLS is not what limits it there%s.",
			r.profile, sizeWords(r.test.size), fmtRate(r.rate), fmtRate(h.rate), fmtFactor(r.rate/h.rate), notBound(r, *h)))
	}
	return out
}

// respondFindings: a fixed-body origin (caddy-respond) against the same
// server serving its smallest file, per scheme.
func respondFindings(rows []fileRow) []string {
	smallest := map[string]int{} // scheme -> index of the smallest size run
	for _, r := range rows {
		i := slices.Index(plan.SizeNames(), r.test.size)
		if j, ok := smallest[r.test.scheme]; !ok || i < j {
			smallest[r.test.scheme] = i
		}
	}
	var out []string
	for _, r := range rows {
		if r.origin.ServesFiles() || !r.ranked() || r.rate <= 0 || slices.Index(plan.SizeNames(), r.test.size) != smallest[r.test.scheme] {
			continue
		}
		for _, o := range rows {
			if o.test != r.test || o.origin.Proxy != r.origin.Proxy || !o.origin.ServesFiles() || !o.ranked() || o.rate <= 0 || spread.Tied(o.rates, r.rates, fileFloor) {
				continue
			}
			out = append(out, fmt.Sprintf("%s answered %s 2xx/s in the %s test without a file, %s %s serving its file (%s): the file path, not the HTTP, makes the difference.",
				r.profile, fmtRate(r.rate), r.test.words(), fmtFactor(r.rate/o.rate), o.profile, fmtRate(o.rate)))
		}
	}
	return out
}

// cpuBoundFinding: the servers' CPU against their cores over every file
// row with CPU measured.
func cpuBoundFinding(rows []fileRow) []string {
	lo, hi, n, cpus := 0.0, 0.0, 0, 0
	var below []string
	for _, r := range rows {
		if r.cores <= 0 || r.cpus <= 0 {
			continue
		}
		if n == 0 || r.cores < lo {
			lo = r.cores
		}
		hi = max(hi, r.cores)
		n++
		cpus = max(cpus, r.cpus)
		if r.cores < cpuBoundShare*float64(r.cpus) {
			below = append(below, fmt.Sprintf("%s on %s (%.2f)", r.profile, r.test.words(), r.cores))
		}
	}
	if n == 0 {
		return nil
	}
	if len(below) == 0 {
		return []string{fmt.Sprintf("The servers were CPU-bound in every file test: %.2f to %.2f of their %s busy.", lo, hi, cpuWords(cpus))}
	}
	which := strings.Join(below, ", ")
	if len(below) > 3 {
		which = fmt.Sprintf("%d of the %d rows, %s among them,", len(below), n, strings.Join(below[:3], ", "))
	}
	s := fmt.Sprintf("Not every server was CPU-bound in the file tests (%.2f to %.2f of %s): %s used less than %.0f%% of its CPUs, so something else (the generator, other load on the machine, the network) limited it there; the Limited by column says what", lo, hi, cpuWords(cpus), which, 100*cpuBoundShare)
	if st := maxStarved(rows); st >= starvedShare {
		s += fmt.Sprintf("; the generator's loop waited for a CPU up to %.0f%% of a run (starved): the machine was busy with other work, so these rates are not the servers' own", 100*st)
	}
	return []string{s + "."}
}

// starvedShare: a generator loop starved (runnable, no CPU) this share of
// a run says the machine was busy with other work.
const starvedShare = 0.2

// maxStarved is the largest starved share of a generator loop in the
// rows' runs.
func maxStarved(rows []fileRow) float64 {
	m := 0.0
	for _, r := range rows {
		for _, st := range r.unit.Steps {
			if st.Result == nil {
				continue
			}
			for _, v := range st.Result.Generator.Starved {
				m = max(m, v)
			}
		}
	}
	return m
}

// notBound says, for a finding about rows, which of them no CPU of the
// server limited: their rates say as much about the rest of the machine.
func notBound(rows ...fileRow) string {
	var names []string
	for _, r := range rows {
		if r.cpus > 0 && r.cores < cpuBoundShare*float64(r.cpus) {
			names = append(names, fmt.Sprintf("%s on %s at %.2f of %s", r.profile, r.test.words(), r.cores, cpuWords(r.cpus)))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " (not CPU-bound: " + strings.Join(names, ", ") + ")"
}

// pctChange writes a ratio as a change: 0.4 -> "-60%", 1.003 -> "±0%".
func pctChange(ratio float64) string {
	p := 100 * (ratio - 1)
	if p > -0.5 && p < 0.5 {
		return "±0%"
	}
	return fmt.Sprintf("%+.0f%%", p)
}

// findFileRow is profile's row of test t.
func findFileRow(rows []fileRow, t fileTest, profile string) *fileRow {
	for i := range rows {
		if rows[i].test == t && rows[i].profile == profile {
			return &rows[i]
		}
	}
	return nil
}

// seedFileRows are the file rows of seed s's scenarios.
func seedFileRows(f *results.File, s plan.Seed) []fileRow {
	var out []fileRow
	for _, r := range fileRows(f) {
		if r.unit != nil && slices.Contains(s.Scenarios, r.unit.Scenario) {
			out = append(out, r)
		}
	}
	return out
}

// sendfileSeed: seed 003's sendfile effect, nginx's 100 KB over HTTP with
// sendfile on (profiles[0]) and off (profiles[1]); the size is the ratio
// off/on against the seed's (value).
func sendfileSeed(f *results.File, s plan.Seed) seedOutcome {
	rows := seedFileRows(f, s)
	for _, t := range tests(rows) {
		on, off := findFileRow(rows, t, seedProfile(s, 0)), findFileRow(rows, t, seedProfile(s, 1))
		if on == nil || off == nil || on.rate <= 0 || off.rate <= 0 {
			continue
		}
		run := fmt.Sprintf("%s %s to %s 2xx/s (%s)", t.words(), fmtRate(on.rate), fmtRate(off.rate), pctChange(off.rate/on.rate))
		fell := off.rate < on.rate && !spread.Tied(off.rates, on.rates, fileFloor)
		return seedOutcome{run: run, reproduced: yesNo(fell && on.ranked() && off.ranked()), size: timesSeed(off.rate/on.rate, s)}
	}
	return seedOutcome{run: "-", reproduced: seedNotMeasured}
}

// httpsFasterSeed: seed 003's oddity, a server (profiles[0]) that served a
// size faster over HTTPS than over plain HTTP; the size is the ratio
// HTTPS/HTTP against the seed's (value).
func httpsFasterSeed(f *results.File, s plan.Seed) seedOutcome {
	rows := seedFileRows(f, s)
	for _, r := range rows {
		if r.profile != seedProfile(s, 0) || r.test.scheme != plan.SchemeHTTPS || r.rate <= 0 {
			continue
		}
		h := findFileRow(rows, fileTest{size: r.test.size, scheme: plan.SchemeHTTP}, r.profile)
		if h == nil || h.rate <= 0 {
			continue
		}
		run := fmt.Sprintf("%s %s: %s over HTTPS, %s over HTTP (%s)", r.profile, sizeWords(r.test.size), fmtRate(r.rate), fmtRate(h.rate), fmtFactor(r.rate/h.rate))
		faster := r.rate > h.rate && !spread.Tied(h.rates, r.rates, fileFloor) && r.ranked() && h.ranked()
		return seedOutcome{run: run, reproduced: yesNo(faster), size: timesSeed(r.rate/h.rate, s)}
	}
	return seedOutcome{run: "-", reproduced: seedNotMeasured}
}

// perCoreSeed: seed 003's headline, profiles[0] faster per core than
// profiles[1] in every file test; this run's range of factors.
func perCoreSeed(f *results.File, s plan.Seed) seedOutcome {
	rows := seedFileRows(f, s)
	lo, hi, faster, n := 0.0, 0.0, 0, 0
	for _, t := range tests(rows) {
		a, b := findFileRow(rows, t, seedProfile(s, 0)), findFileRow(rows, t, seedProfile(s, 1))
		if a == nil || b == nil || a.perCoreRate() <= 0 || b.perCoreRate() <= 0 || !a.ranked() || !b.ranked() {
			continue
		}
		n++
		x := a.perCoreRate() / b.perCoreRate()
		if n == 1 || x < lo {
			lo = x
		}
		hi = max(hi, x)
		if x > 1 && !spread.Tied(b.perCore, a.perCore, fileFloor) {
			faster++
		}
	}
	if n == 0 {
		return seedOutcome{run: "-", reproduced: seedNotMeasured}
	}
	run := fmt.Sprintf("%s faster per core than %s in %d of %d tests, by %s to %s", seedProfile(s, 0), seedProfile(s, 1), faster, n, fmtFactor(lo), fmtFactor(hi))
	return seedOutcome{run: run, reproduced: yesNo(faster == n)}
}

// profileOf is what the run recorded of a profile; for results of older
// versions, which lack the records, a built-in's own description.
func profileOf(f *results.File, name string) *results.ProfileRecord {
	if r := f.Profile(name); r != nil {
		return r
	}
	p, err := proxy.Get(name)
	if err != nil {
		return nil
	}
	return &results.ProfileRecord{Name: p.Name, Proxy: p.Proxy, Role: p.Role, Description: p.Description, FixedBody: string(p.FixedBody), Builtin: true}
}
