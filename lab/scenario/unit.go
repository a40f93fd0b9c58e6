package scenario

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/lab/session"
)

// unitRun is one unit in progress.
type unitRun struct {
	r        *Runner
	session  Session
	spec     UnitSpec
	rec      *results.Unit
	px       Proxy
	baseline int          // TIME_WAIT when the layout's session opened
	seq      int          // steps asked for so far
	replayed map[int]bool // steps taken from the record, not run
	round    int          // the plan's round this part of the unit runs in (1..N; 0 = ceilings)

	// start, if set, starts the target instead of the unit's proxy
	// profile (the generator's ceiling: loadlab serve); such a run records
	// no idle memory and no error log.
	start func(ctx context.Context) (Proxy, error)
}

// errStart is a server that exited while starting or was not ready in
// time: the step it was started for is recorded as died.
type errStart struct{ err error }

func (e errStart) Error() string { return e.err.Error() }
func (e errStart) Unwrap() error { return e.err }

// rateFromReason begins the error of a unit whose rate_from source had
// no rate yet: later rounds, which may bring one, run it again.
const rateFromReason = "rate_from: "

// errUnit marks an error that ends the unit but not the run (the proxy
// would not start, the generator could not reach it).
type errUnit struct{ err error }

func (e errUnit) Error() string { return e.err.Error() }

// run runs the unit and records its status. Only errors that must end the
// whole run (cancellation, a results file that cannot be written, a plan
// the generator refuses) are returned.
func (u *unitRun) run(ctx context.Context) error {
	u.rec = u.r.Store.F.Unit(u.spec.ID)
	u.replayed = map[int]bool{}
	u.r.prog.unitStart(u.spec, u.round)
	if err := u.r.Store.Update(func(*results.File) {
		u.rec.Status, u.rec.Reason = results.StatusRunning, ""
		if u.rec.Started.IsZero() {
			u.rec.Started = u.r.Now().UTC()
		}
		// The steps of earlier rounds stay; this round's, if an
		// interrupted run left some, are replayed where they match.
		if r := u.stepRound(); r > 0 {
			for u.seq < len(u.rec.Steps) && u.rec.Steps[u.seq].Round < r {
				u.seq++
			}
		}
	}); err != nil {
		return err
	}
	err := u.body(ctx)
	u.stopProxy()
	status, reason, err := endStatus(ctx, err)
	if status == results.StatusError {
		u.r.prog.printf("    %s %s: %s", u.spec.Scenario.Name, u.spec.Profile.Name, reason)
	}
	if serr := u.r.Store.Update(func(*results.File) {
		u.rec.Status, u.rec.Reason = status, reason
		u.rec.Finished = u.r.Now().UTC()
		if status == results.StatusDone {
			u.rec.RoundsDone = max(u.round, 1)
			u.setVsControl()
		}
	}); serr != nil && err == nil {
		err = serr
	}
	// A unit that failed is not run again in later rounds, unless what
	// it lacked may come with them: a rate_from source that confirmed no
	// rate yet.
	if status == results.StatusError && u.r.failed != nil && !strings.HasPrefix(reason, rateFromReason) {
		u.r.failed[u.spec.ID] = true
	}
	u.r.prog.unitDone(u.spec)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return err
}

// endStatus is the record status of a unit (or ceiling) whose body ended
// with err, and the error left for the whole run: an errUnit ends only the
// unit (status error, nil), cancellation marks it interrupted.
func endStatus(ctx context.Context, err error) (status, reason string, runErr error) {
	var ue errUnit
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return results.StatusInterrupted, "interrupted; run the same command again to resume", err
	case errors.As(err, &ue):
		return results.StatusError, ue.Error(), nil
	case errors.As(err, new(errDied)):
		return results.StatusDone, err.Error(), nil
	}
	return results.StatusDone, "", err
}

