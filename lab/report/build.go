package report

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// Report is everything the Markdown and HTML show.
type Report struct {
	Title    string
	Summary  []string // plan, machine, when, state
	Seeds    *Table   // the seeds beside this machine (seeds.go): the first table
	Findings []string
	Proxies  Table
	// Profiles says what ran for each profile (profiles.go), Configs the
	// rendered config files copied under the run directory.
	Profiles *Table
	Configs  []ConfigLink
	Checks   *Table // the checks of each profile (checks.go)
	Seed001  *Table // seed 001's table: apps behind one proxy by host (hosts.go)
	Files    *Table // servers serving files themselves (files.go): seed 003's table
	Sections []*Section
	Scaling  *Table
	// Protocols sets each profile's keep-alive rows over HTTP/1.1, HTTP/2
	// and HTTP/3 side by side (protocols.go).
	Protocols *Table
	Legend    []string // what the tables' columns are, said once (legend.go)
	NotRun    []string
	Notes     []string
	Layouts   []string
}

// Build derives the report from a results file: tables, rankings,
// scaling, findings and charts.
func Build(f *results.File) (*Report, error) {
	if f == nil || f.Plan == nil {
		return nil, errors.New("no results to report")
	}
	r := &Report{Title: "loadlab lab report: plan " + f.Plan.Name}
	r.Summary = summary(f)
	if t, ok := seedsTable(f); ok {
		r.Seeds = &t
	}
	r.Findings = findings(f)
	r.Proxies = proxiesTable(f)
	if t, links, ok := profilesTable(f); ok {
		r.Profiles, r.Configs = &t, links
	}
	if t, ok := checksTable(f); ok {
		r.Checks = &t
	}
	if t, ok := seed001Table(f); ok {
		r.Seed001 = &t
	}
	if t, ok := filesTable(f); ok {
		r.Files = &t
	}
	for i := range f.Plan.Scenarios {
		s := &f.Plan.Scenarios[i]
		sec := buildSection(f, s)
		if sec == nil {
			continue
		}
		if err := sectionCharts(f, sec); err != nil {
			r.Notes = append(r.Notes, err.Error())
		}
		r.Sections = append(r.Sections, sec)
	}
	if t, ok := protocolsTable(f); ok {
		r.Protocols = &t
	}
	if t, ok := scalingTable(f); ok {
		r.Scaling = &t
	}
	r.Legend = legend(r)
	for _, u := range f.Units {
		switch u.Status {
		case results.StatusDone:
		case results.StatusSkipped, results.StatusError, results.StatusInterrupted:
			r.NotRun = append(r.NotRun, fmt.Sprintf("%s on %s (%s, %s): %s: %s", u.Scenario, u.Profile, u.Key, u.Layout, u.Status, u.Reason))
		default:
			r.NotRun = append(r.NotRun, fmt.Sprintf("%s on %s (%s, %s): not run yet", u.Scenario, u.Profile, u.Key, u.Layout))
		}
	}
	r.Notes = append(r.Notes, f.Notes...)
	r.Notes = append(r.Notes, cooldownNotes(f)...)
	r.Notes = append(r.Notes, uncleanNotes(f)...)
	for _, l := range f.Layouts {
		line := fmt.Sprintf("%s: server CPUs %s (asked: %s), backend %s, generator %s", l.ID, l.Server, orDash(l.Request), l.Backend, l.Loadgen)
		if len(l.Notes) > 0 {
			line += ". " + strings.Join(l.Notes, " ")
		}
		r.Layouts = append(r.Layouts, line)
	}
	return r, nil
}

// summary is the report's opening lines.
func summary(f *results.File) []string {
	p := f.Plan
	state := "finished"
	if !f.Finished {
		state = "not finished (run the same command again to resume)"
	}
	head := "Plan " + p.Name
	if p.Description != "" {
		head += ": " + p.Description
	}
	lines := []string{
		head + ".",
		fmt.Sprintf("Started %s, last update %s, %s.", f.Started.Format(time.RFC3339), f.Updated.Format(time.RFC3339), state),
	}
	m := f.Machine
	var parts []string
	for _, p := range [][2]string{{"machine ", m.Hostname}, {"kernel ", m.Kernel}, {"", m.GoVersion}, {"CPUs allowed ", m.Allowed.String()}, {"network ", m.Net}} {
		if p[1] != "" {
			parts = append(parts, p[0]+p[1])
		}
	}
	ml := upperFirst(strings.Join(parts, ", "))
	if n := m.Ports(); n > 0 {
		ml += fmt.Sprintf("; ephemeral ports %d-%d (%s), tcp_tw_reuse %d, tcp_fin_timeout %d", m.PortRange[0], m.PortRange[1], fmtInt(int64(n)), m.TwReuse, m.FinTimeout)
	}
	if f.Options.NoCgroups {
		ml += "; no cgroups (affinity only, memory from /proc)"
	} else if p.MemoryLimit > 0 {
		b, _ := p.MemoryLimit.MarshalText()
		ml += "; proxy memory limit " + string(b)
	}
	lines = append(lines, ml+".")
	if h := hostLine(f); h != "" {
		lines = append(lines, h)
	}
	if c := controlLine(f); c != "" {
		lines = append(lines, c)
	}
	if cs := cleanSlate(f); cs != "" {
		lines = append(lines, cs)
	}
	return lines
}

