package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// This file sets a profile's keep-alive searches over HTTP/1.1, HTTP/2 and
// HTTP/3 side by side: the same small response through the same proxy,
// with the same key on the same server CPUs, asked for by the scenarios
// keepalive-1k, keepalive-1k-h2 and h3. Each protocol keeps its own
// section; the Protocols table repeats their rows per profile, with the
// generator's ceiling of each protocol beside it and each protocol's rate
// against the profile's first (HTTP/1.1 where it ran). A comparison says
// "higher" or "lower" only where the rows' runs tell them apart
// (noiseTied: the min–max over rounds, the same-round ratio, and a single
// search's precision), and never against a number that is only a lower
// bound in the direction it cannot bound.

// protocols are the keep-alive kinds the table compares, in its order.
var protocols = []struct{ kind, name string }{
	{plan.KindKeepalive, "HTTP/1.1"},
	{plan.KindKeepaliveH2, "HTTP/2"},
	{plan.KindH3, "HTTP/3"},
}

// protocolName is the protocol a keep-alive kind speaks ("" for others).
func protocolName(kind string) string {
	for _, p := range protocols {
		if p.kind == kind {
			return p.name
		}
	}
	return ""
}

// protoComparable reports whether scenario s measures a protocol's
// keep-alive rate as the others do: a rate search through a proxy over
// HTTPS for the 1 KiB body, without kernel settings or a CPU quota of its
// own (those scenarios measure the knob, not the protocol).
func protoComparable(s *plan.Scenario) bool {
	return s != nil && protocolName(s.Kind) != "" && s.Method == plan.MethodSearch && !s.IsOrigin() &&
		s.Scheme != plan.SchemeHTTP && s.Path == "/1k" && len(s.Sysctls) == 0 && s.Eff.ServerQuota == 0 && s.Eff.BackendQuota == 0
}

// protoRow is one protocol's row of one profile, key and layout.
type protoRow struct {
	row
	proto    string
	scenario *plan.Scenario
	ceiling  *results.Unit
}

// protoGroup is one profile with one key on one layout: its rows, one per
// protocol, in the protocols' order.
type protoGroup struct {
	profile, key, layout string
	rows                 []protoRow
}

// protocolGroups finds the profiles that ran two or more protocols'
// keep-alive searches on the same layout with the same key; the first
// comparable scenario of each kind in plan order stands for it.
func protocolGroups(f *results.File) []protoGroup {
	byKey := map[string]*protoGroup{}
	var order []string
	for i := range f.Plan.Scenarios {
		s := &f.Plan.Scenarios[i]
		if !protoComparable(s) {
			continue
		}
		for _, u := range unitsOf(f, s.Name) {
			k := u.Layout + "\x00" + u.Profile + "\x00" + u.Key
			g := byKey[k]
			if g == nil {
				g = &protoGroup{profile: u.Profile, key: u.Key, layout: u.Layout}
				byKey[k] = g
				order = append(order, k)
			}
			name := protocolName(s.Kind)
			if g.has(name) {
				continue
			}
			rows := rowsOf(f, u)
			if len(rows) == 0 {
				continue
			}
			g.rows = append(g.rows, protoRow{row: rows[0], proto: name, scenario: s, ceiling: f.CeilingOf(u)})
		}
	}
	var out []protoGroup
	for _, k := range order {
		g := byKey[k]
		if len(g.rows) < 2 {
			continue
		}
		sort.SliceStable(g.rows, func(i, j int) bool { return protoIndex(g.rows[i].proto) < protoIndex(g.rows[j].proto) })
		out = append(out, *g)
	}
	return out
}

func (g *protoGroup) has(proto string) bool {
	for _, r := range g.rows {
		if r.proto == proto {
			return true
		}
	}
	return false
}

func protoIndex(name string) int {
	for i, p := range protocols {
		if p.name == name {
			return i
		}
	}
	return len(protocols)
}

// protoClaim is what the run can say about row a against row b (the
// profile's first protocol): the ratio of their rates and, beyond the
// noise, "higher" or "lower".
type protoClaim struct {
	ratio  float64 // a's rate over b's (0: no rate to compare)
	word   string  // "higher", "lower", "within the noise", or why no claim
	claim  bool    // word is a claim the run supports ("higher", "lower")
	bound  string  // "≥" when only a's rate is a lower bound, "≤" when only b's is: the ratio is a bound too
	rounds string  // the same-round ratio, e.g. "0.58–0.66" ("" without rounds)
}

