package scenario

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/lab/session"
)

// A search's row is judged by its first failed step above the rate found:
// the lowest failing rate above it, whatever came later.
func TestSearchLimit(t *testing.T) {
	st := func(rate float64, verdict, limit string, run int) *results.Step {
		return &results.Step{Rate: rate, Verdict: verdict, LimitedBy: limit, Run: run, Result: &result.Result{}}
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

// checkCalls records the fake proxies' RunChecks calls: profile/key and
// whether they restarted.
var checkCalls []string

func (p *fakeProxy) RunChecks(_ context.Context, restart bool) (session.Checks, error) {
	checkCalls = append(checkCalls, fmt.Sprintf("%s/%s restart=%v", p.prof.Name, p.key, restart))
	return session.Checks{ByteIdentical: true, WebSocket: session.WebSocketCheck{OK: true}, Restarted: restart, RestartS: 0.2, CertUnchanged: true}, nil
}

// lab run checks each profile once per key type on a layout, right after
// its first start, and restarts it once per profile; the ceiling's serve
// target is not checked; every check is in results.json.
func TestChecksOncePerProfileAndKey(t *testing.T) {
	checkCalls = nil
	h := newHarness(t, `
name: t
profiles: [nginx-stock, nginx-keepalive]
keys: [p256, rsa4096]
cpus: {server: "1"}
search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - kind: keepalive-1k
  - kind: handshake
  - kind: fixed-rate
    rates: [500]
    runs: 1
    duration: 2s
`)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	want := []string{"nginx-stock/p256 restart=true", "nginx-stock/rsa4096 restart=false", "nginx-keepalive/p256 restart=true", "nginx-keepalive/rsa4096 restart=false"}
	if strings.Join(checkCalls, "; ") != strings.Join(want, "; ") {
		t.Errorf("checks %q, want %q", checkCalls, want)
	}
	if c := f.Check("1cpu", "nginx-stock", "rsa4096"); len(f.Checks) != 4 || c == nil || c.Restarted || !f.Restarted("1cpu", "nginx-keepalive") {
		t.Errorf("recorded checks %+v", f.Checks)
	}
}
