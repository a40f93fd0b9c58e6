package compare

import (
	"math"
	"strings"
	"testing"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules(" p99>+10% , rate<-5%,p99.9 > 20.5%,errors>+0%,MEM<-1%")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{P99, ">", 10, 0.10}, {Rate, "<", -5, -0.05}, {P999, ">", 20.5, 0.205}, {Errors, ">", 0, 0}, {Mem, "<", -1, -0.01}}
	if len(rules) != len(want) {
		t.Fatalf("%+v", rules)
	}
	for i := range want {
		if rules[i] != want[i] {
			t.Fatalf("rule %d: %+v, want %+v", i, rules[i], want[i])
		}
	}
	if s := rules[0].String() + "," + rules[1].String(); s != "p99>+10%,rate<-5%" {
		t.Fatalf("String %q", s)
	}
	for _, bad := range []string{"", "p99", "p99>10", "p98>+10%", ">+10%", "p99>+10%,", "p99>>10%", "p99>1e3%", "p99>NaN%", "p99>-200%", "p99>0x10%", "p99>+10%%", "p99=10%"} {
		_, err := ParseRules(bad)
		if err == nil || !IsInput(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a one-line error", bad, err)
		}
	}
}

func TestRuleFires(t *testing.T) {
	r12, r90, inf := 1.12, 0.90, 0.0
	_ = inf
	res := func(m Metric, ratio *float64, diff bool, a, b float64) Result {
		return Result{Metric: m, Ratio: ratio, Different: diff, A: a, B: b}
	}
	p99 := Rule{P99, ">", 10, 0.10}
	rate := Rule{Rate, "<", -5, -0.05}
	for _, c := range []struct {
		r    Rule
		res  Result
		want bool
	}{
		{p99, res(P99, &r12, true, 1, 1.12), true},
		{p99, res(P99, &r12, false, 1, 1.12), false}, // not a real difference
		{p99, res(P50, &r12, true, 1, 1.12), false},  // another metric
		{rate, res(Rate, &r90, true, 1, 0.9), true},
		{rate, res(Rate, &r12, true, 1, 1.12), false},
		{Rule{Errors, ">", 0, 0}, res(Errors, nil, true, 0, 0.01), true}, // from none to some: +∞
	} {
		if got := c.r.fires(c.res); got != c.want {
			t.Errorf("%s on %+v: %v, want %v", c.r, c.res, got, c.want)
		}
	}
	if c := res(Errors, nil, true, 0, 0.01).Change(); !math.IsInf(c, 1) {
		t.Fatalf("change from 0: %g", c)
	}
}

func FuzzParseRules(f *testing.F) {
	for _, s := range []string{"p99>+10%,rate<-5%", "p50<-0.5%", "errors>+0%", "mem>+100%", "p99.9>", ",", "rate<-100%", "cpu>1000000%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rules, err := ParseRules(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !IsInput(err) {
				t.Fatalf("%q: error %q is not a one-line input error", s, err)
			}
			return
		}
		// what it read, written back, reads the same
		var parts []string
		for _, r := range rules {
			if r.Op != ">" && r.Op != "<" || math.IsNaN(r.Threshold) || r.Threshold < -1 || r.Threshold > 1e4 {
				t.Fatalf("%q: rule %+v", s, r)
			}
			parts = append(parts, r.String())
		}
		again, err := ParseRules(strings.Join(parts, ","))
		if err != nil || len(again) != len(rules) {
			t.Fatalf("%q: %v re-read as %v (%v)", s, rules, again, err)
		}
		for i := range rules {
			if again[i] != rules[i] {
				t.Fatalf("%q: rule %d %+v re-read as %+v", s, i, rules[i], again[i])
			}
		}
	})
}
