package scenario

import (
	"testing"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// A search's row is judged by its first failed step above the rate found:
// the lowest failing rate above it, whatever came later.
func TestSearchLimit(t *testing.T) {
	st := func(rate float64, verdict, limit string, run int) *results.Step {
		return &results.Step{Rate: rate, Verdict: verdict, LimitedBy: limit, Run: run, Result: &gen.Result{}}
	}
	steps := []*results.Step{
		st(1000, "pass", "none", 1), st(2000, "pass", "none", 1), st(4000, "fail", "ports", 1),
		st(3000, "fail", "backend", 1), st(2500, "pass", "none", 1), st(2750, "gen-limited", "generator", 1),
		st(2500, "pass", "none", 1),
	}
	if got := searchLimit(steps, search.Result{Rate: 2500, Confirmed: true}); got == nil || got.Rate != 2750 || got.LimitedBy != "generator" {
		t.Errorf("got %+v, want the 2,750 step", got)
	}
	if got := searchLimit(steps[:4], search.Result{Rate: 2000, Confirmed: true}); got == nil || got.Rate != 3000 {
		t.Errorf("got %+v, want the 3,000 step (lower than 4,000, though later)", got)
	}
	if got := searchLimit(steps[:2], search.Result{Rate: 2000, Confirmed: true, Capped: true}); got != nil {
		t.Errorf("got %+v: nothing failed above the rate found", got)
	}

	// With several searches, the median one's steps (its run) decide.
	u := &unitRun{rec: &results.Unit{Search: &search.Result{Rate: 2000, Confirmed: true}, SearchRun: 2, Steps: []*results.Step{
		st(3000, "fail", "proxy", 1), st(2000, "pass", "none", 2), st(3000, "fail", "backend", 2), st(3000, "fail", "ports", 3),
	}}}
	u.limitSearch(false, 0)
	if u.rec.LimitedBy != "backend" {
		t.Errorf("limited by %q, want the median search's backend", u.rec.LimitedBy)
	}
	u = &unitRun{rec: &results.Unit{Search: &search.Result{Rate: 2000, Confirmed: true, Capped: true}, Steps: []*results.Step{st(2000, "pass", "none", 0)}}}
	u.limitSearch(true, 2000)
	if u.rec.LimitedBy != "generator" {
		t.Errorf("a search stopped at the generator's ceiling: limited by %q, want generator", u.rec.LimitedBy)
	}
}
