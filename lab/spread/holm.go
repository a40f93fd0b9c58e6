package spread

import (
	"math"
	"slices"
)

// Holm applies the Holm–Bonferroni step-down correction to a family of
// p-values: with m tests, the smallest p is compared with alpha/m, the
// next with alpha/(m−1), and so on, stopping at the first that fails;
// that one and every larger p are not rejected. It keeps the chance of
// any false rejection in the family at most alpha, whatever the tests'
// dependence. adj are the adjusted p-values in the input's order
// (min(1, max over the smaller-or-equal p of (m−rank+1)·p)); reject[i] is
// adj[i] < alpha, the same decision as the step-down. A NaN p is treated
// as 1.
func Holm(ps []float64, alpha float64) (adj []float64, reject []bool) {
	m := len(ps)
	adj, reject = make([]float64, m), make([]bool, m)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	p := func(i int) float64 {
		if math.IsNaN(ps[i]) {
			return 1
		}
		return ps[i]
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p(a) < p(b):
			return -1
		case p(a) > p(b):
			return 1
		}
		return 0
	})
	run := 0.0
	for rank, i := range idx {
		run = max(run, min(1, float64(m-rank)*p(i)))
		adj[i] = run
		reject[i] = run < alpha
	}
	return adj, reject
}
