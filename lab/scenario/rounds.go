package scenario

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// This file is the plan's rounds (randomized multiple interleaved trials,
// Abedi and Brecht, ICPE 2017): every scenario's units once per round, in
// a new order each round, so that a machine that drifts during the run
// moves every proxy's numbers alike instead of the last one's. A unit's
// rounds add to its runs: a search unit of runs: 1 over 3 rounds has 3
// searches (Searches, the median one its row), a fixed-rate unit 3 runs.

// rounds is how many rounds the run has: the most any unit's scenario
// runs in (1 without plan rounds).
func (r *Runner) rounds() int {
	n := 1
	for _, u := range r.Units {
		if u.Skip == "" {
			n = max(n, u.Scenario.Eff.Rounds)
		}
	}
	return n
}

// roundOrder is round k's units in run order: scenario by scenario in plan
// order (a rate_from scenario after its source), each scenario's units
// shuffled by a generator seeded from the run's seed and k. The seed is
// the plan's, else drawn once and recorded (File.RoundSeed); a round
// already recorded (a resumed run) keeps its recorded order.
func (r *Runner) roundOrder(k, n int) ([]UnitSpec, error) {
	var in []UnitSpec
	for _, u := range r.Units {
		if u.Skip == "" && u.Scenario.Eff.Rounds >= k {
			in = append(in, u)
		}
	}
	f := r.Store.F
	if n == 1 {
		return in, nil
	}
	if len(f.Rounds) >= k {
		return byOrder(in, f.Rounds[k-1].Order), nil
	}
	seed := f.RoundSeed
	if seed == 0 {
		seed = r.Plan.Seed
	}
	for seed == 0 {
		seed = uint64(r.Now().UnixNano()) ^ rand.Uint64()
	}
	out := ShuffleRound(in, r.Plan.ScenarioNames(), seed, k)
	ids := make([]string, len(out))
	for i, u := range out {
		ids[i] = u.ID
	}
	return out, r.Store.Update(func(f *results.File) {
		f.RoundSeed = seed
		f.Rounds = append(f.Rounds, results.Round{Round: k, Order: ids})
	})
}

// ShuffleRound orders units for round k from seed: scenario by scenario
// in the order names gives (the plan's), the units of each scenario
// shuffled. The same seed and k give the same order.
func ShuffleRound(units []UnitSpec, names []string, seed uint64, k int) []UnitSpec {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	by := map[string][]UnitSpec{}
	for _, u := range units {
		if !slices.Contains(names, u.Scenario.Name) {
			names = append(slices.Clip(names), u.Scenario.Name)
		}
		by[u.Scenario.Name] = append(by[u.Scenario.Name], u)
	}
	out := make([]UnitSpec, 0, len(units))
	for _, name := range names {
		g := by[name]
		rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
		out = append(out, g...)
	}
	return out
}

// byOrder puts units in the order of ids (a recorded round); units the
// record does not name go last in their given order.
func byOrder(units []UnitSpec, ids []string) []UnitSpec {
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i
	}
	out := make([]UnitSpec, 0, len(units))
	var rest []UnitSpec
	for _, id := range ids {
		for _, u := range units {
			if u.ID == id {
				out = append(out, u)
			}
		}
	}
	for _, u := range units {
		if _, ok := pos[u.ID]; !ok {
			rest = append(rest, u)
		}
	}
	return append(out, rest...)
}

// roundTag is the run tag of run i (1-based) of this round's runs of the
// unit's scenario: the runs go on counting over the rounds (round 2 of
// runs: 2 has runs 3 and 4).
func (u *unitRun) roundTag(i int) int {
	return (max(u.round, 1)-1)*max(u.spec.Scenario.Runs, 1) + i
}

// allRuns is how many runs (or searches) the unit has over all its rounds.
func (u *unitRun) allRuns() int {
	return max(u.spec.Scenario.Runs, 1) * max(u.spec.Scenario.Eff.Rounds, 1)
}

// stepRound is the round a step records (0 in a plan of one round).
func (u *unitRun) stepRound() int {
	if u.r.rounds() <= 1 {
		return 0
	}
	return u.round
}

// priorBracket is where the unit's earlier rounds put its rate: the
// median search's confirmed rate (or last pass) and the failure above it.
// Zero in round 1, and when nothing passed before.
func (u *unitRun) priorBracket() search.Bracket {
	if u.round <= 1 || u.rec.Search == nil {
		return search.Bracket{}
	}
	s := u.rec.Search
	lo := s.LastPass
	if s.Confirmed {
		lo = s.Rate
	}
	if lo <= 0 {
		return search.Bracket{}
	}
	return search.Bracket{Lo: lo, Hi: s.FirstFail}
}

// roundShare is a unit's budget share per round.
func roundShare(u UnitSpec, d time.Duration) time.Duration {
	return d / time.Duration(max(u.Scenario.Eff.Rounds, 1))
}

// MaxRemeasure is how many units a round measures again at most (the
// noisiest): one costs about 15 s of a search's round here.
const MaxRemeasure = 1

