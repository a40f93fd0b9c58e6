package search

import (
	"context"
	"fmt"
	"github.com/loadlab/loadlab/internal/units"
	"math"
	"sort"
)

// Verdict is what one step came to.
type Verdict string

// Step verdicts.
const (
	Pass       Verdict = "pass"
	Fail       Verdict = "fail"
	GenLimited Verdict = "gen-limited" // failed while the generator was the bottleneck
	// Died: the proxy or the backend died during the step. Neither pass
	// nor fail, it ends the unit's search (the lab's step sets it).
	Died Verdict = "died"
)

// Phase says why a step ran.
type Phase string

// Search phases.
const (
	PhaseProbe   Phase = "probe"
	PhaseBisect  Phase = "bisect"
	PhaseConfirm Phase = "confirm"
)

// Config holds the search's numbers (plan.Search without the durations,
// which belong to the step function).
type Config struct {
	Start        float64 // first rate
	Max          float64 // probing stops here
	Min          float64 // below this no rate is tried
	Growth       float64 // probe factor (2 = doubling)
	Precision    float64 // bisect until (fail-pass)/pass <= Precision
	ConfirmRuns  int     // passes in a row needed
	StepDown     float64 // fraction a failed confirmation lowers the rate
	MaxStepDowns int     // step-downs before giving up
	// Prior is an earlier search's bracket (a later round of the same
	// unit): the search starts at its last pass instead of at Start and
	// probes its first failure next, so a round costs a few steps, not a
	// whole search. Zero: start at Start.
	Prior Bracket
}

// Bracket is where an earlier search ended: its highest pass and the
// lowest failure above it (0 = none failed).
type Bracket struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Step is one run the search asks for.
type Step struct {
	Seq     int     // 1-based position in the search
	Phase   Phase   // probe, bisect or confirm
	Rate    float64 // offered rate, req/s
	Confirm int     // confirm phase: 1..ConfirmRuns within the round
}

// Judgment is a step's verdict and, unless it passed, why.
type Judgment struct {
	Verdict Verdict  `json:"verdict"`
	Reasons []string `json:"reasons,omitempty"`
}

// StepFunc runs one step. An error ends the search (e.g. ctx cancelled).
type StepFunc func(ctx context.Context, s Step) (Judgment, error)

// CooldownFunc runs after every step that did not pass.
type CooldownFunc func(ctx context.Context, after Step) error

// Result is where the search ended.
type Result struct {
	Rate             float64 `json:"rate"`              // confirmed max sustainable rate (0 = none)
	Confirmed        bool    `json:"confirmed"`         // Rate passed ConfirmRuns times in a row
	GeneratorLimited bool    `json:"generator_limited"` // the generator, not the proxy, bounded the search
	Capped           bool    `json:"capped"`            // Max passed: the proxy may go higher
	LastPass         float64 `json:"last_pass"`         // highest passing rate before confirmation
	FirstFail        float64 `json:"first_fail"`        // lowest failing rate above it (0 = none)
	StepDowns        int     `json:"step_downs"`        // failed confirmation rounds
	Steps            int     `json:"steps"`             // steps run
	Note             string  `json:"note,omitempty"`    // how the search ended, in words, when not plainly
}

// Validate checks the numbers (the plan validates them too; this guards
// direct callers).
func (c Config) Validate() error {
	bad := func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
	switch {
	case bad(c.Start) || bad(c.Max) || bad(c.Min) || bad(c.Growth) || bad(c.Precision) || bad(c.StepDown):
		return fmt.Errorf("search: every number must be finite")
	case bad(c.Prior.Lo) || bad(c.Prior.Hi) || c.Prior.Lo < 0 || c.Prior.Hi < 0:
		return fmt.Errorf("search: the prior bracket must be finite and >= 0 (got %g, %g)", c.Prior.Lo, c.Prior.Hi)
	case c.Start <= 0 || c.Max < c.Start || c.Min <= 0 || c.Min > c.Start:
		return fmt.Errorf("search: need 0 < min <= start <= max (got min %g, start %g, max %g)", c.Min, c.Start, c.Max)
	case c.Growth <= 1:
		return fmt.Errorf("search: growth must be > 1 (got %g)", c.Growth)
	case c.Precision <= 0 || c.Precision >= 1:
		return fmt.Errorf("search: precision must be between 0 and 1 (got %g)", c.Precision)
	case c.ConfirmRuns < 1:
		return fmt.Errorf("search: confirm runs must be >= 1 (got %d)", c.ConfirmRuns)
	case c.StepDown <= 0 || c.StepDown >= 1 || c.MaxStepDowns < 0:
		return fmt.Errorf("search: step down must be between 0 and 1 and max step-downs >= 0")
	}
	return nil
}

