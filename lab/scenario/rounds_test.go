package scenario

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

// roundsYAML is the runner tests' plan in 3 rounds from a fixed seed, its
// sustained scenario once (rounds: 1).
var roundsYAML = strings.Replace(testPlanYAML, "scenarios:", "rounds: 3\nseed: 7\nscenarios:", 1) + "    rounds: 1\n"

// roundOrders is the recorded unit order of every round.
func roundOrders(f *results.File) [][]string {
	var out [][]string
	for _, r := range f.Rounds {
		out = append(out, r.Order)
	}
	return out
}

// Rounds run every scenario's units once per round, scenario by scenario,
// in an order the seed reproduces and that differs between rounds; a
// search's later rounds start at the earlier rounds' bracket and cost a
// few steps; runs go on counting over the rounds.
func TestRounds(t *testing.T) {
	h := newHarness(t, roundsYAML)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !f.Finished || f.RoundSeed != 7 || len(f.Rounds) != 3 {
		t.Fatalf("finished %v, seed %d, rounds %+v", f.Finished, f.RoundSeed, f.Rounds)
	}
	orders := roundOrders(f)
	for k, o := range orders {
		if !f.Rounds[k].Done {
			t.Fatalf("round %d not done", k+1)
		}
		// scenario by scenario: keepalive-1k's two units first
		if len(o) < 4 || !strings.HasPrefix(o[0], "keepalive-1k/") || !strings.HasPrefix(o[1], "keepalive-1k/") {
			t.Fatalf("round %d order %v", k+1, o)
		}
		want := 6
		if k > 0 {
			want = 4 // sustained: rounds 1
		}
		if len(o) != want {
			t.Fatalf("round %d has %d units, want %d: %v", k+1, len(o), want, o)
		}
	}
	if slices.Equal(orders[0][:4], orders[1]) && slices.Equal(orders[1], orders[2]) {
		t.Fatalf("the seed gave the same order in every round: %v", orders)
	}
	// the same seed, another run: the same orders
	h2 := newHarness(t, roundsYAML)
	f2, err := h2.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := roundOrders(f2); !slices.EqualFunc(got, orders, slices.Equal) {
		t.Fatalf("seed 7 again gave %v, first %v", got, orders)
	}

	for _, p := range []string{"nginx-stock", "nginx-keepalive"} {
		u := f.Unit("keepalive-1k/" + p + "/p256/1cpu")
		if u.Status != results.StatusDone || u.RoundsDone != 3 || len(u.Searches) != 3 || u.SearchRun < 1 {
			t.Fatalf("%s: %s, rounds %d, searches %d", p, u.Status, u.RoundsDone, len(u.Searches))
		}
		first := u.Searches[0]
		for i, s := range u.Searches[1:] {
			if *s != *u.Searches[0] && s.Rate != first.Rate {
				t.Fatalf("%s round %d found %g, round 1 %g (fixed capacity)", p, i+2, s.Rate, first.Rate)
			}
			if s.Steps >= first.Steps || s.Steps > 2+3 {
				t.Fatalf("%s round %d took %d steps, round 1 %d", p, i+2, s.Steps, first.Steps)
			}
		}
		// round 2's first step is round 1's rate found, its second the failure above it
		var r2 []*results.Step
		for _, st := range u.Steps {
			if st.Round == 2 {
				r2 = append(r2, st)
			}
		}
		if len(r2) < 2 || r2[0].Rate != first.Rate || r2[1].Rate != first.FirstFail || r2[0].Run != 2 {
			t.Fatalf("%s round 2 steps start %+v %+v, want %g then %g (run 2)", p, r2[0], r2[1], first.Rate, first.FirstFail)
		}
		fr := f.Unit("fixed-rate/" + p + "/p256/1cpu")
		var runs []int
		for _, st := range fr.Steps {
			if st.Rate == 500 {
				runs = append(runs, st.Run)
			}
		}
		if !slices.Equal(runs, []int{1, 2, 3, 4, 5, 6}) {
			t.Fatalf("%s fixed-rate 500 runs %v, want 1..6 over 3 rounds of 2", p, runs)
		}
		if s := f.Unit("sustained/" + p + "/p256/1cpu"); len(s.Steps) != 1 || s.RoundsDone != 1 || s.Status != results.StatusDone {
			t.Fatalf("%s sustained (rounds: 1): %d steps, rounds %d", p, len(s.Steps), s.RoundsDone)
		}
	}
	if !strings.Contains(h.log.String(), "== round 2 of 3") || !strings.Contains(h.log.String(), "round 2 starts from the earlier rounds") {
		t.Fatalf("progress:\n%s", h.log.String())
	}
}