// lowerBound reports whether the row's rate is a lower bound (the search
// stopped at the generator's ceiling, the plan's max, or above a step the
// generator could not drive).
func lowerBound(r row) bool { return r.rate > 0 && (r.rateText != "" || r.genLim) }

// compareProto says what a's rate is against b's (the first row of a's
// profile): its words read in the table's "Against the first" column.
func compareProto(a, b row) protoClaim {
	switch {
	case a.rate <= 0 || (a.rateText != "" && !lowerBound(a)):
		return protoClaim{word: "no claim: no rate found"}
	case b.rate <= 0 || (b.rateText != "" && !lowerBound(b)):
		return protoClaim{word: "no claim: the first has no rate"}
	}
	for _, r := range []row{a, b} {
		if n := r.left(); n != "" && n != "generator-limited" {
			return protoClaim{word: "no claim: " + n}
		}
	}
	c := protoClaim{ratio: a.rate / b.rate}
	switch {
	case lowerBound(a) && !lowerBound(b):
		c.bound = "≥"
	case lowerBound(b) && !lowerBound(a):
		c.bound = "≤"
	}
	if lo, hi, ok := sameRound(a, b); ok {
		c.rounds = fmt.Sprintf("%.2f–%.2f", lo, hi)
	}
	tied := noiseTied(a, b)
	switch {
	case tied:
		c.word = "within the noise"
	case a.rate > b.rate && lowerBound(b):
		// b may be higher than its bound: a's lead is not shown.
		c.word = "no claim: the first is a lower bound"
	case a.rate > b.rate:
		c.word, c.claim = "higher", true
	case lowerBound(a):
		// a may be higher than its bound: its deficit is not shown.
		c.word = "no claim: this row is a lower bound"
	default:
		c.word, c.claim = "lower", true
	}
	if tied && (lowerBound(a) || lowerBound(b)) {
		c.word = "no claim: within the noise of a lower bound"
	}
	return c
}

// factorText writes the claim's ratio: "0.62x", "≥ 1.90x".
func (c protoClaim) factorText() string {
	if c.ratio <= 0 {
		return ""
	}
	s := fmt.Sprintf("%.2fx", c.ratio)
	if c.bound != "" {
		s = c.bound + " " + s
	}
	return s
}

// cell is the claim's table cell against base: "0.62x HTTP/1.1, lower".
func (c protoClaim) cell(base string) string {
	if f := c.factorText(); f != "" {
		return f + " " + base + ", " + c.word
	}
	return c.word
}

// protocolsTable is the Protocols table: per profile (and key and layout
// where the run has several) one row per protocol.
func protocolsTable(f *results.File) (Table, bool) {
	groups := protocolGroups(f)
	if len(groups) == 0 {
		return Table{}, false
	}
	keys, layouts := map[string]bool{}, map[string]bool{}
	for _, g := range groups {
		keys[g.key], layouts[g.layout] = true, true
	}
	t := Table{Caption: "Keep-alive by protocol: the same proxy, key and server CPUs",
		Header: []string{"Proxy", "Protocol", "Rate found (req/s)", "p99", "Errors", "Proxy CPU", "Generator ceiling (req/s)", "Against the first", limitHeader}}
	for _, g := range groups {
		label := g.profile
		if len(keys) > 1 {
			label += " (" + keyName(g.key) + ")"
		}
		if len(layouts) > 1 {
			label += ", " + layoutWords(f, g.layout)
		}
		base := g.rows[0]
		for i, r := range g.rows {
			rate := r.rateText
			if rate == "" {
				rate = r.valueText()
			}
			against := "-"
			if i > 0 {
				c := compareProto(r.row, base.row)
				against = c.cell(base.proto)
				t.Footnotes = append(t.Footnotes, protoFootnote(label, r, base, c))
			}
			p99 := "-"
			if r.step != nil && r.step.Result != nil {
				p99 = fmtLatency(r.step.Result.Latency.P99)
			}
			cpu := "-"
			if r.step != nil {
				cpu = fmtCores(r.step.ProxySum.CPUAvg, r.step.ProxySum.Samples)
			}
			errs := "-"
			if r.step != nil && r.step.Result != nil {
				errs = fmtPct(r.errShare)
			}
			t.Rows = append(t.Rows, []string{label, r.proto, rate, p99, errs, cpu, ceilingCell(r.ceiling), against, limitCell(r.row)})
			t.Marks = append(t.Marks, r.syms())
		}
	}
	t.Footnotes = append(t.Footnotes, protoScenarios(groups)...)
	t.Footnotes = append(t.Footnotes, "Each row repeats its protocol's own section (the rate found, with the p99, errors and proxy CPU of its last passing confirmation); the generator's ceiling is that protocol's, measured with the same search against loadlab serve on the server CPUs, and bounds the row's search. Against the first: the row's rate over the first protocol's of the same proxy; higher or lower only where the two rows' runs are apart beyond the run's noise (their min–max over rounds do not overlap, or their ratio within each round stays beyond half the search's precision in every round), and never in the direction a lower bound (≥, †) cannot show.")
	return t, true
}