// maxBisect bounds the steps of one search before confirmation (a plan
// with a tiny precision would otherwise bisect for hours).
const maxBisect = 100

// runner carries one search's state.
type runner struct {
	cfg  Config
	step StepFunc
	cool CooldownFunc
	seq  int
	res  Result
}

// do runs one step and, unless it passed, the cool-down.
func (r *runner) do(ctx context.Context, phase Phase, rate float64, confirm int) (Verdict, error) {
	r.seq++
	s := Step{Seq: r.seq, Phase: phase, Rate: rate, Confirm: confirm}
	o, err := r.step(ctx, s)
	if err != nil {
		return "", err
	}
	r.res.Steps++
	switch o.Verdict {
	case Pass:
		return Pass, nil
	case Fail, GenLimited:
	default:
		return "", fmt.Errorf("search: step %d returned verdict %q", s.Seq, o.Verdict)
	}
	if r.cool != nil {
		if err := r.cool(ctx, s); err != nil {
			return "", err
		}
	}
	return o.Verdict, nil
}

// Run searches for the maximum sustainable rate. On an error from step or
// cool it returns the result so far with the error.
func Run(ctx context.Context, cfg Config, step StepFunc, cool CooldownFunc) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	r := &runner{cfg: cfg, step: step, cool: cool}
	err := r.run(ctx)
	return r.res, err
}

func (r *runner) run(ctx context.Context) error {
	c := r.cfg
	var lo, hi float64 // last pass, first failure
	var hiGen bool     // hi came from a generator-limited step
	var err error
	from := roundRate(c.Start) // the first upward probe (0: none)
	if c.Prior.Lo > 0 {
		var up bool
		if lo, hi, hiGen, up, err = r.fromPrior(ctx); err != nil {
			return err
		}
		from = 0
		switch {
		case up && lo >= c.Max:
			r.res.Capped = true
		case up:
			if next := roundRate(math.Min(lo*r.priorGrowth(), c.Max)); next > lo {
				from = next
			}
		}
	}
	if from > 0 {
		if lo, hi, hiGen, err = r.probeUp(ctx, from, lo); err != nil {
			return err
		}
	}
	for hi > 0 {
		if lo > 0 && (hi-lo)/lo <= c.Precision || r.res.Steps >= maxBisect {
			break
		}
		mid := roundRate((lo + hi) / 2)
		if mid < c.Min || mid <= lo || mid >= hi {
			break
		}
		v, err := r.do(ctx, PhaseBisect, mid, 0)
		if err != nil {
			return err
		}
		if v == Pass {
			lo = mid
		} else {
			hi, hiGen = mid, v == GenLimited
		}
	}
	r.res.LastPass, r.res.FirstFail = lo, hi
	r.res.GeneratorLimited = hiGen
	if lo == 0 {
		r.res.Note = fmt.Sprintf("no rate passed: the lowest tried, %s req/s, failed", units.Rate(hi))
		if hiGen {
			r.res.Note += " with the generator as the bottleneck"
		}
		return nil
	}
	return r.confirm(ctx, lo)
}

// priorGrowth is the probe factor of a search from a prior bracket: the
// rate is expected near the bracket, so it moves by twice the precision
// (at most Growth) and one bisection step usually closes the new bracket.
func (r *runner) priorGrowth() float64 {
	return math.Min(r.cfg.Growth, 1+2*r.cfg.Precision)
}

// probeUp probes from rate upwards by Growth (priorGrowth from a prior
// bracket) until a step fails or Max passes (Capped); lo is the pass below
// rate so far.
func (r *runner) probeUp(ctx context.Context, rate, lo float64) (float64, float64, bool, error) {
	c := r.cfg
	growth := c.Growth
	if c.Prior.Lo > 0 {
		growth = r.priorGrowth()
	}
	for {
		v, err := r.do(ctx, PhaseProbe, rate, 0)
		if err != nil {
			return 0, 0, false, err
		}
		if v != Pass {
			return lo, rate, v == GenLimited, nil
		}
		lo = rate
		if rate >= c.Max {
			r.res.Capped = true
			return lo, 0, false, nil
		}
		next := roundRate(math.Min(rate*growth, c.Max))
		if next <= rate {
			return lo, 0, false, nil // growth too small to move a rounded rate: treat as capped
		}
		rate = next
	}
}

