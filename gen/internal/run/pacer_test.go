package run

import (
	"math"
	"testing"
	"time"
)

// The intended time of every request of a staged schedule, checked
// against the integral of the rate the stages describe, computed here
// independently: request j is due at the first t with N(t) = j, so N just
// before its (whole-nanosecond) time is below j and N one nanosecond later
// is at least j, within float rounding.
func TestRampIntendedTimes(t *testing.T) {
	rp := new(Pacer).Ramp(3*time.Second, 1000).Ramp(2*time.Second, 1000).Ramp(0, 3000).Ramp(time.Second, 3000).Ramp(2*time.Second, 0)
	// N(t) by hand: ramp 0->1000 over 3 s (1500), hold 2 s (2000), jump
	// to 3000 for 1 s (3000), ramp 3000->0 over 2 s (3000).
	n := func(t float64) float64 {
		switch {
		case t <= 3:
			return 1000 * t * t / 6
		case t <= 5:
			return 1500 + 1000*(t-3)
		case t <= 6:
			return 3500 + 3000*(t-5)
		case t <= 8:
			x := t - 6
			return 6500 + 3000*x - 750*x*x
		}
		return 9500
	}
	if got := rp.Total(); math.Abs(got-9500) > 1e-9 {
		t.Fatalf("total %v, want 9500", got)
	}
	hint := 0
	prev := int64(-1)
	for j := int64(0); j < 9500; j++ {
		at := rp.At(j, &hint)
		if at < prev {
			t.Fatalf("request %d at %d ns, before request %d at %d", j, at, j-1, prev)
		}
		prev = at
		s := float64(at) / 1e9
		const eps = 1e-6
		if lo, hi := n(s-1e-9), n(s+1e-9); lo > float64(j)+eps || hi < float64(j)-eps {
			t.Fatalf("request %d at %.9f s: N(t-1ns) %.6f, N(t+1ns) %.6f, want N to cross %d there", j, s, lo, hi, j)
		}
		if got := rp.Count(s); math.Abs(got-n(s)) > 1e-6 {
			t.Fatalf("count(%v) %v, want %v", s, got, n(s))
		}
	}
	if at := rp.At(9500, &hint); at < 8e9 {
		t.Fatalf("request 9500 at %d, past the stages' offer, want none (at or after the end)", at)
	}
	if at := rp.At(9501, &hint); at != math.MaxInt64 {
		t.Fatalf("request 9501 at %d, want MaxInt64", at)
	}
	// The hint is only a start: any hint gives the same answer.
	for _, j := range []int64{0, 1, 1499, 1500, 3600, 9000} {
		for h := -1; h <= 5; h++ {
			hh := h
			if a, b := rp.At(j, &hh), rp.At(j, new(int)); a != b {
				t.Fatalf("request %d: hint %d gives %d, none %d", j, h, a, b)
			}
		}
	}
}

// A stage list starting at rate 0 sends nothing before the rate rises, and
// counts per second of the intended times follow N(t+1) - N(t).
func TestRampPerSecond(t *testing.T) {
	rp := new(Pacer).Ramp(2*time.Second, 0).Ramp(4*time.Second, 2000).Ramp(4*time.Second, 2000).Ramp(2*time.Second, 0)
	hint := 0
	if at := rp.At(0, &hint); at != 2e9 {
		t.Fatalf("first request at %d ns, want 2 s (the rate is 0 before)", at)
	}
	counts := make([]int, 12)
	for j := int64(0); ; j++ {
		at := rp.At(j, &hint)
		if at >= 12e9 {
			break
		}
		counts[at/1e9]++
	}
	for s, c := range counts {
		want := rp.Count(float64(s+1)) - rp.Count(float64(s))
		if math.Abs(float64(c)-want) > 1 {
			t.Errorf("second %d: %d requests intended, want %.1f +- 1", s, c, want)
		}
	}
}

// TestStagedScheduleShardsCover: a staged schedule split over shards and
// loops sends each request of the single generator's staged schedule
// exactly once, at the same nanosecond, as a constant one does.
func TestStagedScheduleShardsCover(t *testing.T) {
	rp := new(Pacer).Ramp(time.Second, 1000).Ramp(0, 3000).Ramp(time.Second, 3000).Ramp(500*time.Millisecond, 0)
	d := 2500 * time.Millisecond
	var want []int64
	for j, hint := int64(0), 0; ; j++ {
		at := rp.At(j, &hint)
		if at >= int64(d) {
			break
		}
		want = append(want, at)
	}
	if len(want) < 3900 || len(want) > 4251 {
		t.Fatalf("%d requests in the staged schedule, want the stages' 500+3000+750 (less the last, due at the end)", len(want))
	}
	for _, nshards := range []int{1, 2, 3} {
		for _, nloops := range []int{1, 2, 3} {
			got := map[int64]int64{}
			for s := 0; s < nshards; s++ {
				spec := &Spec{Pacer: rp, Duration: d, Shard: s, Shards: nshards}
				for i := 0; i < nloops; i++ {
					sch := newSchedule(spec, i, nloops, 1000)
					idx, at := drain(&sch)
					for n, j := range idx {
						if _, dup := got[j]; dup || j%int64(nshards) != int64(s) {
							t.Fatalf("shards %d loops %d: request %d sent twice or by shard %d", nshards, nloops, j, s)
						}
						got[j] = at[n]
					}
				}
			}
			if len(got) != len(want) {
				t.Fatalf("shards %d loops %d: %d requests sent, the schedule has %d", nshards, nloops, len(got), len(want))
			}
			for j, at := range want {
				if got[int64(j)] != at {
					t.Fatalf("shards %d loops %d: request %d at %d ns, the single generator has it at %d", nshards, nloops, j, got[int64(j)], at)
				}
			}
		}
	}
}

// TestOneStageIsRate: "0s:R,D:R" and --rate R are one pacer: a run at
// --rate R schedules request j at j/R to the nanosecond, as the staged
// form does.
func TestOneStageIsRate(t *testing.T) {
	for _, rate := range []float64{1, 3, 1000, 7919.5, 1e6 / 3, 1e7} {
		d := 10 * time.Second
		rp := new(Pacer).Ramp(0, rate).Ramp(d, rate)
		s := newSchedule(&Spec{Pacer: Constant(rate, d), Duration: d, Shards: 1}, 0, 1, 1000)
		hint := 0
		for j := int64(0); j < 200_000 && float64(j) < rate*d.Seconds(); j++ {
			a, b, want := rp.At(j, &hint), s.intendedAt(j), int64(float64(j)*(1e9/rate))
			if a != want || b != want {
				t.Fatalf("rate %g: request %d at %d ns staged, %d ns with --rate, want j/R = %d", rate, j, a, b, want)
			}
		}
	}
}
