package search

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fakeProxy passes every step at or below capacity; above genLimit the
// generator is the bottleneck. failConfirm lists step numbers that fail
// regardless (a noisy confirmation).
type fakeProxy struct {
	capacity    float64
	genLimit    float64 // 0 = none
	failConfirm map[int]bool
	steps       []Step
	cooled      []int // Seq of the steps a cool-down followed
}

func (f *fakeProxy) step(_ context.Context, s Step) (Judgment, error) {
	f.steps = append(f.steps, s)
	switch {
	case f.failConfirm[s.Seq]:
		return Judgment{Verdict: Fail, Reasons: []string{"scripted"}}, nil
	case f.genLimit > 0 && s.Rate > f.genLimit:
		return Judgment{Verdict: GenLimited, Reasons: []string{"generator"}}, nil
	case s.Rate <= f.capacity:
		return Judgment{Verdict: Pass}, nil
	}
	return Judgment{Verdict: Fail, Reasons: []string{"p99"}}, nil
}

func (f *fakeProxy) cool(_ context.Context, after Step) error {
	f.cooled = append(f.cooled, after.Seq)
	return nil
}

func (f *fakeProxy) trace() string {
	var b strings.Builder
	for _, s := range f.steps {
		if s.Phase == PhaseConfirm {
			fmt.Fprintf(&b, "%s:%g#%d ", s.Phase, s.Rate, s.Confirm)
		} else {
			fmt.Fprintf(&b, "%s:%g ", s.Phase, s.Rate)
		}
	}
	return strings.TrimSpace(b.String())
}

// seed002 is the article's method with a start of 100 req/s.
func seed002() Config {
	return Config{Start: 100, Max: 1e6, Min: 1, Growth: 2, Precision: 0.08, ConfirmRuns: 3, StepDown: 0.08, MaxStepDowns: 10}
}

func TestDoublingBisectConfirm(t *testing.T) {
	f := &fakeProxy{capacity: 1000}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	want := "probe:100 probe:200 probe:400 probe:800 probe:1600 " +
		"bisect:1200 bisect:1000 bisect:1100 bisect:1050 " +
		"confirm:1000#1 confirm:1000#2 confirm:1000#3"
	if got := f.trace(); got != want {
		t.Fatalf("steps\n got %s\nwant %s", got, want)
	}
	if res.Rate != 1000 || !res.Confirmed || res.GeneratorLimited || res.Capped || res.StepDowns != 0 || res.Steps != 12 {
		t.Fatalf("result %+v", res)
	}
	if res.LastPass != 1000 || res.FirstFail != 1050 || (res.FirstFail-res.LastPass)/res.LastPass > 0.08 {
		t.Fatalf("bounds %+v", res)
	}
	// a cool-down after each failed step (1600, 1200, 1100, 1050), none after passes
	if want := []int{5, 6, 8, 9}; !reflect.DeepEqual(f.cooled, want) {
		t.Fatalf("cool-downs after steps %v, want %v", f.cooled, want)
	}
}

func TestConfirmationStepsDown(t *testing.T) {
	// the second confirmation at 1000 fails: go down 8% and confirm 3 times again
	f := &fakeProxy{capacity: 1000, failConfirm: map[int]bool{11: true}}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(f.trace(), "confirm:1000#1 confirm:1000#2 confirm:920#1 confirm:920#2 confirm:920#3") {
		t.Fatalf("steps %s", f.trace())
	}
	if res.Rate != 920 || !res.Confirmed || res.StepDowns != 1 {
		t.Fatalf("result %+v", res)
	}
	if f.cooled[len(f.cooled)-1] != 11 {
		t.Fatalf("no cool-down after the failed confirmation: %v", f.cooled)
	}
}