// body runs the unit's method.
func (u *unitRun) body(ctx context.Context) error {
	s := u.spec.Scenario
	switch s.Method {
	case plan.MethodSearch:
		cfg := searchConfig(s)
		atCeiling := false // the search's max is the generator's ceiling
		if u.start == nil {
			c, err := u.ceiling(ctx)
			if err != nil {
				return err
			}
			if rate, byGen := c.CeilingRate(); byGen && rate < cfg.Max {
				// Above the generator's own limit a step measures the
				// generator: the search stops there ("≥ ceiling").
				cfg.Max, atCeiling = rate, true
				cfg.Start = min(cfg.Start, cfg.Max)
				cfg.Min = min(cfg.Min, cfg.Start)
			}
			if err := u.r.Store.Update(func(*results.File) {
				if c != nil {
					u.rec.Ceiling = c.ID
				}
				u.rec.MaxRate = cfg.Max
			}); err != nil {
				return err
			}
		}
		if err := u.searches(ctx, cfg); err != nil {
			return err
		}
		return u.r.Store.Update(func(*results.File) { u.limitSearch(atCeiling, cfg.Max) })
	case plan.MethodFixed:
		rates := s.Rates
		switch {
		case s.RateFrom != nil && u.rec.RateFrom != nil && u.round > 1:
			// Every round offers the rate the first derived: the rounds
			// measure one thing.
			rates = []float64{u.rec.RateFrom.Rate}
		case s.RateFrom != nil:
			rf, err := u.rateFrom(s.RateFrom)
			if err != nil {
				return err
			}
			rates = []float64{rf.Rate}
		}
		for _, rate := range rates {
			if err := u.runs(ctx, rate); err != nil {
				return err
			}
		}
		return nil
	default:
		return u.runs(ctx, 0)
	}
}

// targetURL is what the generator requests: the scenario's path, over
// plain HTTP with scheme http (Aim.Config puts in the server's address and
// port for the scheme).
func targetURL(s *plan.Scenario) string {
	if s.Scheme == plan.SchemeHTTP {
		return "http://" + session.DefaultServerName + s.Path
	}
	return s.Path
}

// searchConfig is the scenario's search settings.
func searchConfig(s *plan.Scenario) search.Config {
	e := s.Eff.Search
	return search.Config{Start: e.Start, Max: e.Max, Min: e.Min, Growth: e.Growth, Precision: e.Precision,
		ConfirmRuns: e.ConfirmRuns, StepDown: e.StepDown, MaxStepDowns: e.MaxStepDowns}
}

// search runs the rate search with the unit's steps and cool-downs;
// run (0 for a single search) tags its steps as those of search run of N.
func (u *unitRun) search(ctx context.Context, cfg search.Config, run int) (search.Result, error) {
	return search.Run(ctx, cfg, func(ctx context.Context, st search.Step) (search.Outcome, error) {
		return u.step(ctx, string(st.Phase), st.Rate, st.Confirm, run)
	}, func(ctx context.Context, st search.Step) error {
		return u.cool(ctx, st.Seq)
	})
}

