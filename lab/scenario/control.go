package scenario

import (
	"context"
	"fmt"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
)

// This file is the round's control (plan control): the same load on the
// same target at the start of every round, so that the run measures its
// own noise. The target is the generator's ceiling target, loadlab serve
// on the first layout's server CPUs with the plan's first key; nothing a
// proxy does can move it, only the machine.

// ControlID names round k's control; the control after the last of n
// rounds (k = n+1) is "control/after".
func ControlID(k, n int) string {
	if k > n {
		return "control/after"
	}
	return fmt.Sprintf("control/round-%d", k)
}

// controlSlot is where control k of n rounds is recorded: round k's
// Control, or the last round's ControlAfter.
func controlSlot(f *results.File, k, n int) **results.Unit {
	if k > n {
		return &f.Rounds[n-1].ControlAfter
	}
	return &f.Rounds[k-1].Control
}

// controlSpec is the control as a unit: a keep-alive 1 KiB scenario of two
// runs, the fixed rate and the closed loop, judged by the plan's pass
// criteria.
func (r *Runner) controlSpec(k, n int) UnitSpec {
	c := r.Plan.Control
	key := "p256"
	if len(r.Plan.Keys) > 0 {
		key = r.Plan.Keys[0]
	}
	s := &plan.Scenario{Name: "control", Kind: plan.KindKeepalive, Method: plan.MethodFixed, Path: "/1k", Scheme: plan.SchemeHTTPS,
		Connections: c.Connections, Duration: c.Step, Warmup: c.Discard, Runs: 1, Rates: []float64{c.Rate}, Keys: []string{key}}
	s.Eff.Pass, s.Eff.Search, s.Eff.Rounds = r.Plan.Pass, r.Plan.Search, 1
	lay := r.Layouts.Layouts[0].ID
	spec := UnitSpec{ID: ControlID(k, n), Scenario: s, Family: "control", Profile: serveProfile, Key: certs.KeyType(key), Layout: lay}
	spec.Estimate = plan.Estimate{Steps: 2, Time: 2 * c.Step.D()}
	return spec
}

// control measures round k's control of n rounds (k = n+1: the one after
// the last) unless the record has it, in a lab session of its own. A
// control that cannot be measured is recorded with its error; only
// cancellation and a results file that cannot be written end the run.
func (r *Runner) control(ctx context.Context, k, n int) error {
	if r.Plan.Control == nil || len(r.Layouts.Layouts) == 0 {
		return nil
	}
	if c := *controlSlot(r.Store.F, k, n); c != nil && (c.Status == results.StatusDone || c.Status == results.StatusError) {
		return nil
	}
	spec := r.controlSpec(k, n)
	var rec *results.Unit
	if err := r.Store.Update(func(f *results.File) {
		rec = &results.Unit{ID: spec.ID, Scenario: "control", Family: "control", Kind: plan.KindKeepalive, Method: plan.MethodFixed,
			Profile: serveProfile.Name, Proxy: serveProfile.Proxy, Key: string(spec.Key), Layout: spec.Layout, Status: results.StatusRunning, Started: r.Now().UTC()}
		*controlSlot(f, k, n) = rec
	}); err != nil {
		return err
	}
	c := r.Plan.Control
	what := fmt.Sprintf("round %d control", k)
	if k > n {
		what = fmt.Sprintf("control after round %d", n)
	}
	r.prog.printf("== %s: the generator against loadlab serve (no proxy), %s req/s and a closed loop, %d connections, %s each", what, units.Rate(c.Rate), c.Connections, c.Step)
	return r.inSession(ctx, spec, min(k, n), func(u *unitRun) error {
		u.rec = rec
		u.replayed = map[int]bool{}
		u.start = func(ctx context.Context) (Proxy, error) { return u.session.StartServe(ctx, spec.Key, proxy.Features{}) }
		var err error
		for i, rate := range []float64{c.Rate, 0} {
			if _, err = u.step(ctx, results.PhaseRun, rate, 0, i+1); err != nil {
				break
			}
		}
		u.stopProxy()
		status, reason, err := endStatus(ctx, err)
		if serr := r.Store.Update(func(*results.File) {
			rec.Status, rec.Reason, rec.Finished = status, reason, r.Now().UTC()
		}); serr != nil && err == nil {
			err = serr
		}
		if err == nil {
			rate, p99 := results.ControlValues(rec)
			r.prog.printf("    %s: closed loop %s/s 2xx, p99 at %s req/s %s%s", what, units.Rate(rate), units.Rate(c.Rate), units.Micros(p99), reasonWords(reason))
		}
		return err
	})
}

func reasonWords(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}

// setVsControl records u's values over its rounds' controls.
func (u *unitRun) setVsControl() {
	if u.r.Plan.Control != nil {
		u.rec.VsControl = u.r.Store.F.VsControlOf(u.rec)
	}
}
