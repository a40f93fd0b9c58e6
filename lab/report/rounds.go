package report

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// This file reads a run of several rounds (plan rounds) one round at a
// time: roundView is the results a run of that round alone would have
// recorded, so that every measure written for one run (the seeds' rows)
// can say in how many rounds its finding held.

// roundCount is how many rounds the run has (1 without plan rounds).
func roundCount(f *results.File) int {
	return max(len(f.Rounds), 1)
}

// roundView is round k of f as a run of that round alone: each unit keeps
// the steps of round k, its runs renumbered from 1 (a search of one search
// per round untagged), and the round's searches, the median one its
// Search. Units that did not run in round k have no steps and no search.
// The view shares Steps with f: read it, do not change it.
func roundView(f *results.File, k int) *results.File {
	v := *f
	v.Rounds = nil
	v.Units = make([]*results.Unit, len(f.Units))
	for i, u := range f.Units {
		v.Units[i] = unitRound(f, u, k)
	}
	return &v
}

// unitRound is unit u's part of round k (roundView).
func unitRound(f *results.File, u *results.Unit, k int) *results.Unit {
	c := *u
	c.Steps, c.Search, c.Searches, c.SearchRun = nil, nil, nil, 0
	per := 1
	if s := f.Scenario(u.Scenario); s != nil {
		per = max(s.Runs, 1)
	}
	off := (k - 1) * per
	for _, st := range u.Steps {
		if st.Round != k {
			continue
		}
		cs := *st
		cs.Run -= off
		if u.Method == plan.MethodSearch && per == 1 {
			cs.Run = 0
		}
		c.Steps = append(c.Steps, &cs)
	}
	all, _ := u.AllSearches()
	switch {
	case len(u.Searches) == 0 && k == 1 && len(all) == 1:
		c.Search = all[0]
	case len(u.Searches) >= off+per:
		var round []search.Result
		for _, s := range u.Searches[off : off+per] {
			round = append(round, *s)
		}
		med := round[search.Median(round)]
		c.Search = &med
		if per > 1 {
			for i := range round {
				c.Searches = append(c.Searches, &round[i])
			}
			c.SearchRun = search.Median(round) + 1
		}
	}
	if len(c.Steps) == 0 && c.Search == nil {
		c.Status = results.StatusPending
	}
	return &c
}

// seedRounds is in how many rounds seed s's measure held (yes), and in how
// many it was measured, when its scenarios ran in more than one round
// (measured 0 otherwise: one look, nothing to count).
func seedRounds(f *results.File, m seedMeasure, s plan.Seed) (yes, measured int) {
	n := roundCount(f)
	if seedOnce[s.Finding] {
		return 0, 0
	}
	for _, name := range s.Scenarios {
		if sc := f.Scenario(name); sc != nil {
			n = min(n, max(sc.Eff.Rounds, 1))
		}
	}
	if n <= 1 {
		return 0, 0
	}
	for k := 1; k <= n; k++ {
		o := m(roundView(f, k), s)
		switch o.reproduced {
		case seedYes:
			yes++
			measured++
		case seedNo:
			measured++
		}
	}
	return yes, measured
}

// seedOnce are the findings measured once per run, not per round (the
// idle memory after each proxy's first start).
var seedOnce = map[string]bool{"idle-memory": true, "hosts-idle-memory": true, "config-lines": true, "h3-build": true, "restart": true}

// roundsWords is "yes (3 of 3 rounds)": the verdict by the majority of
// the rounds measured, with the count.
func roundsWords(yes, measured int) string {
	v := seedNo
	if 2*yes > measured {
		v = seedYes
	}
	return fmt.Sprintf("%s (%d of %d rounds)", v, yes, measured)
}