// A run interrupted in round 2 resumes there: round 1 is not run again,
// the rounds keep their recorded orders, and the result equals the
// uninterrupted run's.
func TestRoundsResume(t *testing.T) {
	ref := newHarness(t, roundsYAML)
	want, err := ref.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, roundsYAML)
	ctx, cancel := context.WithCancel(context.Background())
	h.lab.cancelAt, h.lab.cancel = ref.lab.genCalls*2/3, cancel
	f, err := h.run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v", err)
	}
	if len(f.Rounds) < 2 || !f.Rounds[0].Done || f.Rounds[len(f.Rounds)-1].Done {
		t.Fatalf("rounds after Ctrl-C %+v", f.Rounds)
	}
	h.lab.cancelAt = 0
	calls := h.lab.genCalls
	f, err = h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// what was left, and the interrupted step again
	if ran := h.lab.genCalls - calls; ran != ref.lab.genCalls-calls+1 {
		t.Fatalf("resume ran %d steps; the whole plan is %d, %d were run before", ran, ref.lab.genCalls, calls)
	}
	if got := roundOrders(f); !slices.EqualFunc(got, roundOrders(want), slices.Equal) {
		t.Fatalf("orders %v, want %v", got, roundOrders(want))
	}
	for _, wu := range want.Units {
		gu := f.Unit(wu.ID)
		if gu.Status != results.StatusDone || gu.RoundsDone != wu.RoundsDone || len(gu.Steps) != len(wu.Steps) {
			t.Fatalf("%s: %s, rounds %d, %d steps; want rounds %d, %d steps", wu.ID, gu.Status, gu.RoundsDone, len(gu.Steps), wu.RoundsDone, len(wu.Steps))
		}
		if wu.Search != nil && (gu.Search == nil || gu.Search.Rate != wu.Search.Rate || len(gu.Searches) != len(wu.Searches)) {
			t.Fatalf("%s: search %+v, want %+v", wu.ID, gu.Search, wu.Search)
		}
	}
}

// ShuffleRound keeps scenarios in order and is a function of seed and k.
func TestShuffleRound(t *testing.T) {
	h := newHarness(t, roundsYAML)
	units := mustUnits(t, h)
	ids := func(us []UnitSpec) []string {
		var out []string
		for _, u := range us {
			out = append(out, u.ID)
		}
		return out
	}
	a := ids(ShuffleRound(slices.Clone(units), h.plan.ScenarioNames(), 42, 1))
	b := ids(ShuffleRound(slices.Clone(units), h.plan.ScenarioNames(), 42, 1))
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, two orders: %v %v", a, b)
	}
	differs := false
	for k := 2; k <= 8; k++ {
		if !slices.Equal(a, ids(ShuffleRound(slices.Clone(units), h.plan.ScenarioNames(), 42, k))) {
			differs = true
		}
	}
	if !differs {
		t.Fatal("8 rounds of one seed all in one order")
	}
	var scen []string
	for _, id := range a {
		if s := strings.Split(id, "/")[0]; len(scen) == 0 || scen[len(scen)-1] != s {
			scen = append(scen, s)
		}
	}
	if strings.Join(scen, ",") != "keepalive-1k,fixed-rate,sustained" {
		t.Fatalf("scenarios out of plan order: %v", a)
	}
	// the plan's order, not the units' first appearance (BuildUnits
	// lists them profile by profile)
	rev := slices.Clone(units)
	slices.Reverse(rev)
	scen = nil
	for _, u := range ShuffleRound(rev, h.plan.ScenarioNames(), 42, 1) {
		if len(scen) == 0 || scen[len(scen)-1] != u.Scenario.Name {
			scen = append(scen, u.Scenario.Name)
		}
	}
	if strings.Join(scen, ",") != "keepalive-1k,fixed-rate,sustained" {
		t.Fatalf("reversed units: scenarios in order %v", scen)
	}
}

