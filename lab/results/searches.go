package results

import (
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/search"
)

// Scenario returns the plan's scenario called name, or nil.
func (f *File) Scenario(name string) *plan.Scenario {
	if f.Plan == nil {
		return nil
	}
	for i := range f.Plan.Scenarios {
		if f.Plan.Scenarios[i].Name == name {
			return &f.Plan.Scenarios[i]
		}
	}
	return nil
}

// AllSearches is every search of the unit (Searches, or Search alone when
// it ran one) with the run tag its steps carry (1..N, or 0 for one).
func (u *Unit) AllSearches() ([]*search.Result, []int) {
	if len(u.Searches) > 0 {
		tags := make([]int, len(u.Searches))
		for i := range tags {
			tags[i] = i + 1
		}
		return u.Searches, tags
	}
	if u.Search == nil {
		return nil, nil
	}
	return []*search.Result{u.Search}, []int{0}
}

// RowRun is the run tag of the steps of the unit's row search: 0 when it
// ran one search, else SearchRun.
func (u *Unit) RowRun() int {
	if len(u.Searches) > 0 {
		return u.SearchRun
	}
	return 0
}

// ConfirmedStep is the last passing confirmation at the rate search sr
// found, among the steps tagged run; nil when sr confirmed nothing.
func (u *Unit) ConfirmedStep(sr *search.Result, run int) *Step {
	if sr == nil || !sr.Confirmed {
		return nil
	}
	var best *Step
	for _, st := range u.Steps {
		if st.Run == run && st.Phase == string(search.PhaseConfirm) && st.Rate == sr.Rate && st.Verdict == string(search.Pass) {
			best = st
		}
	}
	return best
}