// cleanSlate says in one line how the steps started: how many with TIME_WAIT
// at its limit or below (netns: fresh namespaces each, 0), how many not.
func cleanSlate(f *results.File) string {
	var steps, clean, renewed int
	var renew float64
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if !st.StartChecked {
			return
		}
		steps++
		if !st.StartUnclean && st.StartTimeWait >= 0 {
			clean++
		}
		if st.RenewS > 0 {
			renewed++
			renew += st.RenewS
		}
	})
	if steps == 0 {
		return ""
	}
	s := fmt.Sprintf("Clean slate: %d of %d steps started with no TIME_WAIT left by what ran before", clean, steps)
	if renewed > 0 {
		s += fmt.Sprintf(" (%d in fresh network namespaces with the backend and proxy restarted, %.2f s each on average)", renewed, renew/float64(renewed))
	}
	if clean < steps {
		s += "; the others are listed under Notes"
	}
	return s + "."
}

// uncleanNotes lists the steps that started with TIME_WAIT above the limit.
func uncleanNotes(f *results.File) []string {
	var out []string
	ports := f.Machine.Ports()
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if !st.StartUnclean {
			return
		}
		s := fmt.Sprintf("%s on %s (%s), step %d (%s): started with %s sockets in TIME_WAIT", u.Scenario, u.Profile, u.Key, st.Seq, st.Phase, fmtInt(int64(st.StartTimeWait)))
		if ports > 0 {
			s += fmt.Sprintf(" (%.0f%% of the port range)", 100*float64(st.StartTimeWait)/float64(ports))
		}
		out = append(out, s+": its result is skewed by the step before.")
	})
	return out
}

// proxiesTable lists every proxy started: version and idle memory, the
// headline (anon + kernel) first, page cache and memory.current beside it.
func proxiesTable(f *results.File) Table {
	t := Table{Caption: "Proxies", Header: []string{"Profile", "Version", "Key", "Layout", "Idle anon+kernel", "Idle page cache", "Idle memory.current", "Idle samples (anon+kernel)", "Config lines, 5 hosts"}}
	for _, p := range f.Proxies {
		need, file, total := fmtMiB(p.IdleNeed), fmtMiB(p.IdleFile), fmtMiB(p.IdleMemory)
		if p.Error != "" {
			need, file, total = p.Error, "-", "-"
		}
		var samples []string
		for _, s := range p.IdleNeedSamples {
			samples = append(samples, fmt.Sprintf("%.1f", float64(s)/(1<<20)))
		}
		sm := "-"
		if len(samples) > 0 {
			sm = strings.Join(samples, ", ") + " MiB"
		}
		name := p.Profile
		if p.Routes > 0 {
			name += fmt.Sprintf(" (%d routes)", p.Routes)
		}
		lines := "-"
		if c := f.ConfigSize(p.Profile); c != nil && c.Error == "" {
			lines = fmtInt(int64(c.Lines))
		}
		t.Rows = append(t.Rows, []string{name, orDash(p.Version), keyName(p.Key), p.Layout, need, file, total, sm, lines})
		t.Marks = append(t.Marks, "")
	}
	if len(f.Configs5Hosts) > 0 {
		t.Footnotes = append(t.Footnotes, "Config lines, 5 hosts: the profile's config rendered with five host routes (app01.lab.test to app05.lab.test, each to its own backend; seed 001's \"lines for five hostnames\"), its lines neither blank nor a comment, summed over its files; the files are in the run directory's configs-5-hosts/.")
	}
	if ms := f.Plan.IdleMemory; ms.Samples > 0 {
		t.Footnotes = append(t.Footnotes, fmt.Sprintf("Idle memory: read from the proxy's cgroup after it served one request, %s quiet, then %d samples %s apart; the median (seed 001's method). Anon+kernel (memory.stat anon plus kernel memory) is what the proxy needs; page cache is charged to whichever cgroup first read a file's pages, so it depends on what ran before; memory.current is both, the seeds' number.", ms.Quiet, ms.Samples, ms.Every))
	}
	return t
}

