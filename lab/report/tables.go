package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// Table is one table of the report, rendered as Markdown and HTML.
type Table struct {
	Caption   string
	Header    []string
	Rows      [][]string
	Marks     []string // per row: its mark symbols ("†", "✗"), "" for none (rank.go)
	Footnotes []string // the generator's reasons, and other remarks
	Detail    bool     // the rest of the rows of the table before it (tables.go: detailTable)
}

// Section is one scenario of the plan.
type Section struct {
	Scenario string
	Kind     string
	Method   string
	Layout   string
	Intro    string
	Tables   []Table
	Ranking  string
	Charts   []Chart
	rows     []row
}

// unitsOf returns the reportable units of scenario name, in run order.
func unitsOf(f *results.File, name string) []*results.Unit {
	var us []*results.Unit
	for _, u := range f.Units {
		if u.Scenario == name && reportable(u) {
			us = append(us, u)
		}
	}
	return us
}

// buildSection builds the tables of one scenario.
func buildSection(f *results.File, s *plan.Scenario) *Section {
	units := unitsOf(f, s.Name)
	if len(units) == 0 {
		return nil
	}
	sec := &Section{Scenario: s.Name, Kind: s.Kind, Method: s.Method, Layout: units[0].Layout, Intro: intro(f, s, units[0].Layout)}
	keys := map[string]bool{}
	for _, u := range units {
		keys[u.Key] = true
		sec.rows = append(sec.rows, rowsOf(f, u)...)
	}
	withKey := len(keys) > 1
	withVersions(f, sec.rows)
	switch {
	case s.Method == plan.MethodSearch:
		sec.Tables = append(sec.Tables, searchTable(sec.rows, withKey)...)
		if withKey {
			sec.Tables = append(sec.Tables, keyMatrix(sec.rows))
		}
		sec.Ranking = ranking(sec.rows, withKey, "rate found")
	case s.Method == plan.MethodFixed:
		sec.Tables = append(sec.Tables, fixedTable(sec.rows, withKey)...)
		sec.Ranking = cpuRanking(f, sec.rows, withKey)
	case s.Kind == plan.KindHosts && s.Method == plan.MethodClosed:
		sec.Tables = append(sec.Tables, hostsTable(f, s, sec.rows, withKey)...)
		sec.Ranking = ranking(sec.rows, withKey, "2xx/s")
	case s.Kind == plan.KindSustained:
		sec.Tables = append(sec.Tables, sustainedTable(sec.rows, withKey)...)
		sec.Ranking = ranking(sec.rows, withKey, "2xx/s")
	default:
		sec.Tables = append(sec.Tables, closedTable(sec.rows, withKey)...)
		sec.Ranking = ranking(sec.rows, withKey, "2xx/s")
	}
	if s.IsOrigin() {
		serverHeaders(sec.Tables)
	}
	return sec
}

// intro says in one line what the scenario measured.
func intro(f *results.File, s *plan.Scenario, layout string) string {
	var what string
	switch s.Kind {
	case plan.KindKeepalive:
		what = "small response (" + s.Path + ") over HTTPS, connections kept open"
		if s.Size != "" || s.Scheme == plan.SchemeHTTP {
			what = sizeWords(plan.SizeOfPath(s.Path)) + " response (" + s.Path + ") over " + schemeWords(s.Scheme) + ", connections kept open"
		}
	case plan.KindKeepaliveH2:
		what = "small response (" + s.Path + ") over HTTP/2 (ALPN h2 on the proxy's TLS listener), connections kept open, each carrying the generator's streams at once"
	case plan.KindHandshake:
		what = "a new TLS connection (full handshake) per request, with each key type; every proxy serves the same certificate of a key type, so the ECDSA P-256 rows compare the proxies on one certificate"
	case plan.KindFile:
		what = "1 MiB body (" + s.Path + "), every body checked against its SHA-256"
	case plan.KindH3:
		what = "small response (" + s.Path + ") over HTTP/3 (QUIC on the proxy's UDP port, with the certificate of its TLS listener), connections kept open"
	case plan.KindFixedRate:
		what = "fixed offered rates (open loop), proxy CPU and memory recorded"
	case plan.KindSustained:
		what = "full load in a closed loop, TIME_WAIT in the proxy's namespace sampled every second"
	case plan.KindHosts:
		what = fmt.Sprintf("%d backends behind one proxy, each reached by its own host name (appNN.lab.test to backend appNN), %s over %s", s.NamedBackends(), s.Path, schemeWords(s.Scheme))
		if s.Spread {
			what += ", requests round-robin over every host (a targets file)"
		} else {
			what += ", every request with Host " + s.HostHeader()
		}
	}
	if s.IsOrigin() {
		what += ", served by each server itself from the lab's files (the backend's bytes)"
	}
	var how string
	switch s.Method {
	case plan.MethodSearch:
		e := s.Eff.Search
		how = fmt.Sprintf("max sustainable rate: from %s req/s x%g until a step fails, bisect to %g%%, %s steps (first %s discarded), confirmed %d times for %s, %g%% lower after a failed confirmation; pass = p95 < %s, p99 < %s, errors < %g%%, >= %g%% of the offered rate delivered; %d connections",
			fmtRate(e.Start), e.Growth, e.Precision*100, e.Step, e.Discard, e.ConfirmRuns, e.ConfirmStep, e.StepDown*100,
			s.Eff.Pass.P95, s.Eff.Pass.P99, s.Eff.Pass.MaxErrors*100, s.Eff.Pass.MinAchieved*100, s.Connections)
	case plan.MethodFixed:
		how = fmt.Sprintf("%d run(s) of %s per rate, %d connections; the row is the median run by p99", s.Runs, s.Duration, s.Connections)
	default:
		how = fmt.Sprintf("%d connections, %d run(s) of %s", s.Connections, s.Runs, s.Duration)
		if s.Runs > 1 {
			how += "; the row is the middle run by 2xx/s"
		}
	}
	lay := layout
	if l := f.Layout(layout); l != nil {
		lay = fmt.Sprintf("server CPUs %s, backend %s, generator %s", l.Server, l.Backend, l.Loadgen)
	}
	out := fmt.Sprintf("%s. %s. %s.", upperFirst(what), upperFirst(how), upperFirst(lay))
	if c := ceilingIntro(f, s); c != "" {
		out += " " + c
	}
	if k := knobsIntro(f, s, layout); k != "" {
		out += " " + k
	}
	return out
}

