package spread

import (
	"math"
	"strconv"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestOf(t *testing.T) {
	if s := Of(nil); s.N != 0 || s.HasCI {
		t.Fatalf("empty: %+v", s)
	}
	in := []float64{5, 1, 4, 2, 3}
	s := Of(in)
	if s.N != 5 || s.Median != 3 || s.Min != 1 || s.Max != 5 || s.HasCI {
		t.Fatalf("five runs: %+v", s)
	}
	if in[0] != 5 {
		t.Fatal("Of sorted its argument")
	}
	// Six runs: the 95% interval of the median is x(1)..x(6), 1-2/64 = 96.875%.
	s = Of([]float64{10, 11, 12, 13, 14, 100})
	if !s.HasCI || s.Lo != 10 || s.Hi != 100 || !near(s.ActualCL, 0.96875) || s.Median != 12.5 {
		t.Fatalf("six runs: %+v", s)
	}
	// Ten runs: x(2)..x(9), binomial coverage 1-2·(1+10)/1024 = 97.85%.
	var xs []float64
	for i := 1; i <= 10; i++ {
		xs = append(xs, float64(i))
	}
	s = Of(xs)
	if !s.HasCI || s.Lo != 2 || s.Hi != 9 || !near(s.ActualCL, 1-2*11.0/1024) {
		t.Fatalf("ten runs: %+v", s)
	}
	if s := Of([]float64{math.NaN(), 7}); s.N != 1 || s.Median != 7 {
		t.Fatalf("NaN kept: %+v", s)
	}
}

func TestFormat(t *testing.T) {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{nil, "-"},
		{[]float64{7}, "7"},
		{[]float64{3, 1, 2}, "2 (1–3, n=3)"},
		{[]float64{1, 2, 3, 4, 5, 6}, "3.5 (1–6; 95% CI 1–6, n=6)"},
	} {
		if got := Of(c.in).Format(f); got != c.want {
			t.Errorf("%v: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCompareRanges(t *testing.T) {
	// Below MinTest runs: tied exactly when the ranges overlap.
	c := Compare([]float64{100, 110, 120}, []float64{115, 130, 140}, 0)
	if c.Basis != BasisRanges || !c.Tied || c.Significant || c.Order() != 0 {
		t.Fatalf("overlapping: %+v", c)
	}
	c = Compare([]float64{100, 110, 120}, []float64{121, 130, 140}, 0)
	if c.Basis != BasisRanges || c.Tied || c.Significant || c.Order() != 1 || c.Ratio != 130.0/110 {
		t.Fatalf("apart: %+v", c)
	}
	// One run each: the floor decides. 100 and 108 are within ±10%,
	// 100 and 125 are not.
	if !Tied([]float64{100}, []float64{108}, 0.1) || Tied([]float64{100}, []float64{125}, 0.1) || Tied([]float64{100}, []float64{108}, 0) {
		t.Fatal("floor")
	}
	if c := Compare(nil, []float64{1}, 0); c.Basis != BasisNone || !c.Tied {
		t.Fatalf("empty side: %+v", c)
	}
}

func TestCompareTest(t *testing.T) {
	// Four runs a side, all of B above all of A: the smallest two-sided p
	// of the U test at 4+4, 2/70.
	c := Compare([]float64{100, 101, 102, 103}, []float64{110, 111, 112, 113}, 0.5)
	if c.Basis != BasisTest || !c.Significant || c.Tied || !near(c.P, 2.0/70) || c.Order() != 1 {
		t.Fatalf("apart: %+v", c)
	}
	// The floor does not widen a tested comparison.
	if c.Floor != 0.5 || c.Tied {
		t.Fatalf("floor applied to the test: %+v", c)
	}
	// Interleaved: not significant, tied, though the medians differ.
	c = Compare([]float64{100, 102, 104, 106}, []float64{101, 103, 105, 107}, 0)
	if c.Basis != BasisTest || c.Significant || !c.Tied || c.Order() != 0 {
		t.Fatalf("interleaved: %+v", c)
	}
	// All equal: p = 1.
	c = Compare([]float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, 0)
	if c.Significant || !c.Tied || c.P != 1 {
		t.Fatalf("equal: %+v", c)
	}
}

func TestCriticalU(t *testing.T) {
	// Two-sided 5% critical values of the U test from the tables (reject
	// when U <= crit): the interval's rank is crit+1.
	for _, c := range []struct{ n1, n2, crit int }{{4, 4, 0}, {5, 5, 2}, {6, 6, 5}, {8, 8, 13}, {10, 10, 23}, {5, 10, 8}, {20, 20, 127}} {
		k, level := criticalU(c.n1, c.n2)
		if k != c.crit+1 || level < Confidence {
			t.Errorf("%d+%d: k %d level %g, want %d", c.n1, c.n2, k, level, c.crit+1)
		}
	}
	if k, _ := criticalU(3, 3); k != 0 {
		t.Errorf("3+3 allows no 95%% interval, got k %d", k)
	}
	// Above the exact limit the normal approximation, close to it.
	k, level := criticalU(60, 60)
	want := 1800 - 1.959964*math.Sqrt(3600*121.0/12)
	if math.Abs(float64(k)-want) > 1 || math.Abs(level-Confidence) > 0.002 {
		t.Errorf("60+60: k %d level %g, want about %.1f", k, level, want)
	}
}

func TestRatioCI(t *testing.T) {
	a := []float64{100, 104, 98, 102}
	b := []float64{200, 210, 190, 205}
	// 4+4: k = 1, the interval is min(B)/max(A) .. max(B)/min(A).
	lo, hi, level, ok := RatioCI(a, b)
	if !ok || !near(lo, 190.0/104) || !near(hi, 210.0/98) || !near(level, 1-2.0/70) {
		t.Fatalf("4+4: %g..%g at %g ok %v", lo, hi, level, ok)
	}
	if _, _, _, ok := RatioCI([]float64{1, 2, 3}, []float64{1, 2, 3}); ok {
		t.Fatal("3+3 gave an interval")
	}
	if _, _, _, ok := RatioCI([]float64{0, 1, 2, 3}, []float64{1, 2, 3, 4}); ok {
		t.Fatal("a zero gave an interval")
	}
	// B is A scaled by 1.5 with noise: the interval holds 1.5, is narrow,
	// and excludes 1.
	var xa, xb []float64
	for i := 0; i < 40; i++ {
		v := 1000 + 37*float64((i*17)%23)
		xa = append(xa, v)
		xb = append(xb, 1.5*(1000+37*float64((i*11)%23)))
	}
	lo, hi, _, ok = RatioCI(xa, xb)
	if !ok || lo > 1.5 || hi < 1.5 || lo < 1.35 || hi > 1.65 {
		t.Fatalf("scaled: %g..%g", lo, hi)
	}
	c := Compare(xa, xb, 0)
	if !c.Significant || !c.HasRatioCI || c.Order() != 1 {
		t.Fatalf("scaled: %+v", c)
	}
}

func TestRatioEstimate(t *testing.T) {
	// pairs of {1, 2} and {3, 4}: ratios 3, 4, 1.5, 2; median 2.5 (of the logs: sqrt(2*3))
	r, ok := RatioEstimate([]float64{1, 2}, []float64{3, 4})
	if !ok || !near(r, math.Sqrt(6)) {
		t.Fatalf("%g %v", r, ok)
	}
	if _, ok := RatioEstimate([]float64{0}, []float64{1}); ok {
		t.Fatal("zero")
	}
}

// Holm: known p-values, known rejections, and the step-down stop.
func TestHolm(t *testing.T) {
	// sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06 (stop), then
	// 0.04·1 = 0.04 is below 0.05 alone but follows the stop: kept at 0.06.
	ps := []float64{0.01, 0.04, 0.03, 0.005}
	adj, rej := Holm(ps, 0.05)
	wantAdj := []float64{0.03, 0.06, 0.06, 0.02}
	wantRej := []bool{true, false, false, true}
	for i := range ps {
		if math.Abs(adj[i]-wantAdj[i]) > 1e-12 || rej[i] != wantRej[i] {
			t.Fatalf("Holm(%v): adj %v reject %v, want %v %v", ps, adj, rej, wantAdj, wantRej)
		}
	}
	// Bonferroni would reject only 0.005 (< 0.0125); Holm steps on.
	if adj, rej := Holm([]float64{0.012, 0.5, 0.02, 0.001}, 0.05); !rej[0] || rej[1] || !rej[2] || !rej[3] ||
		math.Abs(adj[0]-0.036) > 1e-12 || adj[1] != 0.5 || math.Abs(adj[2]-0.04) > 1e-12 || math.Abs(adj[3]-0.004) > 1e-12 {
		t.Fatalf("step-down: adj %v reject %v", adj, rej)
	}
	// capped at 1, one test is unchanged, none is empty, ties share a value
	if adj, rej := Holm([]float64{0.6, 0.7}, 0.05); adj[0] != 1 || adj[1] != 1 || rej[0] || rej[1] {
		t.Fatalf("cap: %v %v", adj, rej)
	}
	if adj, rej := Holm([]float64{0.049}, 0.05); adj[0] != 0.049 || !rej[0] {
		t.Fatalf("one test: %v %v", adj, rej)
	}
	if adj, rej := Holm(nil, 0.05); len(adj) != 0 || len(rej) != 0 {
		t.Fatal("empty family")
	}
	if adj, _ := Holm([]float64{0.02, 0.02}, 0.05); adj[0] != 0.04 || adj[1] != 0.04 {
		t.Fatalf("ties: %v", adj)
	}
}
