package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/session"
)

// Runner runs the units of a plan and records them in a Store.
type Runner struct {
	Plan      *plan.Plan
	Store     *results.Store
	Layouts   *Layouts
	Units     []UnitSpec
	Budget    Budget
	Open      Opener    // opens a lab session per unit (on the unit's layout)
	Gen       GenFunc   // default gen.Run
	Log       io.Writer // progress lines (stderr)
	NoCgroups bool
	Machine   results.Machine
	Watch     Watcher // hears each step start and end (nil: nobody)

	// Poll is the cool-down's TIME_WAIT polling interval (default 1 s, at
	// most a tenth of the cap).
	Poll time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends (default a timer; tests pair it with
	// Now).
	Sleep func(ctx context.Context, d time.Duration) error

	prog   *progress
	host   *hostClock      // the machine's steal and iowait per step (nil: not read)
	failed map[string]bool // units that ended in an error this run: later rounds skip them
}

// ErrNoLab is returned when the run needs a lab session but has no Opener.
var ErrNoLab = errors.New("no lab session: the runner needs an Opener")

// Run runs every unit not yet done, round by round (plan rounds; one
// round without them), saving results.json after every step. Resuming, a
// unit with a recorded result (done, or an error) is not run again, nor
// a round's remeasure recorded done, and a finished run measures nothing. Within a
// round the scenarios run in plan order and each scenario's units in the
// round's shuffled order (rounds.go). When ctx is cancelled it records the
// step in flight (partial, interrupted), marks the unit interrupted,
// closes the session and returns ctx's error.
func (r *Runner) Run(ctx context.Context) error {
	if r.Gen == nil {
		r.Gen = gen.Run
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	r.prog = newProgress(r.Log, r.Budget, r.Now)
	if r.Store.F.Finished {
		// A finished run is never measured again: not a unit the plan
		// gained since (a proxy installed meanwhile), not a remeasure.
		r.prog.printf("== the run in %s is finished: nothing to measure (remove it to measure again)", r.Store.Dir())
		return nil
	}
	r.host = newHost()
	r.failed = map[string]bool{}
	if err := r.Store.Update(r.prepare); err != nil {
		return err
	}
	n := r.rounds()
	for k := 1; k <= n; k++ {
		order, err := r.roundOrder(k, n)
		if err != nil {
			return err
		}
		if n > 1 {
			r.prog.printf("== round %d of %d: %d units", k, n, len(order))
			if err := r.control(ctx, k, n); err != nil {
				return err
			}
		}
		lastLayout := ""
		for _, u := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec := r.Store.F.Unit(u.ID)
			if rec != nil && (rec.RoundsDone >= k || rec.Status == results.StatusDone && rec.RoundsDone == 0) || r.failed[u.ID] || r.remeasuring(k, u.ID) {
				r.prog.unitDone(u)
				continue
			}
			if u.Layout != lastLayout {
				lay := r.Store.F.Layout(u.Layout)
				r.prog.printf("== layout %s: server CPUs %s, backend %s, generator %s (%s)", lay.ID, lay.Server, lay.Backend, lay.Loadgen, r.Plan.Net)
				lastLayout = u.Layout
			}
			if err := r.runInSession(ctx, u, k); err != nil {
				return err
			}
		}
		if n > 1 {
			// The control that ends the round (the next round's, or one
			// after the last): a round across which it moved beyond its
			// usual spread was measured on a moving machine.
			if k < n {
				if _, err := r.roundOrder(k+1, n); err != nil { // its record, to hold its control
					return err
				}
			}
			if err := r.control(ctx, k+1, n); err != nil {
				return err
			}
			var moved bool
			if err := r.Store.Update(func(f *results.File) { moved = f.MarkControlMoved(k) }); err != nil {
				return err
			}
			if moved {
				r.prog.printf("== round %d: the control moved %+.0f%% across the round (beyond %.0f%%): its steps are flagged noisy", k, 100*r.Store.F.Rounds[k-1].ControlMoved, 100*results.NoisyControl)
			}
			if err := r.remeasureNoisy(ctx, k, order); err != nil {
				return err
			}
			if err := r.Store.Update(func(f *results.File) { f.Rounds[k-1].Done = true }); err != nil {
				return err
			}
		}
	}
	return r.Store.Update(func(f *results.File) { f.Finished = true })
}

// prepare records the machine, layouts, notes and one unit record per
// unit (kept from an earlier run when resuming).
func (r *Runner) prepare(f *results.File) {
	if f.Machine.Hostname == "" {
		f.Machine = r.Machine
	}
	for _, l := range r.Layouts.Layouts {
		if f.Layout(l.ID) == nil {
			f.Layouts = append(f.Layouts, l)
		}
	}
	for _, n := range r.Plan.Notes {
		f.AddNote(n)
	}
	for _, n := range r.Layouts.Notes {
		f.AddNote(n)
	}
	for _, u := range r.Units {
		rec := f.Unit(u.ID)
		if rec != nil && rec.Status == results.StatusError && !strings.HasPrefix(rec.Reason, rateFromReason) {
			// Its error is its result (as later rounds of the run that
			// recorded it skip it): a resumed run does not run it again.
			r.failed[u.ID] = true
		}
		if rec == nil {
			rec = &results.Unit{ID: u.ID, Scenario: u.Scenario.Name, Family: u.Family, Kind: u.Scenario.Kind, Method: u.Scenario.Method,
				Profile: u.Profile.Name, Proxy: u.Profile.Proxy, Key: string(u.Key), Layout: u.Layout, Status: results.StatusPending}
			f.Units = append(f.Units, rec)
		}
		if u.Skip != "" {
			rec.Status, rec.Reason = results.StatusSkipped, u.Skip
		}
	}
	r.recordConfigSizes(f)
}

// runInSession opens a lab session on the unit's layout, runs the unit's
// part of round k in it and closes it: like the seeds' fresh containers,
// new namespaces and a new backend per unit mean sockets left in
// TIME_WAIT by one proxy or scenario cannot slow down the next (TIME_WAIT
// lasts 60 s, longer than most cool-downs).
func (r *Runner) runInSession(ctx context.Context, u UnitSpec, k int) error {
	return r.inSession(ctx, u, k, func(ur *unitRun) error { return ur.run(ctx) })
}

// inSession opens a lab session on u's layout, runs body on a unitRun of
// u in round k there and closes the session.
func (r *Runner) inSession(ctx context.Context, u UnitSpec, k int, body func(*unitRun) error) (err error) {
	if r.Open == nil {
		return ErrNoLab
	}
	id := u.Layout
	lay := r.Store.F.Layout(id)
	t0 := r.Now()
	s, err := r.Open(ctx, session.Options{
		Dir: filepath.Join(r.Store.Dir(), "lab-"+id), Net: r.Plan.Net, NoCgroups: r.NoCgroups,
		CPUs:        &lay.Plan,
		MemoryLimit: int64(r.Plan.MemoryLimit), Keys: []certs.KeyType{u.Key}, CertDir: filepath.Join(r.Store.Dir(), "certs"), Log: r.Log,
		Scheme: u.Scenario.Scheme, Backends: u.Scenario.NamedBackends(),
		ServerQuota: u.Scenario.Eff.ServerQuota, BackendQuota: u.Scenario.Eff.BackendQuota, Sysctls: u.Scenario.Sysctls,
		Profiles: r.Plan.ProfileSet(),
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("open the lab for layout %s: %v", id, err)
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close the lab: %v", cerr)
		}
	}()
	baseline := timeWait(s)
	r.prog.printf("    lab session ready in %.1f s (TIME_WAIT %d)", r.Now().Sub(t0).Seconds(), baseline)
	return body(&unitRun{r: r, session: s, spec: u, baseline: baseline, round: k})
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// timeWait counts TIME_WAIT sockets of the proxy's and the generator's
// connections (-1 if neither can be counted).
func timeWait(s Session) int {
	total, ok := 0, false
	for _, role := range []string{"proxy", "gen"} {
		if n, err := s.TimeWait(role); err == nil && n >= 0 {
			total += n
			ok = true
		}
	}
	if !ok {
		return -1
	}
	return total
}
