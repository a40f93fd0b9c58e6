package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
)

// Seed 001's table: one proxy in front of many backends reached by host
// name (kind hosts). A hosts section's rows are closed-loop rows (the
// middle run by 2xx/s, with that run's p99: closedRow) with the proxy's
// idle memory with the scenario's routes, the 502s and the other errors;
// the seed-001 section sets each profile's numbers in the seed's own
// table, beside the seed's cited ones.

// routesOf is the number of host routes u's proxy had: its scenario's
// named backends (0: the lab's one site).
func routesOf(f *results.File, u *results.Unit) int {
	if s := f.Scenario(u.Scenario); s != nil {
		return s.NamedBackends()
	}
	return 0
}

// idleOf is the idle-memory record of u's proxy, with u's routes.
func idleOf(f *results.File, u *results.Unit) *results.ProxyInfo {
	return f.ProxyInfoRoutes(u.Layout, u.Profile, u.Key, routesOf(f, u))
}

// hostsRun is one closed-loop run of a hosts unit.
type hostsRun struct {
	step   *results.Step
	rate   float64 // 2xx/s
	p99    int64   // corrected p99, µs
	n502   uint64  // responses with status 502
	others uint64  // failed requests and non-2xx responses other than 502
	addr   int     // "Cannot assign requested address" lines the proxy logged in it
}

// hostsRuns are the unit's finished runs in run order.
func hostsRuns(u *results.Unit) []hostsRun {
	var out []hostsRun
	for _, st := range u.Steps {
		if st.Result == nil || st.Interrupted {
			continue
		}
		res := st.Result
		bad := res.Requests - min(res.OK, res.Requests)
		n502 := res.Status["502"]
		out = append(out, hostsRun{step: st, rate: res.AchievedRate, p99: res.Latency.P99, n502: n502, others: bad - min(n502, bad), addr: st.ProxyAddrErrors})
	}
	return out
}

// runOf is the hostsRun of the row's step.
func runOf(r row) (hostsRun, bool) {
	if r.unit == nil || r.step == nil {
		return hostsRun{}, false
	}
	for _, h := range hostsRuns(r.unit) {
		if h.step == r.step {
			return h, true
		}
	}
	return hostsRun{}, false
}

// hostsTable is a hosts section's tables: per proxy its idle memory with
// the routes, the middle run by 2xx/s with that run's p99, 502s and
// other errors, and what limited it; the detail table lists every run.
func hostsTable(f *results.File, s *plan.Scenario, rows []row, withKey bool) []Table {
	n := s.NamedBackends()
	caption := fmt.Sprintf("%d apps behind one proxy, every request to %s", n, s.HostHeader())
	if s.Spread {
		caption = fmt.Sprintf("%d apps behind one proxy, requests round-robin over every host", n)
	}
	t := Table{Caption: caption, Header: []string{"Proxy", fmt.Sprintf("Idle memory.current, %d routes", n), "Idle anon+kernel", "2xx/s (middle run)", "p99, that run", "502s, that run", "Other errors", "Proxy CPU", limitHeader}}
	for _, r := range rows {
		cur, need := "-", "-"
		if pi := idleOf(f, r.unit); pi != nil {
			cur, need = fmtMiB(pi.IdleMemory), fmtMiB(pi.IdleNeed)
			if pi.Error != "" {
				cur, need = pi.Error, "-"
			}
		}
		p99, n502, others := "-", "-", "-"
		if h, ok := runOf(r); ok {
			p99, n502, others = fmtLatency(h.p99), fmtInt(int64(h.n502)), fmtInt(int64(h.others))
		}
		cpu := mainCells(r)[0]
		t.Rows = append(t.Rows, []string{r.label(withKey), cur, need, r.valueText(), p99, n502, others, cpu, limitCell(r)})
	}
	ts := pair(t, rows, withKey, "Runs", hostsRunsCell)
	d := &ts[1]
	d.Footnotes = append(d.Footnotes, fmt.Sprintf("Seed 001's method: %d connections in a closed loop over %s, %d run(s) of %s; the row is the middle run by 2xx/s and the p99 of that same run (not the median of the runs' p99s). Idle memory is the proxy's with these %d routes, after one request and the plan's quiet time. Only 2xx responses count as achieved.", s.Connections, schemeWords(s.Scheme), s.Runs*max(s.Eff.Rounds, 1), s.Duration, n))
	if n := runsFootnote(rows, "2xx/s"); n != "" {
		d.Footnotes = append(d.Footnotes, n)
	}
	return ts
}