// ceilingIntro says the generator's ceiling of scenario s, per key type:
// what the generator drove on this machine in the same layout without a
// proxy, the bound of every search above.
func ceilingIntro(f *results.File, s *plan.Scenario) string {
	var parts []string
	for _, c := range f.Ceilings {
		if c.Scenario != s.Name {
			continue
		}
		var w string
		rate, byGen := c.CeilingRate()
		switch {
		case c.Status == results.StatusError:
			w = "not measured (" + c.Reason + ")"
		case rate == 0:
			w = "none passed"
			if c.Search != nil && c.Search.Note != "" {
				w += " (" + c.Search.Note + ")"
			}
		case byGen:
			w = fmtRate(rate) + " req/s"
		case c.Search.Capped:
			w = "≥ " + fmtRate(rate) + " req/s (the plan's max)"
		default:
			w = "≥ " + fmtRate(rate) + " req/s (loadlab serve's own limit; the generator had more)"
		}
		if len(s.Keys) > 1 || s.Kind == plan.KindHandshake {
			w = keyName(c.Key) + " " + w
		}
		parts = append(parts, w)
	}
	if len(parts) == 0 {
		return ""
	}
	return "Generator ceiling on this machine: " + strings.Join(parts, ", ") + ", measured with the same search against loadlab serve on the server CPUs (no proxy); a search stops there, and a proxy that reaches it is shown as ≥ the ceiling."
}

// common cells: p50, p95, p99, errors, CPU, memory idle, memory under load.
func latencyCells(r row) []string {
	if r.step == nil || r.step.Result == nil {
		return []string{"-", "-", "-", "-"}
	}
	l := r.step.Result.Latency
	return []string{fmtLatency(l.P50), fmtLatency(l.P95), fmtLatency(l.P99), fmtPct(r.errShare)}
}

// Each scenario's rows show in two tables: the main one with what a
// reader compares across proxies (at most maxMainColumns columns, so it
// fits a screen), and a detail table under it with the rest of each row.

// maxMainColumns is the most columns a scenario's main table has.
const maxMainColumns = 10

// mainHeader names mainCells' columns, the main table's last: the proxy's
// CPU, what it needs under load (anon + kernel: not the seeds' total, so
// nobody reads that as its need) and the part that limited the row.
var mainHeader = []string{"Proxy CPU", "Load anon+kernel", limitHeader}

func mainCells(r row) []string {
	if r.step == nil {
		return []string{"-", "-", limitCell(r)}
	}
	ps := r.step.ProxySum
	return []string{fmtCores(ps.CPUAvg, ps.Samples), fmtMiB(ps.NeedMax), limitCell(r)}
}

// detailHeader names detailCells' columns, after the detail table's
// Proxy: the proxy's memory idle, its page cache and memory.current
// under load, the knobs, the generator's verdict, the backend's CPU and
// the generator's headroom.
var detailHeader = concat([]string{"Idle anon+kernel", "Load page cache", "Load memory.current"}, knobsHeader, []string{"Generator", backendHeader, "Generator headroom"})

