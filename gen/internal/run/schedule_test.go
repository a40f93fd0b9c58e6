package run

import (
	"fmt"
	"testing"
	"time"
)

// drain returns the global indexes and intended times a loop's schedule
// lets it send, admitting the way the loops do (due before the stop, quota
// not spent) with a clock past the end of the run.
func drain(s *Schedule) (idx, at []int64) {
	for s.Open && s.nextDue < s.stopAt && !s.QuotaSpent() {
		idx = append(idx, s.global(s.seq))
		at = append(at, s.nextDue)
		s.seq++
		s.nextDue = s.intendedAt(s.seq)
		s.Started++
	}
	return idx, at
}

// TestScheduleShardsCoverTheSchedule: over every shard and every loop of
// each shard, each request of the single-generator schedule is sent exactly
// once, at the same intended nanosecond, and nothing else is.
func TestScheduleShardsCoverTheSchedule(t *testing.T) {
	for _, rate := range []float64{1000, 3, 7919.5, 1e6 / 3} {
		for _, nshards := range []int{1, 2, 3, 4, 7} {
			for _, nloops := range []int{1, 2, 3} {
				for _, requests := range []int{0, 7, 1001} {
					if requests > 0 && requests < nshards {
						continue // refused by Validate
					}
					name := fmt.Sprintf("rate=%g/shards=%d/loops=%d/requests=%d", rate, nshards, nloops, requests)
					t.Run(name, func(t *testing.T) {
						checkCover(t, rate, nshards, nloops, requests, 2*time.Second+time.Millisecond)
					})
				}
			}
		}
	}
}

func checkCover(t *testing.T, rate float64, nshards, nloops, requests int, d time.Duration) {
	t.Helper()
	// The single generator's schedule: j/rate for every j due before the
	// end (and below --requests).
	var want []int64
	for j := int64(0); ; j++ {
		at := int64(float64(j) * (1e9 / rate))
		if at >= int64(d) || (requests > 0 && j >= int64(requests)) {
			break
		}
		want = append(want, at)
	}
	got := map[int64]int64{}
	for s := 0; s < nshards; s++ {
		spec := &Spec{Pacer: Constant(rate, d), Duration: d, Requests: requests, Shard: s, Shards: nshards}
		var shardSent int
		for i := 0; i < nloops; i++ {
			sch := newSchedule(spec, i, nloops, 1000)
			idx, at := drain(&sch)
			for n, j := range idx {
				if prev, dup := got[j]; dup {
					t.Fatalf("request %d sent twice (at %d and %d ns)", j, prev, at[n])
				}
				if j%int64(nshards) != int64(s) {
					t.Fatalf("shard %d sent request %d, which belongs to shard %d", s, j, j%int64(nshards))
				}
				got[j] = at[n]
			}
			shardSent += len(idx)
		}
		// When --requests, not the duration, ends the run, the shard's
		// count is its Share of them.
		if requests > 0 && len(want) == requests && shardSent != Share(requests, s, nshards) {
			t.Fatalf("shard %d sent %d requests, its share of %d is %d", s, shardSent, requests, Share(requests, s, nshards))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("shards sent %d requests, the schedule has %d", len(got), len(want))
	}
	for j, at := range want {
		g, ok := got[int64(j)]
		if !ok {
			t.Fatalf("request %d (due at %d ns) was sent by no shard", j, at)
		}
		if g != at {
			t.Fatalf("request %d due at %d ns, the single generator has it at %d ns", j, g, at)
		}
	}
}

// TestScheduleQuotaBelowLoops: with fewer requests than loops, the loops
// without a share send nothing (a share of 0 once meant "no limit").
func TestScheduleQuotaBelowLoops(t *testing.T) {
	s := newSchedule(&Spec{Pacer: Constant(100, time.Second), Duration: time.Second, Requests: 1, Shards: 1}, 1, 2, 1000)
	if !s.QuotaSpent() {
		t.Fatal("loop 1 of 2 with --requests 1 may still send")
	}
	closed := &Spec{Duration: time.Second, Requests: 3, Shards: 1}
	for i, want := range []bool{false, false, false, true} {
		s := newSchedule(closed, i, 4, 0)
		if got := s.QuotaSpent(); got != want {
			t.Errorf("closed loop, loop %d of 4, 3 requests: spent %v at start, want %v", i, got, want)
		}
	}
}

// TestPacingToleranceNeverEarly: with a tolerance no request leaves before
// its intended time: the lag sampled at each wakeup is never negative, and
// wakeups fall on the tolerance's ticks.
func TestPacingToleranceNeverEarly(t *testing.T) {
	s := Schedule{tolerance: int64(time.Millisecond)}
	for _, tc := range []struct{ due, want int64 }{
		{0, 0}, {1, 1_000_000}, {999_999, 1_000_000}, {1_000_000, 1_000_000}, {1_000_001, 2_000_000},
	} {
		s.nextDue = tc.due
		if got := s.wakeFor(); got != tc.want || got < tc.due {
			t.Errorf("due %d: wake at %d, want %d", tc.due, got, tc.want)
		}
	}
	s.tolerance = 0
	s.nextDue = 123
	if s.wakeFor() != 123 {
		t.Error("without a tolerance the loop wakes at the intended time")
	}
}
