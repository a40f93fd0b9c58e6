package report

import (
	"html"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// protoPlan has one profile's keep-alive over the three protocols, and a
// proxy with HTTP/1.1 only (no Protocols rows: nothing to set beside it).
const protoPlan = `
name: synth-protocols
profiles: [nginx-stock, caddy-stock]
keys: [p256]
rounds: 3
scenarios:
  - kind: keepalive-1k
  - kind: keepalive-1k-h2
    profiles: [caddy-stock]
  - name: keepalive-1k-h3
    kind: h3
    profiles: [caddy-stock]
`

// protoFile is protoPlan's results: caddy-stock's HTTP/1.1 rows found
// about 4,000 req/s in three rounds, HTTP/2 about 4,100 (inside the
// noise), HTTP/3 about 2,500 (apart from HTTP/1.1 in every round), with
// each protocol's generator ceiling; h3 is the value the caller sets.
func protoFile(t *testing.T, h3 ...float64) *results.File {
	f := synthFileOf(t, protoPlan)
	f.Rounds = []results.Round{{Round: 1, Done: true}, {Round: 2, Done: true}, {Round: 3, Done: true}}
	mk := func(scenario, kind, profile, proto string, ceiling float64, rates ...float64) *results.Unit {
		u := roundsUnit(scenario, profile, "p256", rates...)
		u.Kind, u.Family = kind, scenario
		for _, st := range u.Steps {
			st.Result.Protocol = proto
			if proto == "h2" {
				st.Result.Streams, st.Result.H2 = 10, &result.H2Info{}
			}
		}
		if ceiling > 0 {
			c := searchUnit(scenario, "loadlab-serve", "p256", "1cpu", ceiling)
			c.ID, c.Kind, c.Search.GeneratorLimited = "ceiling/"+scenario+"/p256/1cpu", kind, true
			f.Ceilings = append(f.Ceilings, c)
			u.Ceiling, u.MaxRate = c.ID, ceiling
		}
		return u
	}
	f.Units = append(f.Units,
		mk("keepalive-1k", plan.KindKeepalive, "nginx-stock", "http/1.1", 90000, 9000, 9500, 9200),
		mk("keepalive-1k", plan.KindKeepalive, "caddy-stock", "http/1.1", 90000, 4000, 4200, 3900),
		mk("keepalive-1k-h2", plan.KindKeepaliveH2, "caddy-stock", "h2", 40000, 4100, 4000, 4150),
		mk("keepalive-1k-h3", plan.KindH3, "caddy-stock", "h3", 9800, h3...),
	)
	return f
}

// The Protocols table sets caddy-stock's HTTP/3 row beside its HTTP/2 and
// HTTP/1.1 rows, each with its own generator ceiling, and says "lower"
// only where the rows are apart beyond the run's noise; nginx-stock, with
// HTTP/1.1 alone, has no rows there. The same table is in report.html and
// in what lab run prints.
func TestProtocolsSideBySide(t *testing.T) {
	r, md := build(t, protoFile(t, 2500, 2600, 2400))
	if r.Protocols == nil {
		t.Fatalf("no Protocols table:\n%s", md)
	}
	sec := md[strings.Index(md, "## Protocols"):]
	sec = sec[:strings.Index(sec, "\n## ")]
	want := []string{
		"| Proxy | Protocol | Rate found (req/s) | p99 | Errors | Proxy CPU | Generator ceiling (req/s) | Against the first | Limited by |",
		"| caddy-stock | HTTP/1.1 | 4,000 (3,900–4,200, n=3) | 2.50 ms | 0% | 0.80 cores | 90,000 | - | - |",
		"| caddy-stock | HTTP/2 | 4,100 (4,000–4,150, n=3) | 2.50 ms | 0% | 0.80 cores | 40,000 | 1.02x HTTP/1.1, within the noise | - |",
		"| caddy-stock | HTTP/3 | 2,500 (2,400–2,600, n=3) | 2.50 ms | 0% | 0.80 cores | 9,800 | 0.62x HTTP/1.1, lower | - |",
		"caddy-stock, HTTP/3 against HTTP/1.1: 2,500 (2,400–2,600, n=3) against 4,000 (3,900–4,200, n=3) req/s, HTTP/3 / HTTP/1.1 per round 0.62–0.62: 0.62x lower beyond this run's noise.",
		"Protocols: HTTP/1.1 from keepalive-1k, 200 connections; HTTP/2 from keepalive-1k-h2, 20 connections x 10 streams; HTTP/3 from keepalive-1k-h3, 50 connections.",
	}
	for _, w := range want {
		if !strings.Contains(sec, w) {
			t.Errorf("Protocols lacks %q", w)
		}
	}
	// the three rows in protocol order, one after the other
	i1, i2, i3 := strings.Index(sec, "| HTTP/1.1 |"), strings.Index(sec, "| HTTP/2 |"), strings.Index(sec, "| HTTP/3 |")
	if i1 < 0 || i2 < i1 || i3 < i2 {
		t.Errorf("rows not HTTP/1.1, HTTP/2, HTTP/3 in order")
	}
	if strings.Contains(sec, "| nginx-stock |") {
		t.Errorf("nginx-stock has one protocol: it has no rows to compare")
	}
	if n := len(r.Protocols.Header); n > maxMainColumns {
		t.Errorf("%d columns, want at most %d", n, maxMainColumns)
	}
	finding := "caddy-stock over HTTP/3: 2,500 (2,400–2,600, n=3) req/s against 4,000 (3,900–4,200, n=3) over HTTP/1.1, 0.62x lower beyond this run's noise; the generator's own HTTP/3 ceiling here was 9,800 req/s."
	if !contains(r.Findings, finding) {
		t.Errorf("findings %q lack %q", r.Findings, finding)
	}
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if p := html.UnescapeString(string(page)); !strings.Contains(p, `<h2 id="protocols">Protocols</h2>`) || !strings.Contains(p, "<td>HTTP/3</td>") {
		t.Errorf("report.html lacks the Protocols table's HTTP/3 row")
	}
	if tables := string(r.MarkdownTables()); !strings.Contains(tables, "| caddy-stock | HTTP/3 | 2,500") {
		t.Errorf("the printed tables lack the HTTP/3 row:\n%s", tables)
	}
	if t.Failed() {
		t.Log(sec)
	}
}

// A claim needs the noise to allow it: an HTTP/3 row whose rounds overlap
// HTTP/1.1's and whose same-round ratio stays within half the precision
// is "within the noise", not "lower"; an HTTP/3 row stopped at the
// generator's ceiling is a lower bound, and below HTTP/1.1 it says no
// claim (the proxy may go higher).
func TestProtocolsClaimOnlyBeyondNoise(t *testing.T) {
	_, md := build(t, protoFile(t, 3900, 4100, 4000))
	if !strings.Contains(md, "| caddy-stock | HTTP/3 | 4,000 (3,900–4,100, n=3) |") || !strings.Contains(md, "1.00x HTTP/1.1, within the noise") {
		t.Errorf("HTTP/3 inside HTTP/1.1's noise not said so:\n%s", md)
	}
	if strings.Contains(md, "over HTTP/3:") {
		t.Errorf("a finding claims a difference inside the noise")
	}

	_, md = build(t, protoWideFile(t))
	for _, w := range []string{
		// the median of the rounds' searches and their range, as in the
		// h3 section's own table, not the row search's rate alone
		"| caddy-stock † | HTTP/3 | ≥ 2,500 (2,400–2,600, n=3) |",
		"| caddy-stock † | ≥ 2,500 (2,400–2,600, n=3) |",
		"≥ 0.62x HTTP/1.1, no claim: this row is a lower bound |",
		"caddy-stock over HTTP/3 stopped at the generator's limit (≥ 2,500 (2,400–2,600, n=3) req/s): the proxy may go higher",
		"caddy-stock, HTTP/3 against HTTP/1.1: ≥ 2,500 (2,400–2,600, n=3) against 4,000 (3,900–4,200, n=3) req/s",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q", w)
		}
	}
}

