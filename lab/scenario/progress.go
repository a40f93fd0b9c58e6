package scenario

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/search"
)

// progress writes live progress lines: step i of about n, the rate, the
// verdict, pass/fail counts so far and the ETA from the budget.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	budget  Budget
	step    int // steps finished (run or replayed)
	pass    int
	fail    int
	genLim  int
	died    int
	doneEst time.Duration // estimates of the units finished so far
	unitT0  time.Time
	unitEst time.Duration
}

func newProgress(w io.Writer, b Budget, now func() time.Time) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, budget: b, now: now}
}

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// unitStart marks the start of a unit's part of round k that will run.
func (p *progress) unitStart(u UnitSpec, k int) {
	p.mu.Lock()
	p.unitT0, p.unitEst = p.now(), unitCost(u)
	p.mu.Unlock()
	round := ""
	if n := u.Scenario.Eff.Rounds; n > 1 {
		round = fmt.Sprintf(", round %d of %d", k, n)
	}
	p.printf("== %s on %s (%s, %s%s): %s", u.Scenario.Name, u.Profile.Name, u.Key, u.Layout, round, describe(u))
}

// unitDone counts a unit's estimate as spent.
func (p *progress) unitDone(u UnitSpec) {
	p.mu.Lock()
	p.doneEst += unitCost(u)
	p.unitEst = 0
	p.mu.Unlock()
}

// eta is the budget left: estimates of unfinished units minus the time
// already spent in the current one.
func (p *progress) eta() time.Duration {
	left := p.budget.Time - p.doneEst
	if p.unitEst > 0 {
		left -= min(p.now().Sub(p.unitT0), p.unitEst)
	}
	return max(left, 0)
}

// standing is the steps finished, the estimate of all steps and the budget
// left.
func (p *progress) standing() (done, steps int, eta time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.step, max(p.budget.Steps, p.step), p.eta()
}

// stepStart announces a long step.
func (p *progress) stepStart(u UnitSpec, seq int, phase string, rate float64, d time.Duration) {
	what := "closed loop"
	if rate > 0 {
		what = units.Rate(rate) + " req/s"
	}
	p.mu.Lock()
	i := p.step + 1
	n := max(p.budget.Steps, i)
	eta := p.eta()
	p.mu.Unlock()
	p.printf("[%d/~%d] %s %s %s: %s %s for %s ... | ETA %s", i, n, u.Scenario.Name, u.Profile.Name, u.Key, phase, what, FormatDuration(d), FormatDuration(eta))
}

// stepDone reports one finished step.
func (p *progress) stepDone(u UnitSpec, phase string, rate float64, o search.Judgment, detail string, replayed bool) {
	p.mu.Lock()
	p.step++
	switch o.Verdict {
	case search.Pass:
		p.pass++
	case search.GenLimited:
		p.genLim++
	case search.Died:
		p.died++
	default:
		p.fail++
	}
	what := phase
	if rate > 0 {
		what += " " + units.Rate(rate) + " req/s"
	} else {
		what += " closed loop"
	}
	verdict := string(o.Verdict)
	if len(o.Reasons) > 0 {
		verdict += " (" + strings.Join(o.Reasons, "; ") + ")"
	}
	if replayed {
		verdict += " [recorded]"
	}
	if detail != "" {
		detail = ", " + detail
	}
	n := max(p.budget.Steps, p.step)
	died := ""
	if p.died > 0 {
		died = fmt.Sprintf(", %d died", p.died)
	}
	line := fmt.Sprintf("[%d/~%d] %s %s %s: %s: %s%s | %d pass, %d fail, %d gen-limited%s | ETA %s",
		p.step, n, u.Scenario.Name, u.Profile.Name, u.Key, what, verdict, detail, p.pass, p.fail, p.genLim, died, FormatDuration(p.eta()))
	p.mu.Unlock()
	p.printf("%s", line)
}

// describe says what a unit will do.
func describe(u UnitSpec) string {
	s := u.Scenario
	switch s.Method {
	case "fixed":
		if rf := s.RateFrom; rf != nil {
			return fmt.Sprintf("a fixed rate of %s%% of what %s found, %d run(s) of %s", strconv.FormatFloat(100*rf.Share, 'f', -1, 64), rf.Scenario, s.Runs, s.Duration)
		}
		return fmt.Sprintf("fixed rates %v req/s, %d run(s) of %s", s.Rates, s.Runs, s.Duration)
	case "closed":
		return fmt.Sprintf("closed loop, %d connections, %d run(s) of %s", s.Connections, s.Runs, s.Duration)
	}
	e := s.Eff.Search
	what := "rate search"
	if s.Runs > 1 {
		what = fmt.Sprintf("%d rate searches", s.Runs)
	}
	return fmt.Sprintf("%s from %s req/s, %s steps, %d confirmations of %s (about %s)", what, units.Rate(e.Start), e.Step, e.ConfirmRuns, e.ConfirmStep, FormatDuration(u.Estimate.Time))
}

// unitCost is a unit's share of the budget in one of its rounds (idle
// memory aside).
func unitCost(u UnitSpec) time.Duration {
	return roundShare(u, u.Estimate.Time) + proxyStartCost + envOpenCost
}