// A plan's control runs at the start of every round against loadlab
// serve (no proxy): a fixed-rate step and a closed loop; every unit's
// vs_control is its round's value over its round's control.
func TestRoundControl(t *testing.T) {
	h := newHarness(t, strings.Replace(roundsYAML, "rounds: 3\n", "rounds: 3\ncontrol: {rate: 5000, connections: 50, step: 2s, discard: 500ms}\n", 1))
	h.lab.capacity[serveProfile.Name] = 40000
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	for k, r := range f.Rounds {
		c := r.Control
		if c == nil || c.Status != results.StatusDone || len(c.Steps) != 2 || c.Steps[0].Rate != 5000 || c.Steps[1].Rate != 0 || c.Steps[0].Round != k+1 || c.Steps[1].Connections != 50 {
			t.Fatalf("round %d control %+v", k+1, c)
		}
		if rate, p99 := results.ControlValues(c); rate != 40000 || p99 <= 0 {
			t.Fatalf("round %d control values %g, %d", k+1, rate, p99)
		}
	}
	u := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	vc := u.VsControl
	if vc == nil || vc.Metric != results.VsRate || len(vc.Rounds) != 3 {
		t.Fatalf("vs_control %+v", vc)
	}
	for k, s := range u.Searches {
		if want := s.Rate / 40000; vc.Rounds[k] != want {
			t.Fatalf("round %d vs_control %g, want %g", k+1, vc.Rounds[k], want)
		}
	}
	if fr := f.Unit("fixed-rate/nginx-stock/p256/1cpu"); fr.VsControl != nil {
		t.Fatalf("two offered rates have no one value: %+v", fr.VsControl)
	}
	if s := f.Unit("sustained/nginx-keepalive/p256/1cpu"); s.VsControl == nil || len(s.VsControl.Rounds) != 1 || s.VsControl.Rounds[0] != 20000.0/40000 {
		t.Fatalf("sustained (round 1 only) vs_control %+v", s.VsControl)
	}
	if h.lab.serves < 4 {
		t.Fatalf("%d loadlab serve starts for 4 controls (3 rounds and one after)", h.lab.serves)
	}
	// The control after the last round ends it; a control that held still
	// flags nothing.
	if c := f.Rounds[2].ControlAfter; c == nil || c.ID != "control/after" || c.Status != results.StatusDone {
		t.Fatalf("control after the last round: %+v", c)
	}
	for _, u := range f.Units {
		for _, st := range u.Steps {
			if st.Noisy {
				t.Fatalf("%s step %d flagged with a still control: %s", u.ID, st.Seq, st.NoisyWhy)
			}
		}
	}
	for _, r := range f.Rounds {
		if r.ControlMoved != 0 {
			t.Fatalf("round %d: control moved %g", r.Round, r.ControlMoved)
		}
	}
}

