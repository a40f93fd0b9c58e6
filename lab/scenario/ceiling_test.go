package scenario

import (
	"context"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

const ceilingPlanYAML = `
name: t
profiles: [nginx-stock, nginx-keepalive]
cpus: {server: "1"}
search: {start: 1000, max: 64000, precision: 0.08, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - kind: keepalive-1k
`

// The generator's ceiling is measured once per scenario and key before the
// first unit's search, against the reference target, and bounds the
// searches: a proxy faster than the generator (nginx-keepalive, 20,000
// req/s, against a generator that manages 5,000) stops at the ceiling,
// capped, and never gets a step above it; a slower one (nginx-stock,
// 3,000) is measured as before.
func TestCeilingBoundsTheSearch(t *testing.T) {
	h := newHarness(t, ceilingPlanYAML)
	h.lab.genCap = 5000
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if len(f.Ceilings) != 1 || h.lab.serves != 1 {
		t.Fatalf("%d ceilings, %d reference targets started; want one of each", len(f.Ceilings), h.lab.serves)
	}
	c := f.Ceilings[0]
	rate, byGen := c.CeilingRate()
	if c.ID != CeilingID("keepalive-1k", "p256", "1cpu") || !byGen || rate > 5000 || rate < 5000/1.08 {
		t.Fatalf("ceiling %s: %.0f req/s, generator-bounded %v; want just under 5,000 and bounded by the generator (%+v)", c.ID, rate, byGen, c.Search)
	}
	fast := f.Unit("keepalive-1k/nginx-keepalive/p256/1cpu")
	if fast.Ceiling != c.ID || fast.MaxRate != rate || fast.Search == nil || !fast.Search.Capped || fast.Search.Rate != rate {
		t.Fatalf("nginx-keepalive: ceiling %q, max %.0f, search %+v; want capped at the ceiling %.0f", fast.Ceiling, fast.MaxRate, fast.Search, rate)
	}
	for _, st := range fast.Steps {
		if st.Rate > rate {
			t.Errorf("nginx-keepalive step %d at %.0f req/s, above the ceiling %.0f", st.Seq, st.Rate, rate)
		}
	}
	slow := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	if slow.Search == nil || slow.Search.Capped || slow.Search.Rate > 3000 || slow.Search.Rate < 3000/1.08 {
		t.Fatalf("nginx-stock search %+v; want about 3,000, not capped", slow.Search)
	}
	if !strings.Contains(h.log.String(), "generator ceiling for keepalive-1k (p256): ") || !strings.Contains(CeilingWords(c), "the generator was the bottleneck above it") {
		t.Errorf("progress:\n%s\nwords: %s", h.log.String(), CeilingWords(c))
	}
}

// When the reference target gives up before the generator does, the
// generator's limit is higher than what was measured: it bounds nothing.
func TestCeilingOfTheTargetBoundsNothing(t *testing.T) {
	h := newHarness(t, ceilingPlanYAML)
	h.lab.capacity[serveProfile.Name] = 4000
	h.lab.genCap = 50000
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := f.Ceilings[0]
	if rate, byGen := c.CeilingRate(); byGen || rate == 0 || !strings.HasPrefix(CeilingWords(c), "≥ ") {
		t.Fatalf("ceiling %.0f, by generator %v (%s); want a lower bound from the target", rate, byGen, CeilingWords(c))
	}
	if u := f.Unit("keepalive-1k/nginx-keepalive/p256/1cpu"); u.MaxRate != 64000 || u.Search.Rate < 18000 {
		t.Fatalf("nginx-keepalive max %.0f, search %+v; want the plan's max and its own rate", u.MaxRate, u.Search)
	}
	if u := f.Unit("keepalive-1k/nginx-keepalive/p256/1cpu"); u.Status != results.StatusDone {
		t.Fatal(u.Status)
	}
}