// ceilingCell is a protocol's generator ceiling in short.
func ceilingCell(c *results.Unit) string {
	if c == nil {
		return "-"
	}
	rate, byGen := c.CeilingRate()
	switch {
	case c.Status == results.StatusError:
		return "not measured"
	case rate == 0:
		return "none passed"
	case byGen:
		return fmtRate(rate)
	}
	return "≥ " + fmtRate(rate)
}

// layoutWords names a layout by its server CPUs: "1 server CPU".
func layoutWords(f *results.File, id string) string {
	if l := f.Layout(id); l != nil {
		return cpuWords(len(l.Server))
	}
	return id
}

// protoValue is a row's rate in a sentence: its rank text (the median and
// min–max of its runs, or one run ± half the floor), "≥" before a lower
// bound's median and range.
func protoValue(r row) string {
	if lowerBound(r) {
		return "≥ " + r.valueText()
	}
	return r.rankText()
}

// protoFootnote says one comparison with the numbers behind it.
func protoFootnote(label string, r, base protoRow, c protoClaim) string {
	s := fmt.Sprintf("%s, %s against %s: %s against %s req/s", label, r.proto, base.proto, protoValue(r.row), protoValue(base.row))
	if c.rounds != "" {
		s += fmt.Sprintf(", %s / %s per round %s", r.proto, base.proto, c.rounds)
	}
	switch {
	case c.claim:
		s += fmt.Sprintf(": %s %s beyond this run's noise", c.factorText(), c.word)
	case c.ratio > 0:
		s += fmt.Sprintf(": %s, %s", c.factorText(), c.word)
	default:
		s += ": " + c.word
	}
	return s + "."
}

// protoScenarios says which scenario each protocol's rows come from and
// how it loaded the proxy (connections, streams).
func protoScenarios(groups []protoGroup) []string {
	seen := map[string]bool{}
	var parts []string
	for _, g := range groups {
		for _, r := range g.rows {
			if seen[r.scenario.Name] {
				continue
			}
			seen[r.scenario.Name] = true
			w := fmt.Sprintf("%s from %s, %d connections", r.proto, r.scenario.Name, r.scenario.Connections)
			if r.step != nil && r.step.Result != nil && r.step.Result.Streams > 1 {
				w += fmt.Sprintf(" x %d streams", r.step.Result.Streams)
			}
			parts = append(parts, w)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{"Protocols: " + strings.Join(parts, "; ") + "."}
}

// protocolFindings say, per profile, how its HTTP/2 and HTTP/3 rates
// compare with its first protocol's, where the run supports a claim, and
// what bounded the rest.
func protocolFindings(f *results.File) []string {
	var out []string
	for _, g := range protocolGroups(f) {
		base := g.rows[0]
		for _, r := range g.rows[1:] {
			c := compareProto(r.row, base.row)
			ceil := ""
			if rate, byGen := r.ceiling.CeilingRate(); rate > 0 && byGen {
				ceil = fmt.Sprintf("; the generator's own %s ceiling here was %s req/s", r.proto, fmtRate(rate))
			}
			switch {
			case c.claim:
				out = append(out, fmt.Sprintf("%s over %s: %s req/s against %s over %s, %s %s beyond this run's noise%s.",
					g.profile, r.proto, protoValue(r.row), protoValue(base.row), base.proto, c.factorText(), c.word, ceil))
			case r.atCeil || r.genLim:
				out = append(out, fmt.Sprintf("%s over %s stopped at the generator's limit (%s req/s): the proxy may go higher, so this run cannot say how it compares with its %s %s req/s%s.",
					g.profile, r.proto, protoValue(r.row), base.proto, protoValue(base.row), ceil))
			}
		}
	}
	return out
}
