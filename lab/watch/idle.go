package watch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// IdleMemory measures a group's idle memory as seed 001 did: call it right
// after sending one request; it waits quiet, then reads the group samples
// times, every apart, and returns the median of memory.current (v1:
// memory.usage_in_bytes; page cache included, as the seeds report it) and
// all readings. The median of an even count is the mean of the middle two.
// Seed 001 used quiet = 10 min, samples = 20, every = 30 s.
func IdleMemory(g cgroup.Group, quiet time.Duration, samples int, every time.Duration) (median uint64, all []uint64, err error) {
	return IdleMemoryContext(context.Background(), g, quiet, samples, every)
}

// IdleMemoryContext is IdleMemory that gives up when ctx is done.
func IdleMemoryContext(ctx context.Context, g cgroup.Group, quiet time.Duration, samples int, every time.Duration) (median uint64, all []uint64, err error) {
	if g == nil {
		return 0, nil, errors.New("idle memory needs a cgroup (not available with --no-cgroups)")
	}
	if samples < 1 {
		return 0, nil, fmt.Errorf("idle memory needs at least 1 sample, got %d", samples)
	}
	wait := quiet
	for i := 0; i < samples; i++ {
		select {
		case <-ctx.Done():
			return 0, all, ctx.Err()
		case <-time.After(wait):
		}
		st, err := g.Stats()
		if err != nil {
			return 0, all, fmt.Errorf("idle memory of %s: %v", g.Name(), err)
		}
		all = append(all, st.MemCurrent)
		wait = every
	}
	return Median(all), all, nil
}

// Median returns the median of v (mean of the middle two for an even
// count); 0 for none.
func Median(v []uint64) uint64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	a, b := s[n/2-1], s[n/2]
	return a + (b-a)/2
}