// hostsRunsCell lists every run of the row's unit: 2xx/s, p99 and 502s,
// the row's run marked, and how the backends shared the requests.
func hostsRunsCell(r row) string {
	if r.unit == nil {
		return "-"
	}
	var parts []string
	for _, h := range hostsRuns(r.unit) {
		p := fmt.Sprintf("%s 2xx/s, p99 %s, %s 502", fmtRate(h.rate), fmtLatency(h.p99), fmtInt(int64(h.n502)))
		if h.addr > 0 {
			p += fmt.Sprintf(" (%s \"Cannot assign requested address\")", fmtInt(int64(h.addr)))
		}
		if h.step == r.step {
			p += " (the row)"
		}
		parts = append(parts, p)
	}
	s := strings.Join(parts, "; ")
	if sh := appShares(r.step); sh != "" {
		s += "; the row's run: " + sh
	}
	return orDash(s)
}

// appShares says how the named backends shared the step's requests, as
// they counted them: "backends app01..app20 got 4.98–5.02% each", "all
// 5,840 reached app01" ("" without per-app counts).
func appShares(st *results.Step) string {
	if st == nil || len(st.Backend.Apps) < 2 {
		return ""
	}
	var total uint64
	var got []int
	for i, n := range st.Backend.Apps {
		total += n
		if n > 0 {
			got = append(got, i+1)
		}
	}
	switch {
	case total == 0:
		return ""
	case len(got) == 1:
		return fmt.Sprintf("all %s reached app%02d", fmtInt(int64(total)), got[0])
	case len(got) < len(st.Backend.Apps):
		return fmt.Sprintf("%d of the %d backends got requests", len(got), len(st.Backend.Apps))
	}
	lo, hi := slices.Min(st.Backend.Apps), slices.Max(st.Backend.Apps)
	return fmt.Sprintf("backends app01..app%02d got %.2f–%.2f%% each", len(st.Backend.Apps), 100*float64(lo)/float64(total), 100*float64(hi)/float64(total))
}

// seed001Findings are the findings of seed 001's table, in its row order,
// with the words of the row.
var seed001Findings = []struct{ finding, words string }{
	{"hosts-idle-memory", "Idle RAM (memory.current)"},
	{"hosts-rate", "Median requests/sec (2xx)"},
	{"hosts-p99", "99th percentile, that run"},
	{"hosts-502", "502s per run"},
	{"config-lines", "Lines for five hostnames"},
	{"h3-build", "HTTP/3 in this build"},
	{"restart", "After a restart"},
}

// hostsScenarios are the plan's hosts scenarios: the one-host ones
// (seed 001's single URL) and the spread ones.
func hostsScenarios(f *results.File) (one, spread []*plan.Scenario) {
	for i := range f.Plan.Scenarios {
		s := &f.Plan.Scenarios[i]
		if s.Kind != plan.KindHosts {
			continue
		}
		if s.Spread {
			spread = append(spread, s)
		} else {
			one = append(one, s)
		}
	}
	return one, spread
}

// seed001Table is seed 001's table beside this machine: a column per
// profile that ran the plan's first one-host hosts scenario, the seed's
// rows (idle RAM with the routes, the middle run's 2xx/s and p99, 502s
// per run, config lines for five host names, HTTP/3, restart), and a
// row per spread scenario; each cell this run's number, with the seed's
// where the plan cites one for that profile. False without a hosts
// scenario that ran.
func seed001Table(f *results.File) (Table, bool) {
	one, spread := hostsScenarios(f)
	if len(one) == 0 {
		return Table{}, false
	}
	s := one[0]
	units := unitsOf(f, s.Name)
	if len(units) == 0 {
		return Table{}, false
	}
	t := Table{Caption: fmt.Sprintf("Seed 001: %d apps behind one proxy (%s)", s.NamedBackends(), s.Name), Header: []string{""}}
	for _, u := range units {
		label := u.Profile
		if len(s.Keys) > 1 {
			label += " (" + keyName(u.Key) + ")"
		}
		if pi := idleOf(f, u); pi != nil && pi.Version != "" {
			label += ", " + pi.Version
		}
		t.Header = append(t.Header, label)
	}
	cite := func(finding, profile string) string {
		for _, sd := range f.Plan.Seeds {
			if n := sd.ProfileNumber(profile); sd.Finding == finding && n != "" {
				return " (seed: " + n + ")"
			}
		}
		return ""
	}
	for _, fw := range seed001Findings {
		line := []string{fw.words}
		if fw.finding == "hosts-idle-memory" {
			line[0] = fmt.Sprintf("Idle RAM with %d routes (memory.current)", s.NamedBackends())
		}
		for _, u := range units {
			line = append(line, seed001Cell(f, fw.finding, u)+cite(fw.finding, u.Profile))
		}
		t.Rows = append(t.Rows, line)
		t.Marks = append(t.Marks, "")
	}
	for _, sp := range spread {
		line := []string{fmt.Sprintf("Every host in turn (%s), 2xx/s", sp.Name)}
		for _, u := range units {
			cell := "-"
			for _, v := range unitsOf(f, sp.Name) {
				if v.Profile == u.Profile && v.Key == u.Key && v.Layout == u.Layout {
					if r, ok := closedRow(f, v); ok {
						cell = r.valueText()
						if sh := appShares(r.step); sh != "" {
							cell += " (" + sh + ")"
						}
					}
				}
			}
			line = append(line, cell)
		}
		t.Rows = append(t.Rows, line)
		t.Marks = append(t.Marks, "")
	}
	t.Footnotes = append(t.Footnotes,
		fmt.Sprintf("Seed 001: twenty traefik/whoami backends behind one proxy under 2 GiB and one CPU; hey -z 30s -c 50 -host whoami01.bench.test, plain HTTP, three runs, the middle run by requests per second and its 99th percentile. Here: %d named backends in one loadlab serve, %d connections for %s, %d run(s), %s.", s.NamedBackends(), s.Connections, s.Duration, s.Runs*max(s.Eff.Rounds, 1), s.HostHeader()),
		"The seed's numbers are cited from the plan's seeds; every other number is this run's. The seeds table says, row by row, whether this run reproduced them.")
	return t, true
}