// cooldownNotes sums up the cool-downs per unit.
func cooldownNotes(f *results.File) []string {
	var out []string
	for _, u := range f.Units {
		var n int
		var total, longest float64
		capped := 0
		for _, st := range u.Steps {
			if st.CooldownS > 0 || st.CooldownTW != [2]int{} {
				n++
				total += st.CooldownS
				longest = max(longest, st.CooldownS)
				if st.CooldownCapped {
					capped++
				}
			}
		}
		if n == 0 {
			continue
		}
		s := fmt.Sprintf("Cool-downs in %s on %s (%s): %d after failed steps, %.0f s in all, longest %.0f s", u.Scenario, u.Profile, u.Key, n, total, longest)
		if capped > 0 {
			s += fmt.Sprintf("; %d ended at the cap with TIME_WAIT still above the limit", capped)
		}
		out = append(out, s+".")
	}
	return out
}

// sectionCharts draws a section's charts. Failures to draw become one
// error (the report is still written).
func sectionCharts(f *results.File, sec *Section) error {
	var errs []string
	add := func(c Chart, err error) {
		switch {
		case err == nil:
			sec.Charts = append(sec.Charts, c)
		case !errors.Is(err, errNoData):
			errs = append(errs, err.Error())
		}
	}
	keys := map[string]bool{}
	for _, r := range sec.rows {
		keys[r.key] = true
	}
	withKey := len(keys) > 1
	// latency spectrum: one line per row (for fixed rates, the highest rate)
	var spec []spectrumSeries
	top := map[*results.Unit]float64{}
	for _, r := range sec.rows {
		top[r.unit] = max(top[r.unit], r.rate)
	}
	for _, r := range sec.rows {
		if r.step == nil || r.step.Result == nil || len(r.step.Spectrum) == 0 {
			continue
		}
		if sec.Method == plan.MethodFixed && r.rate != top[r.unit] {
			continue
		}
		label := r.marked(withKey)
		if c := lagCaveat(r); c != "" {
			label += " (" + c + ")"
		}
		spec = append(spec, spectrumSeries{label: label, pts: r.step.Spectrum, count: r.step.Result.Requests})
	}
	title := sec.Scenario + ": latency by percentile"
	if sec.Method == plan.MethodSearch {
		title += " at the rate found"
	}
	add(spectrumChart(title, chartFile(sec.Scenario, "spectrum"), spec))
	if sec.Method == plan.MethodSearch {
		var ss []searchSeries
		seen := map[*results.Unit]bool{}
		for _, r := range sec.rows {
			if !seen[r.unit] {
				seen[r.unit] = true
				ss = append(ss, searchSeries{label: r.label(withKey), steps: rowSearchSteps(r.unit)})
			}
		}
		add(searchCharts(sec.Scenario, chartFile(sec.Scenario, "search"), ss))
	}
	// per-second series: sustained runs, and fixed runs that had failures
	seen := map[*results.Unit]bool{}
	for _, r := range sec.rows {
		if seen[r.unit] {
			continue
		}
		seen[r.unit] = true
		st := r.step
		if sec.Kind != plan.KindSustained {
			st = nil
			for _, s := range r.unit.Steps {
				if s.Result != nil && seriesFailures(s.Result.PerSecond) > 0 && (st == nil || seriesFailures(s.Result.PerSecond) > seriesFailures(st.Result.PerSecond)) {
					st = s
				}
			}
		}
		if st == nil {
			continue
		}
		name := r.label(withKey)
		add(timeSeriesChart(fmt.Sprintf("%s, %s: per second (%s)", sec.Scenario, name, rateWords(st.Rate)), chartFile(sec.Scenario, r.profile, r.key, "series"), st))
	}
	if len(errs) > 0 {
		return fmt.Errorf("charts of %s could not all be drawn: %s", sec.Scenario, strings.Join(errs, "; "))
	}
	return nil
}

func rateWords(rate float64) string {
	if rate == 0 {
		return "closed loop"
	}
	return fmtRate(rate) + " req/s offered"
}
