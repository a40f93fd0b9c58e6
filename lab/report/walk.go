package report

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// eachStep calls fn on every measured step of the reportable units, in
// order.
func eachStep(f *results.File, fn func(u *results.Unit, st *results.Step)) {
	for _, u := range f.Units {
		if !reportable(u) {
			continue
		}
		for _, st := range u.Steps {
			if st.Result != nil {
				fn(u, st)
			}
		}
	}
}

// stepName says which step a finding is about.
func stepName(u *results.Unit, st *results.Step) string {
	s := u.Scenario
	if st.Rate > 0 {
		s += " at " + fmtRate(st.Rate) + " req/s"
	}
	if u.Method != plan.MethodSearch && len(u.Steps) > 1 && st.Run > 0 {
		s += fmt.Sprintf(", run %d", st.Run)
	}
	return s
}
