package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/lab/results"
)

// cooldown waits after a failed step until the TIME_WAIT count in the lab
// has drained to the count before the layout's first unit plus the plan's
// margin, at most the cap, and records how long it waited. When TIME_WAIT
// cannot be counted it waits the whole cap.
func (u *unitRun) cooldown(ctx context.Context, st *results.Step) error {
	se := u.spec.Scenario.Eff.Search
	capD := se.CooldownCap.D()
	poll := u.r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	if capD > 0 {
		poll = min(poll, capD/10)
	}
	poll = max(poll, time.Millisecond)
	limit := se.CooldownMargin
	if u.baseline > 0 {
		limit += u.baseline
	}
	start := u.r.Now()
	first := timeWait(u.env)
	tw := first
	if first < 0 {
		// Not countable (no namespace to count in): wait the cap, as seed
		// 002 waited a fixed 100 s.
		limit = -2
	}
	for tw > limit {
		waited := u.r.Now().Sub(start)
		if waited >= capD {
			break
		}
		t := time.NewTimer(min(poll, capD-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			u.recordCooldown(st, start, first, tw, false)
			return ctx.Err()
		case <-t.C:
		}
		if first >= 0 {
			tw = timeWait(u.env)
		}
	}
	u.recordCooldown(st, start, first, tw, first >= 0 && tw > limit)
	msg := fmt.Sprintf("cool-down: TIME_WAIT %d -> %d after %.1f s", first, tw, st.CooldownS)
	switch {
	case first < 0:
		msg = fmt.Sprintf("cool-down: TIME_WAIT cannot be counted here; waited %.1f s", st.CooldownS)
	case tw > limit:
		msg += fmt.Sprintf(" (cap %s reached, still above %d)", se.CooldownCap, limit)
	}
	u.r.prog.printf("    %s", msg)
	return nil
}

func (u *unitRun) recordCooldown(st *results.Step, start time.Time, first, last int, capped bool) {
	st.CooldownS = round1(u.r.Now().Sub(start).Seconds())
	st.CooldownTW = [2]int{first, last}
	st.CooldownCapped = capped
	_ = u.r.Store.Save()
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }
