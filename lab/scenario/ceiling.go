package scenario

import (
	"context"
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/session"
)

// serveProfile names the generator's reference target in progress lines
// and records.
var serveProfile = proxy.Profile{Name: session.ServeProfile, Proxy: "loadlab",
	Description: "loadlab serve on the proxy's CPUs: the generator's reference target"}

// CeilingID names the generator ceiling of a scenario and key on a layout.
func CeilingID(scenario, key, layout string) string {
	return strings.Join([]string{"ceiling", scenario, key, layout}, "/")
}

// ceiling returns the generator's ceiling for the unit's scenario and key
// on its layout, measuring it first when no earlier unit did: the same
// rate search, steps and self-check as the units', against loadlab serve
// on the proxy's CPUs (in the proxy's namespace and cgroup, with the same
// certificate) instead of a proxy. Its rate bounds the units' searches when
// the generator bounded it (search.Result.GeneratorLimited); otherwise the
// reference target or the plan's max stopped it first and the generator's
// own limit is higher. A ceiling that cannot be measured is recorded with
// its error and bounds nothing; only cancellation and a results file that
// cannot be written end the unit. The reference target shares nothing
// with the backend here, which in the proxy runs shares the generator's
// CPU: the ceiling is what the generator can drive without that load.
func (u *unitRun) ceiling(ctx context.Context) (*results.Unit, error) {
	id := CeilingID(u.spec.Scenario.Name, string(u.spec.Key), u.spec.Layout)
	f := u.r.Store.F
	rec := f.Ceiling(id)
	if rec != nil && (rec.Status == results.StatusDone || rec.Status == results.StatusError) {
		return rec, nil
	}
	if err := u.r.Store.Update(func(f *results.File) {
		if rec == nil {
			rec = &results.Unit{ID: id, Scenario: u.spec.Scenario.Name, Family: u.spec.Family, Kind: u.spec.Scenario.Kind, Method: plan.MethodSearch,
				Profile: serveProfile.Name, Proxy: serveProfile.Proxy, Key: string(u.spec.Key), Layout: u.spec.Layout}
			f.Ceilings = append(f.Ceilings, rec)
		}
		rec.Status, rec.Reason = results.StatusRunning, ""
		if rec.Started.IsZero() {
			rec.Started = u.r.Now().UTC()
		}
	}); err != nil {
		return nil, err
	}
	spec := u.spec
	spec.Profile = serveProfile
	speaks := proxy.Features{H2: u.spec.Scenario.Kind == plan.KindKeepaliveH2, H3: u.spec.Scenario.Kind == plan.KindH3}
	cu := &unitRun{r: u.r, session: u.session, spec: spec, rec: rec, baseline: u.baseline, replayed: map[int]bool{},
		start: func(ctx context.Context) (Proxy, error) { return u.session.StartServe(ctx, u.spec.Key, speaks) }}
	u.r.prog.printf("    generator ceiling for %s (%s): the same search against loadlab serve on the server CPUs, no proxy", u.spec.Scenario.Name, u.spec.Key)
	res, err := cu.search(ctx, searchConfig(u.spec.Scenario), 0)
	cu.stopProxy()
	status, reason, err := endStatus(ctx, err)
	if status == results.StatusError {
		u.r.prog.printf("    generator ceiling for %s (%s) not measured: %s", u.spec.Scenario.Name, u.spec.Key, reason)
	}
	if serr := u.r.Store.Update(func(*results.File) {
		rec.Status, rec.Reason = status, reason
		rec.Finished = u.r.Now().UTC()
		if status == results.StatusDone {
			rec.Search = &res
		}
	}); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if status == results.StatusDone {
		u.r.prog.printf("    generator ceiling for %s (%s): %s", u.spec.Scenario.Name, u.spec.Key, CeilingWords(rec))
	}
	return rec, nil
}

// CeilingWords says what a ceiling is, e.g. "24,000 req/s (the generator
// was the bottleneck above it)".
func CeilingWords(c *results.Unit) string {
	rate, byGen := c.CeilingRate()
	switch {
	case rate == 0:
		if c.Search != nil && c.Search.Note != "" {
			return "none: " + c.Search.Note
		}
		return "not measured"
	case byGen:
		return units.Rate(rate) + " req/s (the generator was the bottleneck above it: the proxies' searches stop there)"
	case c.Search.Capped:
		return fmt.Sprintf("≥ %s req/s (the plan's max passed)", units.Rate(rate))
	}
	return fmt.Sprintf("≥ %s req/s (loadlab serve's own limit: the generator had more)", units.Rate(rate))
}
