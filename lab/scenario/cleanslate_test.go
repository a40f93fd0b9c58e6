package scenario

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// In netns mode every step (search probes, bisection, confirmations, runs)
// starts in fresh namespaces: one Renew per step, every step records 0
// TIME_WAIT at its start, and no cool-down waits between steps even after
// failures (the failing steps leave 1000 sockets in the fake's proxy
// namespace).
func TestNetnsRenewsBeforeEveryStep(t *testing.T) {
	h := newHarness(t, strings.Replace(testPlanYAML, "keys: [p256]", "keys: [p256]\nnet: netns", 1))
	h.lab.connsPer = 1
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	steps := 0
	for _, u := range append(f.Units, f.Ceilings...) {
		for _, st := range u.Steps {
			steps++
			if st.StartTimeWait != 0 || st.StartUnclean || st.RenewS != 0.2 {
				t.Errorf("%s step %d: start TIME_WAIT %d unclean %v renew %.2f s; want 0 after a 0.2 s renew", u.ID, st.Seq, st.StartTimeWait, st.StartUnclean, st.RenewS)
			}
			if st.CooldownS != 0 || st.CooldownTW != [2]int{} {
				t.Errorf("%s step %d cooled down in netns mode: %v s %v", u.ID, st.Seq, st.CooldownS, st.CooldownTW)
			}
		}
	}
	if steps == 0 || h.lab.renewals != steps {
		t.Fatalf("%d renewals for %d steps", h.lab.renewals, steps)
	}
	if strings.Contains(h.log.String(), "cool-down") || strings.Contains(h.log.String(), "WARNING") {
		t.Errorf("progress mentions a cool-down or a warning in netns mode:\n%s", h.log.String())
	}
}

// fakeClock is a clock that Sleep advances.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// In loopback mode the cool-down waits past a short cooldown_cap for as
// long as TIME_WAIT lives (61 s), and a step that still starts above the
// limit (the sockets never drain here) is recorded as unclean and said
// loudly.
func TestLoopbackCooldownOutlastsShortCap(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [nginx-stock]
cpus: {server: "1"}
search: {start: 1000, max: 8000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 5s, cooldown_margin: 10}
scenarios:
  - kind: keepalive-1k
`)
	h.lab.drain = 0 // nothing expires: only a wait past the cap could tell
	clock := &fakeClock{now: time.Unix(1e9, 0)}
	f, err := h.runWith(context.Background(), clock.Now, clock.Sleep)
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	u := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	var failed, unclean int
	for i, st := range u.Steps {
		if st.Verdict == "fail" {
			failed++
			if st.CooldownS < timeWaitLifetime.Seconds() || !st.CooldownCapped {
				t.Errorf("step %d: waited %.1f s (capped %v); want at least %s past the 5 s cap", st.Seq, st.CooldownS, st.CooldownCapped, timeWaitLifetime)
			}
			if i+1 < len(u.Steps) {
				next := u.Steps[i+1]
				if next.StartTimeWait != 1000 || !next.StartUnclean {
					t.Errorf("step %d after a failure: start TIME_WAIT %d unclean %v; want 1000, unclean", next.Seq, next.StartTimeWait, next.StartUnclean)
				}
			}
		}
		if st.StartUnclean {
			unclean++
		}
	}
	if failed == 0 || unclean == 0 {
		t.Fatalf("%d failed and %d unclean steps: the test proves nothing\n%s", failed, unclean, h.log.String())
	}
	for _, want := range []string{"WARNING: step", "starts with 1000 sockets in TIME_WAIT", "WARNING: cool-down: TIME_WAIT 1000 -> 1000 after 61.0 s: the wait ended at 1m1s"} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, h.log.String())
		}
	}
}
