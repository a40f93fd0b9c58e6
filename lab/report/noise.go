package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// This file puts each row's runs through lab/spread: a row's ranked value
// is the median of its runs, shown with their min–max (and the median's
// 95% interval from 6 runs); two rows share a place in a ranking unless
// spread's rules tell them apart (rowsTied in rank.go is noiseTied).

// noiseFloor is the run-to-run noise of one fixed-rate or closed-loop run
// on a machine like this (identical runs differ by 10–20%; seed 002: "I
// expect about 10% noise"): two single runs closer than this are tied.
const noiseFloor = 0.10

// noiseTied reports whether rows a and b cannot be told apart: spread's
// rules over their runs, single runs widened by the larger of their floors
// (a search's precision, else noiseFloor). Rows without runs are not
// tied.
func noiseTied(a, b row) bool {
	if len(a.vals) == 0 || len(b.vals) == 0 {
		return false
	}
	if lo, hi, ok := sameRound(a, b); ok && (lo > 1+max(a.floor, b.floor)/2 || hi < 1-max(a.floor, b.floor)/2) {
		return false // apart in every round, beyond the floor
	}
	return spread.Tied(a.vals, b.vals, max(a.floor, b.floor))
}

// sameRound is the range (min–max) of a/b over the rounds both were
// measured in (the duet method's ratio of two things measured together:
// what drifts between rounds moves both); ok with 2 rounds or more.
func sameRound(a, b row) (lo, hi float64, ok bool) {
	n := 0
	for k := 0; k < len(a.rounds) && k < len(b.rounds); k++ {
		if a.rounds[k] <= 0 || b.rounds[k] <= 0 {
			continue
		}
		r := a.rounds[k] / b.rounds[k]
		if n == 0 || r < lo {
			lo = r
		}
		if n == 0 || r > hi {
			hi = r
		}
		n++
	}
	return lo, hi, n >= 2
}

// sameRoundText says the same-round ratio of two rows that share a place,
// e.g. " (same-round ratio 1.02–1.09)"; "" without rounds.
func sameRoundText(a, b row) string {
	lo, hi, ok := sameRound(a, b)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (%s / %s per round: %.2f–%.2f)", a.profile, b.profile, lo, hi)
}

// setRuns records the row's per-run values of its ranked quantity and the
// resolution of one of them; with more than one run the row's rate is
// their median.
func (r *row) setRuns(vals []float64, floor float64) {
	r.vals, r.floor = vals, floor
	if len(vals) > 1 {
		r.rate = spread.Of(vals).Median
	}
}

// valueText is the row's ranked value with its spread: the value alone
// for one run, else the median with min–max (and the 95% interval).
func (r row) valueText() string {
	format := fmtRate
	if r.format != nil {
		format = r.format
	}
	if s := spread.Of(r.vals); s.N > 1 {
		return s.Format(format)
	}
	return format(r.rate)
}

// rankText is the row's value in a ranking: valueText, and for a single
// run the interval the tie rule gives it (± half the floor: two rows
// whose intervals overlap share a place).
func (r row) rankText() string {
	if len(r.vals) == 1 && r.floor > 0 {
		return r.valueText() + " ±" + pctWords(r.floor/2)
	}
	return r.valueText()
}

// pctWords writes a share as a percentage: 0.075 -> "7.5%", 0.05 -> "5%".
func pctWords(f float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", 100*f), ".0") + "%"
}

// searchRuns is every confirmed rate found of a unit's searches (one per
// search), and the precision of its scenario.
func searchRuns(f *results.File, u *results.Unit) ([]float64, float64) {
	prec := 0.0
	if s := f.Scenario(u.Scenario); s != nil {
		prec = s.Eff.Search.Precision
	}
	all, _ := u.AllSearches()
	var vals []float64
	for _, s := range all {
		if s != nil && s.Confirmed {
			vals = append(vals, s.Rate)
		}
	}
	return vals, prec
}

// tieNote says which rule the ranking's ties (=) followed, from the
// fewest runs of its rows: what a reader needs to know before trusting an
// order.
func tieNote(rows []row) string {
	fewest, floor := 0, 0.0
	for i, r := range rows {
		if i == 0 || len(r.vals) < fewest {
			fewest = len(r.vals)
		}
		floor = max(floor, r.floor)
	}
	what := "run"
	if len(rows) > 0 && rows[0].unit != nil && rows[0].unit.Method == plan.MethodSearch {
		what = "search"
	}
	switch {
	case fewest == 0:
		return ""
	case fewest == 1:
		why := "the machine's run-to-run noise"
		if what == "search" {
			why = "the search's precision"
		}
		return fmt.Sprintf("one %s per row, so an order is not tested: each value stands for ±%s (half of %s, %s), and rows whose intervals overlap share a place (=); set runs: %d or more for a test", what, pctWords(floor/2), pctWords(floor), why, spread.MinTest)
	case fewest < spread.MinTest:
		s := fmt.Sprintf("%d %s per row at least: rows whose min–max ranges overlap share a place (=)", fewest, plural(what))
		if len(rows[0].rounds) > 1 {
			s += fmt.Sprintf(", unless their ratio within each round stays beyond ±%s (half of %s) in every round", pctWords(floor/2), pctWords(floor))
		}
		return s + fmt.Sprintf("; %d or more per row are needed for a significance test", spread.MinTest)
	}
	return fmt.Sprintf("%d %s per row at least: rows share a place (=) unless a Mann-Whitney U test over their runs gives p < %g", fewest, plural(what), spread.Alpha)
}

// runsFootnote says what a table's ranked column holds: the median of N
// runs with min–max (and the 95% interval of the median from 6), or that
// each row is one run, whose spread this report cannot show.
func runsFootnote(rows []row, what string) string {
	most, fewest := 0, -1
	for _, r := range rows {
		if n := len(r.vals); n > 0 {
			most = max(most, n)
			if fewest < 0 || n < fewest {
				fewest = n
			}
		}
	}
	switch {
	case most == 0:
		return ""
	case most == 1:
		return fmt.Sprintf("%s: one run per row (runs: 1), so this report cannot show its spread; identical runs on a machine like this differ by 10–20%%.", upperFirst(what))
	}
	n := fmt.Sprint(most)
	if fewest != most {
		n = fmt.Sprintf("%d to %d", fewest, most)
	}
	return fmt.Sprintf("%s: the median of %s runs (in brackets the runs' min–max, and from %d runs on the 95%% confidence interval of the median).", upperFirst(what), n, spread.MinCI)
}

func plural(what string) string {
	if strings.HasSuffix(what, "h") {
		return what + "es"
	}
	return what + "s"
}

// rowSearchSteps are the steps of the unit's row search: all its steps
// when it ran one search, else those of the median search.
func rowSearchSteps(u *results.Unit) []*results.Step {
	run := u.RowRun()
	if run == 0 {
		return u.Steps
	}
	var out []*results.Step
	for _, st := range u.Steps {
		if st.Run == run {
			out = append(out, st)
		}
	}
	return out
}