// A step measured while something outside the lab used the lab's CPUs
// (scripted: a spinner's 2 cores over one step of round 3) is flagged
// noisy, and its unit's round is measured again once at the end of the
// round, the first measurement kept aside; a run without the disturbance
// measures nothing again.
func TestRemeasureNoisy(t *testing.T) {
	ref := newHarness(t, roundsYAML)
	quiet, err := ref.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range quiet.Units {
		if len(u.Remeasured) > 0 {
			t.Fatalf("quiet run measured %s again", u.ID)
		}
	}
	h := newHarness(t, roundsYAML)
	// a spinner on both CPUs over the step of the last unit of round 3
	defer scriptHost(h, map[int]time.Duration{ref.lab.genCalls - 1: 2 * time.Second})()
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	var again []*results.Unit
	for _, u := range f.Units {
		if len(u.Remeasured) > 0 {
			again = append(again, u)
		}
	}
	if len(again) != 1 {
		t.Fatalf("%d units measured again, want 1\n%s", len(again), h.log.String())
	}
	u := again[0]
	m := u.Remeasured[0]
	if m.Round != 3 || !strings.Contains(m.Why, "something outside the lab used") || !slices.ContainsFunc(m.Steps, func(st *results.Step) bool { return st.Noisy }) {
		t.Fatalf("%s set aside %+v", u.ID, m)
	}
	want := quiet.Unit(u.ID)
	if u.RoundsDone != 3 || len(u.Steps) != len(want.Steps) || slices.ContainsFunc(u.Steps, func(st *results.Step) bool { return st.Noisy }) {
		t.Fatalf("%s after the second measurement: rounds %d, %d steps (want %d)", u.ID, u.RoundsDone, len(u.Steps), len(want.Steps))
	}
	if extra := h.lab.genCalls - ref.lab.genCalls; extra != len(m.Steps) {
		t.Fatalf("%d steps more than the quiet run, want the %d of the round measured again", extra, len(m.Steps))
	}
	if !strings.Contains(h.log.String(), "== round 3: 1 unit(s) had a noisy step; measuring the noisiest 1 again") {
		t.Fatalf("progress:\n%s", h.log.String())
	}
}

// Two units of a round noisy: only the noisiest is measured again
// (MaxRemeasure), the other stays flagged.
func TestRemeasureNoisiestOnly(t *testing.T) {
	ref := newHarness(t, roundsYAML)
	if _, err := ref.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, roundsYAML)
	// the last step of the round's last unit (fixed-rate: 4 steps), and
	// the last step of the unit before it, twice as noisy
	defer scriptHost(h, map[int]time.Duration{ref.lab.genCalls - 1: 2 * time.Second, ref.lab.genCalls - 5: 4 * time.Second})()
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var again, flagged []string
	for _, u := range f.Units {
		if len(u.Remeasured) > 0 {
			again = append(again, u.ID)
		}
		if slices.ContainsFunc(u.Steps, func(st *results.Step) bool { return st.Noisy }) {
			flagged = append(flagged, u.ID)
		}
	}
	order := f.Rounds[2].Order
	if len(again) != 1 || again[0] != order[len(order)-2] || len(flagged) != 1 || flagged[0] != order[len(order)-1] {
		t.Fatalf("measured again %v, still flagged %v; round 3 order %v\n%s", again, flagged, order, h.log.String())
	}
	if !strings.Contains(h.log.String(), "== round 3: 2 unit(s) had a noisy step; measuring the noisiest 1 again") {
		t.Fatalf("progress:\n%s", h.log.String())
	}
}

// scriptHost makes the runner read a scripted host clock: the lab's CPUs
// busy with nothing of the lab's for extra[n] over the n-th generator call
// (something outside the lab used them). The returned func restores the
// clock. Its wall clock is scripted too, one second per reading (a step
// reads it twice), so that a step's share of foreign CPU is extra[n] over
// the same wall for every step, whatever the machine's load does to the
// fake generator's real duration.
func scriptHost(h *harness, extra map[int]time.Duration) func() {
	var busy time.Duration
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := map[int]bool{}
	clock := &hostClock{cpus: pin.NewCPUSet(0, 1)}
	clock.read = func() hostMark {
		h.lab.mu.Lock()
		n := h.lab.genCalls
		h.lab.mu.Unlock()
		if d, ok := extra[n]; ok && !done[n] {
			busy += d
			done[n] = true
		}
		at = at.Add(time.Second)
		return hostMark{at: at, busy: busy, ok: true}
	}
	old := newHost
	newHost = func() *hostClock { return clock }
	return func() { newHost = old }
}
