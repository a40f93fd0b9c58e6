// Package spread is the one place that says how far repeated runs of one
// measurement can be trusted: their median, min–max range and the
// confidence interval of the median (Of), and whether two sets of runs
// differ (Compare). The lab's tables and rankings, the origin servers'
// file runs and `loadlab compare` all use it, so a row, a ranking and a
// comparison apply the same rules:
//
//   - the median of N runs is the value; the spread is min–max, plus a 95%
//     confidence interval of the median from MinCI (6) runs on;
//   - a difference needs MinTest (4) runs per side and a Mann-Whitney U test
//     at p < Alpha (0.05); a family of such tests (several metrics of one
//     comparison) is corrected with Holm–Bonferroni (Holm), so that the
//     family, not each test, falsely finds a difference at most Alpha of
//     the time;
//   - with fewer runs, two sets are tied when their min–max ranges overlap,
//     each value widened by a stated floor (the resolution of one run: a
//     search's precision, or the machine's run-to-run noise).
//
// The statistics are golang.org/x/perf/benchmath's (benchstat's engine):
// its median CI and U test, with the same assumption (none about the
// distribution). The ratio's interval (RatioCI) is the Hodges–Lehmann
// interval that goes with that test, built on the U distribution of
// github.com/aclements/go-moremath/stats, which benchmath uses.
//
// Imports: none of loadlab's packages (statistics only), so the report,
// compare and any code that repeats runs can use it.
package spread

import (
	"math"
	"slices"
	"strconv"

	"golang.org/x/perf/benchmath"
)

// The rules' numbers.
const (
	Confidence = 0.95 // level of every interval
	Alpha      = 0.05 // a test's p must be below this for a difference
	MinCI      = 6    // runs from which the median has a 95% confidence interval
	MinTest    = 4    // runs per side from which two sets can differ significantly
)

// thresholds are benchmath's, with Alpha.
var thresholds = benchmath.Thresholds{CompareAlpha: Alpha}

// Summary is what repeated runs of one quantity say about it.
type Summary struct {
	N        int     `json:"n"`
	Median   float64 `json:"median"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	HasCI    bool    `json:"has_ci"`         // N >= MinCI: Lo and Hi bound the median
	Lo       float64 `json:"ci_lo,omitzero"` // confidence interval of the median
	Hi       float64 `json:"ci_hi,omitzero"`
	ActualCL float64 `json:"ci_level,omitzero"` // the interval's actual confidence (>= Confidence: order statistics)
}

// Of summarizes the values of repeated runs (one value per run; NaNs are
// dropped). The zero Summary for none.
func Of(values []float64) Summary {
	xs := clean(values)
	if len(xs) == 0 {
		return Summary{}
	}
	smp := benchmath.NewSample(xs, &thresholds) // sorts xs
	sum := benchmath.AssumeNothing.Summary(smp, Confidence)
	s := Summary{N: len(xs), Median: sum.Center, Min: xs[0], Max: xs[len(xs)-1]}
	if len(xs) >= MinCI && !math.IsInf(sum.Lo, 0) && !math.IsInf(sum.Hi, 0) {
		s.HasCI, s.Lo, s.Hi, s.ActualCL = true, sum.Lo, sum.Hi, sum.Confidence
	}
	return s
}

// clean is a sorted copy of values without NaNs and infinities.
func clean(values []float64) []float64 {
	xs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	slices.Sort(xs)
	return xs
}

// Range is the interval the runs cover, each value widened by floor (a
// relative resolution, 0.1 = ±10%): [Min·(1−floor/2), Max·(1+floor/2)],
// so that two single values are in each other's range when they differ
// by about floor or less.
func (s Summary) Range(floor float64) (lo, hi float64) {
	f := max(floor, 0) / 2
	lo, hi = s.Min*(1-f), s.Max*(1+f)
	if s.Min < 0 {
		lo = s.Min * (1 + f)
	}
	if s.Max < 0 {
		hi = s.Max * (1 - f)
	}
	return lo, hi
}

// Format writes the summary with f formatting each number: the value
// alone for one run, "median (min–max, n=N)" for a few, and with the
// median's interval from MinCI runs: "median (min–max; 95% CI lo–hi, n=N)".
func (s Summary) Format(f func(float64) string) string {
	switch {
	case s.N == 0:
		return "-"
	case s.N == 1:
		return f(s.Median)
	case !s.HasCI:
		return f(s.Median) + " (" + f(s.Min) + "–" + f(s.Max) + ", n=" + itoa(s.N) + ")"
	}
	return f(s.Median) + " (" + f(s.Min) + "–" + f(s.Max) + "; 95% CI " + f(s.Lo) + "–" + f(s.Hi) + ", n=" + itoa(s.N) + ")"
}

func itoa(n int) string { return strconv.Itoa(n) }