func TestConfirmationGivesUp(t *testing.T) {
	f := &fakeProxy{capacity: 1000, failConfirm: map[int]bool{}}
	for i := 10; i < 100; i++ {
		f.failConfirm[i] = true
	}
	cfg := seed002()
	cfg.MaxStepDowns = 2
	res, err := Run(context.Background(), cfg, f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if res.Confirmed || res.Rate != 0 || res.StepDowns != 2 || !strings.Contains(res.Note, "not confirmed") {
		t.Fatalf("result %+v", res)
	}
	// 1000, 920, 846: one failed confirmation each
	if !strings.HasSuffix(f.trace(), "confirm:1000#1 confirm:920#1 confirm:846#1") {
		t.Fatalf("steps %s", f.trace())
	}
}

func TestCappedAtMax(t *testing.T) {
	f := &fakeProxy{capacity: math.Inf(1)}
	cfg := seed002()
	cfg.Max = 500
	res, err := Run(context.Background(), cfg, f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.trace(); got != "probe:100 probe:200 probe:400 probe:500 confirm:500#1 confirm:500#2 confirm:500#3" {
		t.Fatalf("steps %s", got)
	}
	if !res.Capped || res.Rate != 500 || !strings.Contains(res.Note, "max") || len(f.cooled) != 0 {
		t.Fatalf("result %+v cooled %v", res, f.cooled)
	}
}

func TestStartFailsSearchesDown(t *testing.T) {
	f := &fakeProxy{capacity: 30}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate > 30 || res.Rate < 30/1.08 || !res.Confirmed {
		t.Fatalf("result %+v, steps %s", res, f.trace())
	}
	if !strings.HasPrefix(f.trace(), "probe:100 bisect:50 bisect:25") {
		t.Fatalf("steps %s", f.trace())
	}
}

func TestNothingPasses(t *testing.T) {
	f := &fakeProxy{capacity: 0}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if res.Rate != 0 || res.Confirmed || !strings.Contains(res.Note, "no rate passed") {
		t.Fatalf("result %+v", res)
	}
	for _, s := range f.steps {
		if s.Rate < 1 || s.Phase == PhaseConfirm {
			t.Fatalf("tried %v below min or confirmed: %s", s, f.trace())
		}
	}
	if len(f.cooled) != len(f.steps) {
		t.Fatalf("every failed step needs a cool-down: %d steps, %d cool-downs", len(f.steps), len(f.cooled))
	}
}

func TestGeneratorLimited(t *testing.T) {
	// the proxy could do 1000, the generator only 500
	f := &fakeProxy{capacity: 1000, genLimit: 500}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if !res.GeneratorLimited || res.Rate != 500 || !res.Confirmed || !strings.Contains(res.Note, "lower bound") {
		t.Fatalf("result %+v steps %s", res, f.trace())
	}
}

func TestProxyFailureBelowGeneratorLimitClearsFlag(t *testing.T) {
	// the generator gives up above 1500, the proxy above 1000: probe 1600 is
	// generator-limited, bisect 1200 is the proxy's own failure
	f := &fakeProxy{capacity: 1000, genLimit: 1500}
	res, err := Run(context.Background(), seed002(), f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if res.GeneratorLimited || res.Rate != 1000 {
		t.Fatalf("result %+v steps %s", res, f.trace())
	}
}

func TestGeneratorLimitedConfirmationSetsFlag(t *testing.T) {
	calls := 0
	step := func(_ context.Context, s Step) (Judgment, error) {
		calls++
		if s.Phase == PhaseConfirm && s.Rate == 1000 {
			return Judgment{Verdict: GenLimited}, nil
		}
		if s.Rate <= 1000 {
			return Judgment{Verdict: Pass}, nil
		}
		return Judgment{Verdict: Fail}, nil
	}
	res, err := Run(context.Background(), seed002(), step, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.GeneratorLimited || res.Rate != 920 || res.StepDowns != 1 {
		t.Fatalf("result %+v", res)
	}
}

func TestWithinPrecisionForManyCapacities(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		capacity := 50 + rng.Float64()*200_000
		cfg := seed002()
		cfg.Start = 10 + rng.Float64()*1000
		cfg.Min = 1
		f := &fakeProxy{capacity: capacity}
		res, err := Run(context.Background(), cfg, f.step, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rate > capacity || res.Rate < capacity/1.08-1 {
			t.Fatalf("capacity %.0f start %.0f: found %v (%s)", capacity, cfg.Start, res, f.trace())
		}
		if len(f.steps) > 40 {
			t.Fatalf("capacity %.0f: %d steps", capacity, len(f.steps))
		}
	}
}

func TestStepErrorEndsSearch(t *testing.T) {
	errStop := errors.New("interrupted")
	n := 0
	step := func(_ context.Context, s Step) (Judgment, error) {
		n++
		if n == 3 {
			return Judgment{}, errStop
		}
		return Judgment{Verdict: Pass}, nil
	}
	res, err := Run(context.Background(), seed002(), step, nil)
	if !errors.Is(err, errStop) || res.Steps != 2 {
		t.Fatalf("err %v result %+v", err, res)
	}
	coolErr := errors.New("cool-down cancelled")
	_, err = Run(context.Background(), seed002(), func(context.Context, Step) (Judgment, error) {
		return Judgment{Verdict: Fail}, nil
	}, func(context.Context, Step) error { return coolErr })
	if !errors.Is(err, coolErr) {
		t.Fatalf("cool-down error lost: %v", err)
	}
	_, err = Run(context.Background(), seed002(), func(context.Context, Step) (Judgment, error) {
		return Judgment{Verdict: "maybe"}, nil
	}, nil)
	if err == nil {
		t.Fatal("unknown verdict accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, mut := range []func(*Config){
		func(c *Config) { c.Start = 0 },
		func(c *Config) { c.Max = 50 },
		func(c *Config) { c.Min = 0 },
		func(c *Config) { c.Growth = 1 },
		func(c *Config) { c.Precision = 0 },
		func(c *Config) { c.Precision = math.NaN() },
		func(c *Config) { c.ConfirmRuns = 0 },
		func(c *Config) { c.StepDown = 1 },
		func(c *Config) { c.MaxStepDowns = -1 },
	} {
		c := seed002()
		mut(&c)
		if _, err := Run(context.Background(), c, nil, nil); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
}

func TestMedian(t *testing.T) {
	r := func(rate float64, ok bool) Result { return Result{Rate: rate, Confirmed: ok} }
	for _, c := range []struct {
		in   []Result
		want int
	}{
		{[]Result{r(5, true)}, 0},
		{[]Result{r(5, true), r(3, true), r(4, true)}, 2},
		{[]Result{r(5, true), r(3, true), r(4, true), r(6, true)}, 2},
		{[]Result{r(5, true), r(9, false), r(4, true)}, 2},         // the confirmed ones' lower middle
		{[]Result{r(0, false), r(7000, true)}, 1},                  // one unconfirmed of two: the confirmed one
		{[]Result{{LastPass: 3}, {LastPass: 9}, {LastPass: 5}}, 1}, // none confirmed: the highest last pass
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("%+v: %d, want %d", c.in, got, c.want)
		}
	}
}