func detailCells(r row) []string {
	mem := []string{fmtMiB(r.memIdle), "-", "-"}
	if r.step != nil {
		ps := r.step.ProxySum
		mem = []string{fmtMiB(r.memIdle), fmtMiB(ps.FileMax), fmtMiB(ps.MemMax)}
	}
	return concat(mem, knobsCells(r), []string{r.genText, backendCell(r), orDash(r.headroom)})
}

// detailTable is main's detail table: per row its label, detailCells and
// the cells of the scenario's own last column (lastHeader, from last).
func detailTable(main Table, rows []row, withKey bool, lastHeader string, last func(row) string) Table {
	t := Table{Caption: main.Caption + ": memory, knobs, generator and backend", Detail: true,
		Header: concat([]string{"Proxy"}, detailHeader, []string{lastHeader})}
	for _, r := range rows {
		t.Rows = append(t.Rows, concat([]string{r.label(withKey)}, detailCells(r), []string{last(r)}))
	}
	t.Marks = main.Marks
	return t
}

// Legend entries: what the scenario tables' columns are, said once for
// the whole report (Report.Legend).
const (
	// headroomLegend says what the headroom column is.
	headroomLegend = "Generator headroom: the generator's ceiling for the scenario (the same search against loadlab serve on the server CPUs, no proxy) over the row's rate, and how much of its wall time the generator's busiest loop had no time to spare (busy + starved) in the row's step; a self-check above 90% marks the row †."
	// memoryLegend says what the memory columns are.
	memoryLegend = "Memory: anon+kernel is what the proxy needs (memory.stat anon plus kernel memory), idle after one request and the plan's quiet time, and the peak under load; page cache is charged to whichever cgroup first read a file (the binary), so it depends on what ran before; memory.current is both, the number the seeds report."
)

// finish adds the marks and the footnotes about the rows: the
// generator's reasons, the lag caveats and why each row was limited.
func finish(t *Table, rows []row) {
	n := 0
	for _, r := range rows {
		t.Marks = append(t.Marks, r.syms())
		if r.genLim {
			n++
			why := r.genWhy
			if why == "" {
				why = "the generator reported itself as the bottleneck"
			}
			t.Footnotes = append(t.Footnotes, fmt.Sprintf("† %s: %s", r.label(true), why))
		}
	}
	if n > 0 {
		t.Footnotes = append(t.Footnotes, "† rows: the generator, not the proxy, was the bottleneck; they are left out of the rankings.")
	}
	t.Footnotes = append(t.Footnotes, caveatFootnotes(rows)...)
	t.Footnotes = append(t.Footnotes, limitFootnotes(rows)...)
}

// pair is a scenario's main table and its detail table; the footnotes go
// under the detail table, the last of the two.
func pair(main Table, rows []row, withKey bool, lastHeader string, last func(row) string) []Table {
	finish(&main, rows)
	d := detailTable(main, rows, withKey, lastHeader, last)
	d.Footnotes, main.Footnotes = main.Footnotes, nil
	return []Table{main, d}
}

func searchTable(rows []row, withKey bool) []Table {
	t := Table{Caption: "Max sustainable rate", Header: concat([]string{"Proxy", "Rate found (req/s)", "p50", "p95", "p99", "Errors"}, mainHeader)}
	for _, r := range rows {
		rate := r.rateText
		if rate == "" {
			rate = r.valueText()
		}
		t.Rows = append(t.Rows, concat([]string{r.label(withKey), rate}, latencyCells(r), mainCells(r)))
	}
	ts := pair(t, rows, withKey, "Protocol", protocolCell)
	d := &ts[1]
	if n := runsFootnote(rows, "rate found"); n != "" {
		d.Footnotes = append(d.Footnotes, n)
	}
	d.Footnotes = append(d.Footnotes, "Latency, CPU and memory are from the last passing confirmation at the rate found (of the median search, with several).")
	return ts
}

// protocolCell says what the generator spoke to the proxy in the row's
// step: HTTP/1.1, HTTP/2 with its streams per connection (and the
// proxy's lower limit, if it set one), or HTTP/3.
func protocolCell(r row) string {
	if r.step == nil || r.step.Result == nil {
		return "-"
	}
	res := r.step.Result
	switch res.Protocol {
	case "h2":
		s := fmt.Sprintf("HTTP/2, %d streams per connection", res.Streams)
		if res.H2 != nil && res.H2.ServerMaxStreams > 0 {
			s += fmt.Sprintf(" (the proxy allowed %d)", res.H2.ServerMaxStreams)
		}
		return s
	case "h3":
		return "HTTP/3"
	case "http/1.1":
		return "HTTP/1.1"
	}
	return orDash(res.Protocol)
}

