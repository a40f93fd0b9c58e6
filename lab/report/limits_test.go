package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
)

// Every scenario table has a Limited by column; a row the backend capped
// is ranked with a note, a generator-limited one still left out.
func TestLimitedByColumnAndBackendMark(t *testing.T) {
	f := synthFile(t)
	ok := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	ok.LimitedBy, ok.LimitedWhy = results.LimitProxy, "the proxy used 0.97 cores on average of 1 CPU(s) (97%)"
	capped := searchUnit("keepalive-1k", "caddy-stock", "p256", "1cpu", 6000)
	capped.LimitedBy, capped.LimitedWhy = results.LimitBackend, "the backend used 0.95 cores on average of 1 CPU(s) (95%)"
	for _, st := range capped.Steps {
		st.BackendSamples = []results.ProxySample{{T: 1, CPU: 0.95}}
		st.BackendSum = results.Summarize(st.BackendSamples, 0)
	}
	lim := searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 9000,
		spec{rate: 16000, verdict: "gen-limited", ok: 9500 * 24, p99: 1_500_000, genLimited: true})
	lim.Search.GeneratorLimited = true
	lim.LimitedBy = results.LimitGenerator
	fixed := fullFile(t).Units[len(fullFile(t).Units)-2] // fixed-rate, two runs
	fixed.Steps[1].LimitedBy = results.LimitNone
	f.Units = append(f.Units, ok, capped, lim, fixed,
		sustainedUnit("nginx-stock", spec{ok: 28231, bad: 500000, status502: 500000, secs: cliffSeconds(), tw: rising(90, 28200), conns: 28231 + 500, reqs: 28231 + 500}))
	f.Units[len(f.Units)-1].Steps[0].LimitedBy = results.LimitPorts
	f.Units[len(f.Units)-1].Steps[0].LimitedWhy = "TIME_WAIT in the proxy's namespace reached 28200 of the 28232-port range"
	r, md := build(t, f)
	for _, sec := range r.Sections {
		for _, tb := range sec.Tables {
			if tb.Caption == "Rate found by certificate key type (req/s)" {
				continue
			}
			// Limited by in the main table, Backend CPU in its detail table
			if want := map[bool]string{false: "Limited by", true: "Backend CPU"}[tb.Detail]; !contains(tb.Header, want) {
				t.Errorf("%s, %s: header %v lacks %s", sec.Scenario, tb.Caption, tb.Header, want)
			}
		}
	}
	for _, c := range []struct{ scenario, row, gen, limit, backend string }{
		{"keepalive-1k", "nginx-stock", "ok", "proxy", "-"},
		{"keepalive-1k", "caddy-stock", "ok", "backend", "0.95 cores"},
		{"keepalive-1k", "nginx-keepalive", "bottleneck above this rate", "generator", ""},
		{"sustained", "nginx-stock", "ok", "ports", ""},
	} {
		got := []string{cellOf(r, c.scenario, c.row, "Generator"), cellOf(r, c.scenario, c.row, "Limited by"), cellOf(r, c.scenario, c.row, "Backend CPU")}
		want := []string{c.gen, c.limit, c.backend}
		if c.backend == "" {
			want[2] = got[2]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s, %s: Generator, Limited by, Backend CPU %q, want %q", c.scenario, c.row, got, want)
		}
	}
	for _, want := range []string{
		"| 1,000 | 3,750 |", // the fixed row (median run)...
		"Ranking by rate found: 1. caddy-stock 6,000 ±4% (capped by the backend), 2. nginx-stock 4,000 ±4% (left out, generator-limited: nginx-keepalive)",
		"Limited by backend, caddy-stock (ECDSA P-256): the backend used 0.95 cores on average of 1 CPU(s) (95%).",
		"Limited by ports, nginx-stock (ECDSA P-256): TIME_WAIT in the proxy's namespace reached 28200",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md, "caddy-stock †") {
		t.Error("the backend-capped row is marked as generator-limited")
	}
	if t.Failed() {
		t.Log(md)
	}
}

// Send lag material only at p99.9 is a caveat on that quantile in the
// table and the chart, not a † row.
func TestLagCaveatIsNotGeneratorLimited(t *testing.T) {
	f := synthFile(t)
	u := fullFile(t).Units[len(fullFile(t).Units)-2]
	for _, st := range u.Steps {
		st.Result.Generator = result.Generator{LagP999us: 2_200, LagCaveats: []result.LagCaveat{{Quantile: "p99.9", LagUs: 2_200, LatencyUs: 8_000, Share: 0.275}}}
	}
	f.Units = append(f.Units, u)
	r, md := build(t, f)
	if strings.Contains(md, "nginx-stock †") || strings.Contains(md, "left out, generator-limited") || strings.Contains(md, "| bottleneck |") {
		t.Errorf("a row with lag at p99.9 only is marked generator-limited:\n%s", md)
	}
	if !strings.Contains(md, "Caveat, nginx-stock (ECDSA P-256): the generator's p99.9 includes 2.20 ms of send lag (28%); p50 to p99 are not affected") {
		t.Errorf("no caveat footnote:\n%s", md)
	}
	var label bool
	for _, sec := range r.Sections {
		for _, c := range sec.Charts {
			label = label || strings.Contains(c.Title, "latency by percentile")
		}
	}
	rows := rowsOf(f, u)
	if !label || lagCaveat(rows[0]) == "" {
		t.Errorf("the spectrum chart's series carries no caveat: %q", lagCaveat(rows[0]))
	}
}

// The derived tables say the limit too: the scaling table per layout, the
// key matrix beside the rate.
func TestLimitedByInDerivedTables(t *testing.T) {
	f := fullFile(t)
	for _, u := range f.Units {
		switch u.ID {
		case "keepalive-1k/nginx-stock/p256/1cpu":
			u.LimitedBy = results.LimitProxy
		case "keepalive-1k@4cpu/nginx-stock/p256/4cpu":
			u.LimitedBy = results.LimitBackend
		case "handshake/nginx-stock/rsa4096/1cpu":
			u.LimitedBy = results.LimitProxy
		}
	}
	_, md := build(t, f)
	for _, want := range []string{
		"| keepalive-1k | nginx-stock (ECDSA P-256) | 4,000 | 15,200 | 3.8x on 4x the CPUs | 1 CPU: proxy, 4 CPU: backend |",
		"| nginx-stock | 4,100 | 410 (limited by proxy) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// cellOf is the cell of column header in the row labelled label of the
// scenario's tables (its main table or its detail table); "" when none.
func cellOf(r *Report, scenario, label, header string) string {
	for _, sec := range r.Sections {
		if sec.Scenario != scenario {
			continue
		}
		for _, tb := range sec.Tables {
			col := slices.Index(tb.Header, header)
			if col < 0 {
				continue
			}
			for _, row := range tb.Rows {
				if row[0] == label {
					return row[col]
				}
			}
		}
	}
	return ""
}
