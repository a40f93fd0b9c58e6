package scenario

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// rateFromYAML is the runner tests' plan with a search and a fixed-rate
// scenario whose rate comes from it.
var rateFromYAML = testPlanYAML[:strings.Index(testPlanYAML, "scenarios:")] + `scenarios:
  - kind: keepalive-1k
  - name: near-knee
    kind: fixed-rate
    rate_from: {scenario: keepalive-1k, share: 0.9}
    runs: 1
    duration: 2s
`

// A fixed-rate scenario with rate_from runs each proxy at the share of the
// rate its own search found in the run: 0.9 x what a fixed capacity lets
// the search confirm, different per proxy.
func TestRateFromSearchOfTheRun(t *testing.T) {
	h := newHarness(t, rateFromYAML)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	for _, p := range []string{"nginx-stock", "nginx-keepalive"} {
		ka := f.Unit("keepalive-1k/" + p + "/p256/1cpu")
		nk := f.Unit("near-knee/" + p + "/p256/1cpu")
		if ka == nil || nk == nil || ka.Search == nil || nk.Status != results.StatusDone {
			t.Fatalf("%s: units %+v %+v\n%s", p, ka, nk, h.log.String())
		}
		want := math.Round(0.9 * ka.Search.Rate)
		capacity := h.lab.capacity[p]
		if ka.Search.Rate > capacity || ka.Search.Rate < capacity/1.08 {
			t.Fatalf("%s: search found %g against capacity %g", p, ka.Search.Rate, capacity)
		}
		if nk.RateFrom == nil || nk.RateFrom.Unit != ka.ID || nk.RateFrom.Found != ka.Search.Rate || nk.RateFrom.Rate != want {
			t.Fatalf("%s: rate_from %+v, want %g from %s", p, nk.RateFrom, want, ka.ID)
		}
		if len(nk.Steps) != 1 || nk.Steps[0].Rate != want {
			t.Fatalf("%s: steps %+v, want one at %g", p, nk.Steps, want)
		}
	}
	if !strings.Contains(h.log.String(), "rate from keepalive-1k/nginx-stock/p256/1cpu: 90% of") {
		t.Fatalf("progress does not say where the rate came from:\n%s", h.log.String())
	}
}

// Without a confirmed rate from the search (the proxy would not start),
// the derived unit ends with an error that names the search unit.
func TestRateFromWithoutRate(t *testing.T) {
	h := newHarness(t, rateFromYAML)
	h.lab.startErr["nginx-stock"] = errors.New("nginx: config check failed")
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	nk := f.Unit("near-knee/nginx-stock/p256/1cpu")
	if nk == nil || nk.Status != results.StatusError || !strings.Contains(nk.Reason, "rate_from: keepalive-1k/nginx-stock/p256/1cpu found no rate") || len(nk.Steps) != 0 {
		t.Fatalf("unit %+v", nk)
	}
	if ok := f.Unit("near-knee/nginx-keepalive/p256/1cpu"); ok == nil || ok.Status != results.StatusDone {
		t.Fatalf("the other proxy's unit %+v", ok)
	}
}

func TestRateFromValidation(t *testing.T) {
	for _, c := range []struct{ from, want string }{
		{"{scenario: keepalive-1k, share: 0}", "share must be in (0, 1]"},
		{"{scenario: keepalive-1k, share: 1.5}", "share must be in (0, 1]"},
		{"{scenario: sustained, share: 0.9}", `"sustained" is not a search scenario listed before it`},
		{"{scenario: nope, share: 0.9}", `"nope" is not a search scenario listed before it`},
	} {
		y := strings.Replace(rateFromYAML, "{scenario: keepalive-1k, share: 0.9}", c.from, 1) + "  - kind: sustained\n    duration: 3s\n"
		p, err := plan.Parse([]byte(y))
		if err == nil {
			err = p.Check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("rate_from %s: err %v, want %q", c.from, err, c.want)
		}
	}
	y := strings.Replace(rateFromYAML, "  - kind: keepalive-1k\n", "  - kind: keepalive-1k\n    profiles: [nginx-keepalive]\n", 1)
	if p, err := plan.Parse([]byte(y)); err == nil {
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), "does not run on nginx-stock") {
			t.Errorf("a source without the profile: %v", err)
		}
	}
	y = strings.Replace(rateFromYAML, "    rate_from:", "    rates: [100]\n    rate_from:", 1)
	if p, err := plan.Parse([]byte(y)); err == nil {
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), "rate_from replaces rates") {
			t.Errorf("rates and rate_from: %v", err)
		}
	}
	// Selecting only the derived scenario keeps its source, with a note.
	p, err := plan.Parse([]byte(rateFromYAML))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	if err := p.Narrow(plan.Selection{Scenarios: []string{"near-knee"}}); err != nil {
		t.Fatal(err)
	}
	if names := strings.Join(p.ScenarioNames(), ","); names != "keepalive-1k,near-knee" || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "keepalive-1k kept") {
		t.Fatalf("narrowed to %s, notes %v", names, p.Notes)
	}
}