// keyMatrix shows the rate found per proxy and key type side by side.
func keyMatrix(rows []row) Table {
	var profiles, keys []string
	cell := map[string]string{}
	for _, r := range rows {
		if !contains(profiles, r.profile) {
			profiles = append(profiles, r.profile)
		}
		if !contains(keys, r.key) {
			keys = append(keys, r.key)
		}
		v := r.rateText
		if v == "" {
			v = r.valueText()
		}
		if m := r.syms(); m != "" {
			v += " " + m
		}
		if r.limitedBy != "" && r.limitedBy != "none" {
			v += " (limited by " + r.limitedBy + ")"
		}
		cell[r.profile+"/"+r.key] = v
	}
	t := Table{Caption: "Rate found by certificate key type (req/s)", Header: []string{"Proxy"}}
	for _, k := range keys {
		t.Header = append(t.Header, keyName(k))
	}
	for _, p := range profiles {
		line := []string{p}
		for _, k := range keys {
			v := cell[p+"/"+k]
			if v == "" {
				v = "-"
			}
			line = append(line, v)
		}
		t.Rows = append(t.Rows, line)
		t.Marks = append(t.Marks, "")
	}
	return t
}

func fixedTable(rows []row, withKey bool) []Table {
	t := Table{Caption: "Fixed rates", Header: concat([]string{"Proxy", "Offered (req/s)", "Achieved (2xx/s)", "p50", "p95", "p99", "Errors"}, mainHeader)}
	for _, r := range rows {
		t.Rows = append(t.Rows, concat([]string{r.label(withKey), fmtRate(r.rate), fmtRate(r.achieved)}, latencyCells(r), mainCells(r)))
	}
	return pair(t, rows, withKey, "Runs", func(r row) string { return orDash(r.runs) })
}

func closedTable(rows []row, withKey bool) []Table {
	t := Table{Caption: "Closed loop", Header: concat([]string{"Proxy", "Achieved (2xx/s)", "p50", "p95", "p99", "Errors"}, mainHeader)}
	for _, r := range rows {
		t.Rows = append(t.Rows, concat([]string{r.label(withKey), r.valueText()}, latencyCells(r), mainCells(r)))
	}
	ts := pair(t, rows, withKey, "Runs", func(r row) string { return orDash(r.runs) })
	d := &ts[1]
	d.Footnotes = append(d.Footnotes, "Only 2xx responses count as achieved; errors include non-2xx responses (502s).")
	if n := runsFootnote(rows, "achieved (2xx/s)"); n != "" {
		d.Footnotes = append(d.Footnotes, n)
	}
	return ts
}

func sustainedTable(rows []row, withKey bool) []Table {
	t := Table{Caption: "Sustained load", Header: concat([]string{"Proxy", "Achieved (2xx/s)", "p50", "p95", "p99", "Errors", "TIME_WAIT peak"}, mainHeader)}
	for _, r := range rows {
		tw := "-"
		if r.step != nil && r.step.ProxySum.TimeWaitMax >= 0 {
			tw = fmtInt(int64(r.step.ProxySum.TimeWaitMax))
		}
		t.Rows = append(t.Rows, concat([]string{r.label(withKey), r.valueText()}, latencyCells(r), []string{tw}, mainCells(r)))
	}
	ts := pair(t, rows, withKey, "First failure", firstFailureCell)
	d := &ts[1]
	d.Footnotes = append(d.Footnotes, "First failure: the first second with failed or non-2xx responses, and the 2xx responses up to its end (warmup included).")
	if n := runsFootnote(rows, "achieved (2xx/s)"); n != "" {
		d.Footnotes = append(d.Footnotes, n)
	}
	return ts
}

// firstFailureCell is the sustained row's first failing second.
func firstFailureCell(r row) string {
	if r.step == nil || r.step.Result == nil {
		return "-"
	}
	if ff := firstFailure(r.step.Result.PerSecond); ff.found {
		return fmt.Sprintf("t=%d s, after %s 2xx", ff.second, fmtInt(int64(ff.okBefore)))
	}
	return "none"
}

// concat joins string lists.
func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// serverHeaders renames a section's proxy columns for servers that serve
// files themselves: "Proxy" -> "Server", "Proxy CPU" -> "Server CPU".
func serverHeaders(tables []Table) {
	for _, t := range tables {
		for i, h := range t.Header {
			if h == "Proxy" || h == "Proxy CPU" {
				t.Header[i] = "Server" + strings.TrimPrefix(h, "Proxy")
			}
		}
	}
}
