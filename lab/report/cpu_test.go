package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// fixedUnit is a fixed-rate unit at 1,000 req/s, one run per CPU value
// (cores), each run in its own round.
func fixedUnit(profile string, cpus ...float64) *results.Unit {
	u := &results.Unit{ID: "fixed-rate/" + profile + "/p256/1cpu", Scenario: "fixed-rate", Family: "fixed-rate", Kind: plan.KindFixedRate, Method: plan.MethodFixed,
		Profile: profile, Proxy: proxyOf(profile), Key: "p256", Layout: "1cpu", Status: results.StatusDone}
	for i, c := range cpus {
		st := mkStep(i+1, spec{phase: results.PhaseRun, run: i + 1, rate: 1000, ok: 1000 * 24, cpu: c})
		st.Round = i + 1
		u.Steps = append(u.Steps, st)
	}
	return u
}

// A fixed-rate scenario ranks its proxies by CPU per 1,000 requests,
// lowest first: at 1,000 req/s, 0.10 cores is 100 core-ms per 1,000.
// Overlapping runs share a place; separated ones do not.
func TestCPURanking(t *testing.T) {
	for _, c := range []struct {
		a, b []float64
		want string
	}{
		{[]float64{0.10, 0.11, 0.105}, []float64{0.30, 0.32, 0.31}, "1. nginx-stock 105 ms (100 ms–110 ms, n=3), 2. caddy-stock 310 ms (300 ms–320 ms, n=3)"},
		{[]float64{0.10, 0.13, 0.12}, []float64{0.11, 0.14, 0.105}, "=1. nginx-stock 120 ms"},
	} {
		f := synthFileOf(t, strings.Replace(synthPlan, "scenarios:", "rounds: 3\nscenarios:", 1))
		f.Rounds = make([]results.Round, 3)
		f.Units = []*results.Unit{fixedUnit("nginx-stock", c.a...), fixedUnit("caddy-stock", c.b...)}
		r, _ := build(t, f)
		var got string
		for _, s := range r.Sections {
			if s.Scenario == "fixed-rate" {
				got = s.Ranking
			}
		}
		if !strings.Contains(got, "Ranking by proxy CPU per 1,000 requests at 1,000 req/s") || !strings.Contains(got, c.want) {
			t.Errorf("cpu %v vs %v: %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// A fixed-rate row is the median run, and so is its generator verdict: a
// generator bottleneck in one other run of three is counted beside the
// p99s, not put on the row; the CPU ranking keeps a late generator's row
// when the rate was delivered.
func TestFixedRowMedianVerdict(t *testing.T) {
	f := synthFileOf(t, strings.Replace(synthPlan, "scenarios:", "rounds: 3\nscenarios:", 1))
	f.Rounds = make([]results.Round, 3)
	u := fixedUnit("nginx-stock", 0.10, 0.11, 0.105)
	u.Steps[2].Result.Generator.Bottleneck, u.Steps[2].Result.Latency.P99 = true, 9000
	f.Units = []*results.Unit{u, fixedUnit("caddy-stock", 0.30, 0.32, 0.31)}
	rows := fixedRows(f, u)
	if len(rows) != 1 || rows[0].genLim || !strings.Contains(rows[0].runs, "the generator was the bottleneck in 1 other run(s) of 3") {
		t.Fatalf("row %+v", rows[0])
	}
	u.Steps[0].Result.Generator.Bottleneck, u.Steps[0].Result.Generator.Reason = true, "late"
	u.Steps[0].Result.Latency.P99 = 4000 // the median run now
	r, _ := build(t, f)
	for _, s := range r.Sections {
		if s.Scenario == "fixed-rate" && !strings.Contains(s.Ranking, "1. nginx-stock") {
			t.Errorf("a late generator that delivered the rate left the CPU ranking: %s", s.Ranking)
		}
	}
}