// remeasureNoisy measures again, once, the part of round k of each unit
// in order that had a noisy step (Step.Noisy: the host stole CPU, or
// something outside the lab used the lab's CPUs): the first measurement
// moves to the unit's Remeasured, and the unit's round runs again at the
// end of the round, in a session of its own. A second noisy measurement
// is kept, flagged. The units chosen are recorded (Round.Remeasure)
// before any runs: a resumed run finishes those and chooses no other,
// and a round recorded done measures nothing again.
func (r *Runner) remeasureNoisy(ctx context.Context, k int, order []UnitSpec) error {
	f := r.Store.F
	if f.Rounds[k-1].Done {
		return nil
	}
	again := f.Rounds[k-1].Remeasure
	if again == nil {
		var err error
		if again, err = r.chooseRemeasure(k, order); err != nil || len(again) == 0 {
			return err
		}
	} else {
		r.prog.printf("== round %d: finishing the remeasure of %s", k, strings.Join(again, ", "))
	}
	for _, id := range again {
		if err := ctx.Err(); err != nil {
			return err
		}
		i := slices.IndexFunc(order, func(u UnitSpec) bool { return u.ID == id })
		rec := f.Unit(id)
		if i < 0 || rec == nil {
			continue
		}
		set := slices.ContainsFunc(rec.Remeasured, func(m results.Remeasured) bool { return m.Round == k })
		if set && (rec.RoundsDone >= k || rec.Status == results.StatusError) {
			continue // measured again (or failed to be) before the run was cut
		}
		if !set {
			if err := r.Store.Update(func(f *results.File) { setAside(f, f.Unit(id), k) }); err != nil {
				return err
			}
		}
		if err := r.runInSession(ctx, order[i], k); err != nil {
			return err
		}
	}
	return nil
}

// chooseRemeasure picks round k's units to measure again, the noisiest
// first, at most MaxRemeasure, and records them (Round.Remeasure).
func (r *Runner) chooseRemeasure(k int, order []UnitSpec) ([]string, error) {
	var again []UnitSpec
	noise := map[string]float64{}
	for _, u := range order {
		rec := r.Store.F.Unit(u.ID)
		if rec == nil || rec.Status != results.StatusDone {
			continue
		}
		if slices.ContainsFunc(rec.Remeasured, func(m results.Remeasured) bool { return m.Round == k }) {
			continue
		}
		for _, st := range rec.Steps {
			if st.Round == k && st.Noisy {
				noise[u.ID] = max(noise[u.ID], stepNoise(st))
			}
		}
		if _, ok := noise[u.ID]; ok {
			again = append(again, u)
		}
	}
	if len(again) == 0 {
		return nil, nil
	}
	flagged := len(again)
	// The noisiest first, at most MaxRemeasure: a host that is noisy all
	// along would otherwise double the run.
	slices.SortStableFunc(again, func(a, b UnitSpec) int { return cmp.Compare(noise[b.ID], noise[a.ID]) })
	again = again[:min(len(again), MaxRemeasure)]
	ids := make([]string, len(again))
	for i, u := range again {
		ids[i] = u.ID
	}
	r.prog.printf("== round %d: %d unit(s) had a noisy step; measuring the noisiest %d again", k, flagged, len(again))
	return ids, r.Store.Update(func(f *results.File) { f.Rounds[k-1].Remeasure = ids })
}

// remeasuring reports whether round k chose u to measure again at its
// end: the round's own pass leaves it to the remeasure.
func (r *Runner) remeasuring(k int, id string) bool {
	f := r.Store.F
	return len(f.Rounds) >= k && slices.Contains(f.Rounds[k-1].Remeasure, id)
}

// stepNoise is how noisy a flagged step was, for choosing what to measure
// again: the cores the host stole or something outside the lab used (a
// step flagged only because the control moved across its round: 0).
func stepNoise(st *results.Step) float64 {
	if st.Host == nil {
		return 0
	}
	return max(st.Host.Steal*float64(st.Host.CPUs), st.Host.Foreign)
}

// setAside moves round k's steps and searches of u to u.Remeasured and
// marks the round not done, so that it runs again.
func setAside(f *results.File, u *results.Unit, k int) {
	m := results.Remeasured{Round: k}
	var keep []*results.Step
	for _, st := range u.Steps {
		if st.Round != k {
			keep = append(keep, st)
			continue
		}
		m.Steps = append(m.Steps, st)
		if st.Noisy && m.Why == "" {
			m.Why = st.NoisyWhy
		}
	}
	per := 1
	if s := f.Scenario(u.Scenario); s != nil {
		per = max(s.Runs, 1)
	}
	if lo := (k - 1) * per; len(u.Searches) > lo {
		m.Searches = append(m.Searches, u.Searches[lo:min(lo+per, len(u.Searches))]...)
		u.Searches = u.Searches[:lo]
		// The row and the next round's bracket come from what is left.
		u.Search, u.SearchRun = nil, 0
		if len(u.Searches) > 0 {
			all := make([]search.Result, len(u.Searches))
			for i, s := range u.Searches {
				all[i] = *s
			}
			mid := search.Median(all)
			u.Search, u.SearchRun = u.Searches[mid], mid+1
		}
	}
	u.Steps, u.RoundsDone = keep, k-1
	u.Remeasured = append(u.Remeasured, m)
}
