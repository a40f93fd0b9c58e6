package report

import (
	"fmt"
	"slices"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// seedOutcome is this run's side of one seed row.
type seedOutcome struct {
	run        string // this run's number, in the seed's terms ("28,201 then 502 at t=29 s")
	reproduced string // seedYes, seedNo or seedNotMeasured
	size       string // how the size differs from the seed's ("1.00x the seed's"), "" when not compared
}

// Reproduced cells.
const (
	seedYes         = "yes"
	seedNo          = "no"
	seedNotMeasured = "not measured"
)

// seedMeasure measures seed s's finding in this run's results.
type seedMeasure func(f *results.File, s plan.Seed) seedOutcome

// seedUnits are the reportable units of s's scenarios on profile (any
// profile when "").
func seedUnits(f *results.File, s plan.Seed, profile string) []*results.Unit {
	var out []*results.Unit
	for _, u := range f.Units {
		if reportable(u) && slices.Contains(s.Scenarios, u.Scenario) && (profile == "" || u.Profile == profile) {
			out = append(out, u)
		}
	}
	return out
}

// seedProfile is the i-th profile s names ("" when it names fewer).
func seedProfile(s plan.Seed, i int) string {
	if i < len(s.Profiles) {
		return s.Profiles[i]
	}
	return ""
}

// timesSeed says how this run's number compares with the seed's value.
func timesSeed(run float64, s plan.Seed) string {
	if s.Value <= 0 || run <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2fx the seed's", run/s.Value)
}

// yesNo is seedYes or seedNo.
func yesNo(ok bool) string {
	if ok {
		return seedYes
	}
	return seedNo
}