// runs runs the scenario's runs at one rate (0 = closed loop), cooling
// down after each that failed.
func (u *unitRun) runs(ctx context.Context, rate float64) error {
	for i := 1; i <= u.spec.Scenario.Runs; i++ {
		o, err := u.step(ctx, results.PhaseRun, rate, 0, u.roundTag(i))
		if errors.As(err, new(errDied)) {
			continue // restarted: the next run measures it again
		}
		if err != nil {
			return err
		}
		if o.Verdict != search.Pass {
			if err := u.cool(ctx, u.seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// cool runs the cool-down after step seq unless that step was replayed
// from the record.
func (u *unitRun) cool(ctx context.Context, seq int) error {
	if u.replayed[seq] || seq < 1 || seq > len(u.rec.Steps) {
		return nil
	}
	return u.cooldown(ctx, u.rec.Steps[seq-1])
}

// ensureProxy starts the unit's proxy on first need, and measures its
// idle memory the first time this profile and key run on this layout.
func (u *unitRun) ensureProxy(ctx context.Context) error {
	if u.px != nil {
		return nil
	}
	var px Proxy
	var err error
	if u.start != nil {
		px, err = u.start(ctx)
	} else {
		px, err = u.session.StartProxy(ctx, u.spec.Profile.Name, u.spec.Key)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, proxy.ErrNotFound) {
			return errUnit{fmt.Errorf("not installed: %v", err)}
		}
		if strings.HasPrefix(err.Error(), "start ") {
			return errUnit{errStart{err}}
		}
		return errUnit{errStart{fmt.Errorf("start %s: %v", u.spec.Profile.Name, err)}}
	}
	u.px = px
	if u.start != nil {
		return nil
	}
	if err := u.copyConfigs(px); err != nil {
		u.r.prog.printf("    %s: the rendered config was not copied: %v", u.spec.Profile.Name, err)
	}
	f := u.r.Store.F
	routes := u.spec.Scenario.NamedBackends() // idle memory with N routes is measured apart (seed 001's twenty)
	if f.ProxyInfoRoutes(u.spec.Layout, u.spec.Profile.Name, string(u.spec.Key), routes) != nil {
		return u.check(ctx)
	}
	info := results.ProxyInfo{Layout: u.spec.Layout, Profile: u.spec.Profile.Name, Proxy: u.spec.Profile.Proxy, Key: string(u.spec.Key), Version: px.Version(), Routes: routes}
	if m := u.r.Plan.IdleMemory; m.Samples > 0 {
		with := ""
		if routes > 0 {
			with = fmt.Sprintf(" with %d routes", routes)
		}
		u.r.prog.printf("    idle memory of %s%s: %s quiet, %d samples", u.spec.Profile.Name, with, m.Quiet, m.Samples)
		idle, err := px.IdleMemory(ctx, m.Quiet.D(), m.Samples, m.Every.D())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			info.Error = "idle memory: " + err.Error()
		}
		info.IdleNeed, info.IdleFile, info.IdleMemory = idle.Need, idle.File, idle.Total
		info.IdleNeedSamples, info.IdleSamples = idle.NeedSamples, idle.TotalSamples
	}
	if err := u.r.Store.Update(func(f *results.File) { f.Proxies = append(f.Proxies, info) }); err != nil {
		return err
	}
	return u.check(ctx)
}

// stopProxy stops the proxy and records its error-log causes.
func (u *unitRun) stopProxy() {
	if u.px == nil {
		return
	}
	if lines, causes, err := u.px.ErrorLog(); err == nil && u.start == nil {
		u.rec.ErrorLog = &results.ErrorLog{Lines: lines, Causes: causes}
		if es, ok := u.px.(ErrorSampler); ok {
			u.rec.ErrorLog.Samples, u.rec.ErrorLog.CutLines = es.ErrorSamples(), es.CutLines()
		}
	}
	if err := u.px.Stop(); err != nil {
		u.r.prog.printf("    stop %s: %v", u.spec.Profile.Name, err)
	}
	u.px = nil
}

// verifyDigest is the SHA-256 every body of path must have, for the
// scenarios that check bodies (the 1 MiB file); nil otherwise, and for a
// server that answers a fixed body instead of files (caddy-respond).
func verifyDigest(s *plan.Scenario, prof proxy.Profile) []byte {
	if s.Kind != plan.KindFile || !prof.ServesFiles() {
		return nil
	}
	body := backend.Body(s.Path)
	if body == nil {
		return nil
	}
	sum := sha256.Sum256(body)
	return sum[:]
}

// rateFrom derives a fixed-rate unit's rate from the search of the same
// profile and key in scenario rf.Scenario of this run (on the same layout
// when that scenario ran there, else on its one layout), records it in the
// unit and returns it. Without a confirmed rate found the unit ends with an
// error that says what to run.
func (u *unitRun) rateFrom(rf *plan.RateFrom) (*results.RateFrom, error) {
	var src []*results.Unit
	for _, o := range u.r.Store.F.Units {
		if o.Scenario == rf.Scenario && o.Profile == u.spec.Profile.Name && o.Key == string(u.spec.Key) {
			src = append(src, o)
		}
	}
	if i := slices.IndexFunc(src, func(o *results.Unit) bool { return o.Layout == u.spec.Layout }); i >= 0 {
		src = src[i : i+1]
	}
	switch {
	case len(src) == 0:
		return nil, errUnit{fmt.Errorf("rate_from: scenario %s has no unit of %s with key %s in this run: run it in the same plan", rf.Scenario, u.spec.Profile.Name, u.spec.Key)}
	case len(src) > 1:
		return nil, errUnit{fmt.Errorf("rate_from: scenario %s ran %s on %d layouts, none of them this unit's (%s): give the scenarios the same server CPUs", rf.Scenario, u.spec.Profile.Name, len(src), u.spec.Layout)}
	}
	o := src[0]
	if o.Status != results.StatusDone || o.Search == nil || !o.Search.Confirmed || o.Search.Rate <= 0 {
		why := o.Reason
		if why == "" {
			why = "no confirmed rate found"
		}
		return nil, errUnit{fmt.Errorf("rate_from: %s found no rate to derive this unit's from (%s: %s)", o.ID, o.Status, why)}
	}
	d := &results.RateFrom{Unit: o.ID, Found: o.Search.Rate, Share: rf.Share, Rate: math.Round(rf.Share * o.Search.Rate)}
	if d.Rate < 1 {
		d.Rate = 1
	}
	u.r.prog.printf("    rate from %s: %s%% of %s = %s", o.ID, strconv.FormatFloat(rf.Share*100, 'f', -1, 64), rateWords(d.Found), rateWords(d.Rate))
	return d, u.r.Store.Update(func(*results.File) { u.rec.RateFrom = d })
}
