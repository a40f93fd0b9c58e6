package scenario

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen"
)

// A round across which the control moved beyond NoisyControl (scripted:
// loadlab serve halves its capacity from the control that ends round 2)
// has every step flagged noisy, and one unit of it measured again; the
// rounds before and after, whose controls held still, flag nothing.
func TestControlMovedFlagsRound(t *testing.T) {
	h := newHarness(t, strings.Replace(roundsYAML, "rounds: 3\n", "rounds: 3\ncontrol: {rate: 5000, connections: 50, step: 2s, discard: 500ms}\n", 1))
	h.lab.capacity[serveProfile.Name] = 40000
	loops := 0
	h.lab.onGen = func(cfg gen.Config) {
		if cfg.Rate == 0 && slices.Contains(cfg.Headers, "Host: "+serveProfile.Name) {
			if loops++; loops == 3 { // the control of round 3, which ends round 2
				h.lab.capacity[serveProfile.Name] = 20000
			}
		}
	}
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if loops != 4 {
		t.Fatalf("%d control closed loops, want 4 (3 rounds and one after)", loops)
	}
	if m := []float64{f.Rounds[0].ControlMoved, f.Rounds[1].ControlMoved, f.Rounds[2].ControlMoved}; m[0] != 0 || m[1] != -0.5 || m[2] != 0 {
		t.Fatalf("control moved per round %v, want [0 -0.5 0]", m)
	}
	again := 0
	for _, u := range f.Units {
		for _, m := range u.Remeasured {
			if m.Round != 2 || !strings.Contains(m.Why, "the control moved -50% across round 2 (40000 to 20000 2xx/s; beyond 20%)") {
				t.Fatalf("%s set aside %+v", u.ID, m)
			}
			again++
		}
		for _, st := range u.Steps {
			if flagged := strings.Contains(st.NoisyWhy, "the control moved"); st.Noisy != flagged || flagged && st.Round != 2 {
				t.Fatalf("%s step %d (round %d): noisy %v %q", u.ID, st.Seq, st.Round, st.Noisy, st.NoisyWhy)
			}
		}
	}
	if again != 1 || !strings.Contains(h.log.String(), "== round 2: the control moved -50% across the round (beyond 20%): its steps are flagged noisy") {
		t.Fatalf("%d unit rounds measured again, want 1\n%s", again, h.log.String())
	}
}
