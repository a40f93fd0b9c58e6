package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/lab/watch"
)

// BackendWatcher is optionally implemented by a Session: it samples the
// backend's cgroup like Proxy.Watch samples the proxy's (nil when the
// backend has no group of its own).
type BackendWatcher interface {
	WatchBackend(every time.Duration) *watch.Watcher
}

// watchBackend starts sampling the backend, or returns nil.
func (u *unitRun) watchBackend() *watch.Watcher {
	if bw, ok := u.session.(BackendWatcher); ok {
		return bw.WatchBackend(watchEvery)
	}
	return nil
}

// addrErrors is the count of "Cannot assign requested address" lines in
// the proxy's log so far (-1 when it cannot be read).
func (u *unitRun) addrErrors() int {
	if u.px == nil {
		return -1
	}
	_, causes, err := u.px.ErrorLog()
	if err != nil {
		return -1
	}
	return causes["addr_not_avail"]
}

// capacity is what the step's parts had: the layout's cpusets and the
// machine's port range.
func (u *unitRun) capacity() results.Capacity {
	p := u.session.Plan()
	return results.Capacity{ProxyCPUs: len(p.Server), BackendCPUs: len(p.Backend), Ports: u.r.Machine.Ports()}
}

// limitStep records which part limited st (results.LimitOf).
func (u *unitRun) limitStep(st *results.Step) {
	st.LimitedBy, st.LimitedWhy = results.LimitOf(st, u.capacity())
}

// limitSearch records which part limited the unit's search (the median
// one with several): its first failed step above the rate found, or the
// generator when the search stopped at the generator's ceiling (max).
func (u *unitRun) limitSearch(atCeiling bool, max float64) {
	res := u.rec.Search
	if res == nil {
		return
	}
	steps := u.rec.Steps
	if u.rec.SearchRun > 0 {
		steps = nil
		for _, st := range u.rec.Steps {
			if st.Run == u.rec.SearchRun {
				steps = append(steps, st)
			}
		}
	}
	switch st := searchLimit(steps, *res); {
	case st != nil:
		u.rec.LimitedBy, u.rec.LimitedWhy = st.LimitedBy, st.LimitedWhy
	case res.Capped && atCeiling:
		u.rec.LimitedBy, u.rec.LimitedWhy = results.LimitGenerator, "the search stopped at the generator's ceiling on this machine ("+rateWords(max)+")"
	}
}

// searchLimit is the step a search's row is judged by: the first failed
// step above the rate found (the lowest such rate, first in time among
// equals), or nil when none failed above it.
func searchLimit(steps []*results.Step, r search.Result) *results.Step {
	var out *results.Step
	for _, st := range steps {
		if st.Result == nil || st.Verdict == string(search.Pass) || st.Rate <= r.Rate {
			continue
		}
		if out == nil || st.Rate < out.Rate {
			out = st
		}
	}
	return out
}

// Checker is optionally implemented by a Proxy: the checks of seed 001's
// table (session.Proxy.RunChecks).
type Checker interface {
	RunChecks(ctx context.Context, restart bool) (session.Checks, error)
}

// check runs the checks through the unit's proxy the first time this
// profile and key run on this layout (the restart only once per profile
// and layout) and records them; a failed check is recorded and said, not
// an error of the unit.
func (u *unitRun) check(ctx context.Context) error {
	ck, ok := u.px.(Checker)
	f := u.r.Store.F
	layout, profile, key := u.spec.Layout, u.spec.Profile.Name, string(u.spec.Key)
	if !ok || u.start != nil || f.Check(layout, profile, key) != nil {
		return nil
	}
	restart := !f.Restarted(layout, profile)
	c, err := ck.RunChecks(ctx, restart)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	words := "bodies identical"
	if err != nil {
		words = "FAILED: " + err.Error()
	}
	if c.Restarted {
		words += fmt.Sprintf(", restart %.2f s", c.RestartS)
	}
	u.r.prog.printf("    checks of %s (%s): %s", profile, key, words)
	return u.r.Store.Update(func(f *results.File) {
		f.Checks = append(f.Checks, results.ProxyCheck{Layout: layout, Profile: profile, Proxy: u.spec.Profile.Proxy, Key: key, Checks: c})
	})
}

var _ Checker = (*labProxy)(nil)