// seed001Cell is this run's number for one of seed 001's findings on u's
// profile.
func seed001Cell(f *results.File, finding string, u *results.Unit) string {
	switch finding {
	case "hosts-idle-memory":
		pi := idleOf(f, u)
		if pi == nil || pi.IdleMemory == 0 {
			return "-"
		}
		return fmt.Sprintf("%s (anon+kernel %s)", fmtMiB(pi.IdleMemory), fmtMiB(pi.IdleNeed))
	case "hosts-rate":
		if r, ok := closedRow(f, u); ok {
			return r.valueText()
		}
	case "hosts-p99":
		if r, ok := closedRow(f, u); ok {
			if h, ok := runOf(r); ok {
				return fmtLatency(h.p99)
			}
		}
	case "hosts-502":
		return n502Words(u)
	case "config-lines":
		return configLinesWords(f, u.Profile)
	case "h3-build":
		return h3Words(f, u.Profile)
	case "restart":
		return restartWords(f, u.Profile)
	}
	return "-"
}

// n502Words is the 502s of each run and their cause: "0, 1,890, 2,000
// (port exhaustion: 3,890 \"Cannot assign requested address\")".
func n502Words(u *results.Unit) string {
	runs := hostsRuns(u)
	if len(runs) == 0 {
		return "-"
	}
	var ns []string
	addr := 0
	var other uint64
	for _, h := range runs {
		ns = append(ns, fmtInt(int64(h.n502)))
		addr += h.addr
		other += h.others
	}
	s := strings.Join(ns, ", ")
	if addr > 0 {
		s += fmt.Sprintf(" (port exhaustion: %s \"Cannot assign requested address\" in its log)", fmtInt(int64(addr)))
	}
	if other > 0 {
		s += fmt.Sprintf("; %s other errors", fmtInt(int64(other)))
	}
	return s
}

// configLinesWords is the profile's five-host config size: "15 (Caddyfile)".
func configLinesWords(f *results.File, profile string) string {
	c := f.ConfigSize(profile)
	if c == nil {
		return "-"
	}
	if c.Error != "" {
		return "not rendered: " + c.Error
	}
	var names []string
	for _, fl := range c.Files {
		names = append(names, fmt.Sprintf("%s %d", fl.Name, fl.Lines))
	}
	return fmt.Sprintf("%d (%s)", c.Lines, strings.Join(names, ", "))
}

// h3Served reports whether profile's checks fetched over HTTP/3 and its
// HTTPS responses advertised it (ok: the checks ran).
func h3Served(f *results.File, profile string) (served, advertised, ok bool) {
	for _, c := range f.Checks {
		if c.Profile != profile {
			continue
		}
		ok = true
		served = served || servesH3(c) && c.H3
		advertised = advertised || c.H3Advertised
	}
	return served, advertised, ok
}

// h3Words says whether the profile served HTTP/3 in this build: from its
// checks, and, where it did not, whether its binary could.
func h3Words(f *results.File, profile string) string {
	served, adv, ok := h3Served(f, profile)
	switch {
	case !ok:
		return "-"
	case served && adv:
		return "on for HTTPS (Alt-Svc: h3)"
	case served:
		return "served, not advertised (no Alt-Svc naming h3)"
	}
	if p, err := proxy.Get(profile); err == nil && !p.Features.H3 {
		return "off (this build and config serve none)"
	}
	return "off"
}

// restartWords is the profile's restart from its checks: "0.15 s,
// certificate unchanged".
func restartWords(f *results.File, profile string) string {
	for _, c := range f.Checks {
		if c.Profile == profile && c.Restarted {
			cert := "certificate unchanged"
			if !c.CertUnchanged {
				cert = "certificate CHANGED"
			}
			return fmt.Sprintf("%.2f s, %s", c.RestartS, cert)
		}
	}
	return "-"
}
