package spread

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Basis says which rule a Comparison applied.
type Basis string

// Comparison bases.
const (
	// BasisTest: MinTest or more runs per side, Mann-Whitney U test at
	// p < Alpha.
	BasisTest Basis = "u-test"
	// BasisRanges: fewer runs on a side; tied when the min–max ranges
	// (widened by the floor) overlap. Not tied is an order, not a tested
	// difference.
	BasisRanges Basis = "ranges"
	// BasisNone: a side has no value.
	BasisNone Basis = "none"
)

// Comparison is what two sets of runs (A, then B) say about each other.
type Comparison struct {
	Basis Basis   `json:"basis"`
	A     Summary `json:"a"`
	B     Summary `json:"b"`
	Floor float64 `json:"floor"` // the relative resolution of one run the ranges rule widened each value by

	// BasisTest: the U test's p, and whether it is below Alpha.
	P           float64 `json:"p,omitzero"`
	Significant bool    `json:"significant"`
	// Tied: the two cannot be told apart (BasisTest: not significant;
	// BasisRanges: the ranges overlap; BasisNone: always).
	Tied bool `json:"tied"`

	// Ratio is B's median over A's (0 when A's is 0), with its
	// confidence interval when RatioCI could give one.
	Ratio      float64 `json:"ratio"`
	HasRatioCI bool    `json:"has_ratio_ci"`
	RatioLo    float64 `json:"ratio_lo,omitzero"`
	RatioHi    float64 `json:"ratio_hi,omitzero"`
	RatioCL    float64 `json:"ratio_ci_level,omitzero"` // the interval's actual confidence
}

// Order is +1 when B is above A and the two are not tied, -1 when below,
// 0 when tied.
func (c Comparison) Order() int {
	switch {
	case c.Tied || c.B.Median == c.A.Median:
		return 0
	case c.B.Median > c.A.Median:
		return 1
	}
	return -1
}

// Compare applies the package's rules to two sets of runs (one value per
// run). floor is the relative resolution of one run (0.15 = a search's
// precision of 15%, 0.1 = ±10% run-to-run noise) the ranges rule widens
// each value by; the test ignores it (its runs carry their own noise).
func Compare(a, b []float64, floor float64) Comparison {
	c := Comparison{A: Of(a), B: Of(b), Floor: floor, Basis: BasisNone, Tied: true}
	if c.A.N == 0 || c.B.N == 0 {
		return c
	}
	if c.A.Median != 0 {
		c.Ratio = c.B.Median / c.A.Median
	}
	if lo, hi, cl, ok := RatioCI(a, b); ok {
		c.HasRatioCI, c.RatioLo, c.RatioHi, c.RatioCL = true, lo, hi, cl
	}
	if c.A.N >= MinTest && c.B.N >= MinTest {
		c.Basis = BasisTest
		sa := benchmath.NewSample(clean(a), &thresholds)
		sb := benchmath.NewSample(clean(b), &thresholds)
		r := benchmath.AssumeNothing.Compare(sa, sb) // P = 1 when every value is equal
		c.P, c.Significant = r.P, r.P < Alpha
		c.Tied = !c.Significant
		return c
	}
	c.Basis = BasisRanges
	alo, ahi := c.A.Range(floor)
	blo, bhi := c.B.Range(floor)
	c.Tied = alo <= bhi && blo <= ahi
	return c
}

// Tied reports whether two sets of runs cannot be told apart (Compare's
// rules).
func Tied(a, b []float64, floor float64) bool { return Compare(a, b, floor).Tied }

// maxPairs bounds RatioCI's work: it sorts every pair's ratio. Callers
// with long series (per-second data of an hour) group them first.
const maxPairs = 1 << 22

// RatioCI is the confidence interval of the ratio B/A (at Confidence or
// the nearest level above it the sizes allow): the Hodges–Lehmann
// interval of the shift between log B and log A, the one that inverts the
// Mann-Whitney U test: the pairwise log ratios between the critical order
// statistics of the U distribution. ok is false when a value is not
// positive, the sizes allow no interval at Confidence (fewer than 4 runs
// a side when equal), or there are more than maxPairs pairs.
func RatioCI(a, b []float64) (lo, hi, level float64, ok bool) {
	la, lb := logs(a), logs(b)
	n1, n2 := len(la), len(lb)
	if n1 == 0 || n2 == 0 || n1*n2 > maxPairs {
		return 0, 0, 0, false
	}
	k, level := criticalU(n1, n2)
	if k < 1 {
		return 0, 0, 0, false
	}
	d := make([]float64, 0, n1*n2)
	for _, y := range lb {
		for _, x := range la {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	return math.Exp(d[k-1]), math.Exp(d[len(d)-k]), level, true
}

// RatioEstimate is the Hodges–Lehmann estimate of the ratio B/A: the
// median of every pair's ratio, the point RatioCI's interval is built
// around. ok is false when a value is not positive or there are more than
// maxPairs pairs.
func RatioEstimate(a, b []float64) (float64, bool) {
	la, lb := logs(a), logs(b)
	if len(la) == 0 || len(lb) == 0 || len(la)*len(lb) > maxPairs {
		return 0, false
	}
	d := make([]float64, 0, len(la)*len(lb))
	for _, y := range lb {
		for _, x := range la {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	n := len(d)
	return math.Exp((d[(n-1)/2] + d[n/2]) / 2), true
}

// logs is the logarithm of every value, nil if one is not positive and
// finite.
func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !(x > 0) || math.IsInf(x, 0) {
			return nil
		}
		out = append(out, math.Log(x))
	}
	return out
}

// criticalU is the rank k (1-based) of the sorted pairwise differences
// that bounds the interval [d(k), d(n1·n2−k+1)] and its confidence
// 1−2·P(U ≤ k−1): the largest k whose confidence is at least Confidence
// (0 when none is). Exact for samples up to stats.MannWhitneyExactLimit,
// the normal approximation above.
func criticalU(n1, n2 int) (k int, level float64) {
	alpha := 1 - Confidence
	if n1 > stats.MannWhitneyExactLimit || n2 > stats.MannWhitneyExactLimit {
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2) * float64(n1+n2+1) / 12)
		z := stats.StdNormal.InvCDF(1 - alpha/2)
		k = int(math.Floor(mu - z*sigma))
		if k < 1 {
			return 0, 0
		}
		return k, 1 - 2*stats.StdNormal.CDF((float64(k-1)+0.5-mu)/sigma)
	}
	dist := stats.UDist{N1: n1, N2: n2}
	// The largest u with 2·P(U ≤ u) ≤ alpha; k = u+1. CDF is monotone in
	// u: bisect on [−1, n1·n2/2].
	lo, hi := -1, n1*n2/2
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if 2*dist.CDF(float64(mid)) <= alpha {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo < 0 {
		return 0, 0
	}
	return lo + 1, 1 - 2*dist.CDF(float64(lo))
}
