package search

import (
	"context"
	"testing"
)

// TestPriorBracket: a later round starts at the earlier round's bracket.
// The same capacity costs 3 steps plus the confirmations instead of a
// whole search from Start; a capacity that moved is still found, up or
// down, within the precision.
func TestPriorBracket(t *testing.T) {
	base := seed002()
	base.ConfirmRuns = 1
	first := &fakeProxy{capacity: 1000}
	r1, err := Run(context.Background(), base, first.step, first.cool)
	if err != nil || !r1.Confirmed {
		t.Fatalf("first round: %+v, %v", r1, err)
	}
	cases := []struct {
		name     string
		capacity float64
		want     string
	}{
		{"same", 1000, "probe:1000 probe:1050 confirm:1000#1"},
		// near the bracket the probes move by twice the precision (1.16x)
		{"a little up", 1100, "probe:1000 probe:1050 probe:1218 bisect:1134 confirm:1050#1"},
		{"up", 1500, "probe:1000 probe:1050 probe:1218 probe:1413 probe:1639 bisect:1526 confirm:1413#1"},
		{"down", 700, "probe:1000 probe:862 probe:743 probe:641 bisect:692 confirm:692#1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			cfg.Prior = Bracket{Lo: r1.Rate, Hi: r1.FirstFail}
			f := &fakeProxy{capacity: c.capacity}
			res, err := Run(context.Background(), cfg, f.step, f.cool)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.trace(); got != c.want {
				t.Fatalf("steps\n got %s\nwant %s", got, c.want)
			}
			if !res.Confirmed || res.Rate > c.capacity || (c.capacity-res.Rate)/res.Rate > base.Precision {
				t.Fatalf("found %+v for capacity %g", res, c.capacity)
			}
		})
	}
	if n := len(first.steps); n < 8 {
		t.Fatalf("the first round took %d steps: the comparison above means nothing", n)
	}
}

// TestPriorAtMax: a bracket that passed the plan's max probes it once
// and ends capped.
func TestPriorAtMax(t *testing.T) {
	cfg := seed002()
	cfg.Max, cfg.ConfirmRuns = 2000, 1
	cfg.Prior = Bracket{Lo: 2000}
	f := &fakeProxy{capacity: 5000}
	res, err := Run(context.Background(), cfg, f.step, f.cool)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.trace(), "probe:2000 confirm:2000#1"; got != want || !res.Capped || res.Rate != 2000 {
		t.Fatalf("steps %s, result %+v", got, res)
	}
}