// fromPrior starts from an earlier search's bracket: it probes the
// bracket's pass (clamped to Min..Max) and, if that passes, its failure.
// Both passing means the rate moved up: up is set and the probes go on
// from lo by Growth. A pass below a failure is a bracket to bisect. A
// failing pass probes down by priorGrowth until a rate passes or Min is
// reached (lo 0: nothing passed).
func (r *runner) fromPrior(ctx context.Context) (lo, hi float64, hiGen, up bool, err error) {
	c := r.cfg
	rate := roundRate(math.Max(math.Min(c.Prior.Lo, c.Max), c.Min))
	v, err := r.do(ctx, PhaseProbe, rate, 0)
	if err != nil {
		return 0, 0, false, false, err
	}
	if v == Pass {
		lo = rate
		ph := roundRate(math.Min(c.Prior.Hi, c.Max))
		if c.Prior.Hi <= 0 || ph <= lo {
			return lo, 0, false, true, nil
		}
		v, err := r.do(ctx, PhaseProbe, ph, 0)
		if err != nil {
			return 0, 0, false, false, err
		}
		if v == Pass {
			return ph, 0, false, true, nil
		}
		return lo, ph, v == GenLimited, false, nil
	}
	hi, hiGen = rate, v == GenLimited
	for {
		next := roundRate(hi / r.priorGrowth())
		if next < c.Min || next >= hi {
			return 0, hi, hiGen, false, nil
		}
		v, err := r.do(ctx, PhaseProbe, next, 0)
		if err != nil {
			return 0, 0, false, false, err
		}
		if v == Pass {
			return next, hi, hiGen, false, nil
		}
		hi, hiGen = next, v == GenLimited
	}
}

// confirm asks for ConfirmRuns passes in a row, stepping down on failure.
func (r *runner) confirm(ctx context.Context, rate float64) error {
	c := r.cfg
	for {
		ok := true
		for i := 1; i <= c.ConfirmRuns; i++ {
			v, err := r.do(ctx, PhaseConfirm, rate, i)
			if err != nil {
				return err
			}
			if v != Pass {
				ok = false
				if v == GenLimited {
					r.res.GeneratorLimited = true
				}
				break
			}
		}
		if ok {
			r.res.Rate, r.res.Confirmed = rate, true
			switch {
			case r.res.Capped:
				r.res.Note = fmt.Sprintf("passed at the plan's max, %s req/s: the proxy may go higher", units.Rate(rate))
			case r.res.GeneratorLimited:
				r.res.Note = "the generator, not the proxy, was the bottleneck above this rate: it is a lower bound"
			}
			return nil
		}
		next := roundRate(rate * (1 - c.StepDown))
		if r.res.StepDowns >= c.MaxStepDowns || next < c.Min || next >= rate {
			r.res.Note = fmt.Sprintf("not confirmed: %s req/s failed a confirmation after %d step-downs", units.Rate(rate), r.res.StepDowns)
			return nil
		}
		r.res.StepDowns++
		rate = next
	}
}

// roundRate keeps rates readable: whole req/s from 10 up, 0.1 below.
func roundRate(f float64) float64 {
	if f >= 10 {
		return math.Round(f)
	}
	return math.Round(f*10) / 10
}

// Median is the index of the search whose confirmed rate is the median of
// the confirmed searches of all (the lower middle of an even count): a
// search that confirmed nothing (a noisy minute, in one round of three)
// is listed with the others but does not make the row unconfirmed. With
// none confirmed it is the one with the highest last pass (the first of
// equals).
func Median(all []Result) int {
	var idx []int
	for i := range all {
		if all[i].Confirmed {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		best := 0
		for i := range all {
			if all[i].LastPass > all[best].LastPass {
				best = i
			}
		}
		return best
	}
	sort.SliceStable(idx, func(a, b int) bool { return all[idx[a]].Rate < all[idx[b]].Rate })
	return idx[(len(idx)-1)/2]
}