// protoWideFile is protoFile with the HTTP/3 row stopped by the generator
// (its widest cells: a lower bound, no claim) and every row limited by
// the proxy.
func protoWideFile(t *testing.T) *results.File {
	f := protoFile(t, 2500, 2600, 2400)
	for _, u := range f.Units {
		u.LimitedBy, u.LimitedWhy = results.LimitProxy, "the proxy used 0.97 cores on average of 1 CPU(s) (97%)"
		if u.Kind == plan.KindH3 {
			for _, s := range u.Searches {
				s.GeneratorLimited = true
			}
		}
	}
	return f
}

// compareProto claims a direction only where the noise and the bounds
// allow it: a lower bound (≥) shows a lead, never a deficit; a row that
// died or found no rate is compared with nothing.
func TestCompareProtoBounds(t *testing.T) {
	mk := func(rate float64, bound bool, vals ...float64) row {
		r := row{profile: "p", rate: rate, vals: vals, rounds: vals, floor: 0.15}
		if bound {
			r.rateText, r.genLim = "≥ "+fmtRate(rate), true
		}
		markRow(&r)
		return r
	}
	exact := func(vals ...float64) row { return mk(vals[1], false, vals...) }
	bound := func(vals ...float64) row { return mk(vals[1], true, vals...) }
	for _, c := range []struct {
		name string
		a, b row
		cell string
	}{
		{"exact below", exact(2400, 2500, 2600), exact(3900, 4000, 4200), "0.62x H1, lower"},
		{"exact above", exact(6000, 6100, 6200), exact(3900, 4000, 4200), "1.52x H1, higher"},
		{"inside the noise", exact(3900, 4000, 4100), exact(3900, 4000, 4200), "1.00x H1, within the noise"},
		{"a bound above", bound(9000, 9800, 9800), exact(3900, 4000, 4200), "≥ 2.45x H1, higher"},
		{"a bound below", bound(2400, 2500, 2600), exact(3900, 4000, 4200), "≥ 0.62x H1, no claim: this row is a lower bound"},
		{"b bound below a", exact(6000, 6100, 6200), bound(3900, 4000, 4200), "≤ 1.52x H1, no claim: the first is a lower bound"},
		{"b bound above a", exact(2400, 2500, 2600), bound(3900, 4000, 4200), "≤ 0.62x H1, lower"},
		{"no rate", row{profile: "p", rateText: "none passed (lowest tried 500)"}, exact(3900, 4000, 4200), "no claim: no rate found"},
	} {
		if got := compareProto(c.a, c.b).cell("H1"); got != c.cell {
			t.Errorf("%s: %q, want %q", c.name, got, c.cell)
		}
	}
	died := exact(2400, 2500, 2600)
	died.unit = &results.Unit{Steps: []*results.Step{{ProxyExit: &results.ProcessExit{Signal: "SIGKILL"}}}}
	markRow(&died)
	if got := compareProto(died, exact(3900, 4000, 4200)).cell("H1"); got != "no claim: proxy died" {
		t.Errorf("a died proxy's row: %q", got)
	}
}
