package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// timeWaitLifetime is how long Linux keeps a socket in TIME_WAIT
// (TCP_TIMEWAIT_LEN, 60 s, compiled into the kernel), plus a second: a wait
// this long drains whatever the step before left.
const timeWaitLifetime = 61 * time.Second

// cooldown waits after a failed step until the TIME_WAIT count in the lab
// has drained to the count before the layout's first unit plus the plan's
// margin, and records how long it waited. In netns mode there is nothing to
// wait for: the next step starts in fresh namespaces (cleanSlate). In
// loopback mode the plan's cooldown_cap bounds the wait, but never below
// TIME_WAIT's lifetime, so a step cannot start with the range still full
// because the cap was short; if it still ends above the limit (other
// traffic on the host), the progress says so loudly. When TIME_WAIT cannot
// be counted it waits the whole cap.
func (u *unitRun) cooldown(ctx context.Context, st *results.Step) error {
	if u.session.Net() == plan.NetNetns {
		return nil
	}
	se := u.spec.Scenario.Eff.Search
	start := u.r.Now()
	first := timeWait(u.session)
	capD := se.CooldownCap.D()
	if first >= 0 {
		capD = max(capD, timeWaitLifetime)
	}
	poll := u.r.Poll
	if poll <= 0 {
		poll = time.Second
	}
	if capD > 0 {
		poll = min(poll, capD/10)
	}
	poll = max(poll, time.Millisecond)
	limit := u.timeWaitLimit()
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
		if err := u.r.Sleep(ctx, min(poll, capD-waited)); err != nil {
			u.recordCooldown(st, start, first, tw, false)
			return err
		}
		if first >= 0 {
			tw = timeWait(u.session)
		}
	}
	u.recordCooldown(st, start, first, tw, first >= 0 && tw > limit)
	msg := fmt.Sprintf("cool-down: TIME_WAIT %d -> %d after %.1f s", first, tw, st.CooldownS)
	switch {
	case first < 0:
		msg = fmt.Sprintf("cool-down: TIME_WAIT cannot be counted here; waited %.1f s", st.CooldownS)
	case tw > limit:
		msg = fmt.Sprintf("%s: %s: the wait ended at %s with TIME_WAIT still above %d%s", loudness(u.r.Machine, tw), msg, FormatDuration(capD), limit, rangeShare(u.r.Machine, tw))
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
