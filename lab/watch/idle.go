package watch

import (
	"context"
	"fmt"
	"github.com/loadlab/loadlab/internal/fields"
	"slices"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// Idle is a group's idle memory: the median of each figure over the
// readings, and every reading. Need (anonymous + kernel memory, from
// memory.stat and kmem) is what the proxy's processes need and the
// headline; File is page cache, charged to whichever group first read a
// file's pages (the proxy's binary, if it is the first to run it since
// boot), so it depends on what ran before; Total is memory.current
// (v1 usage_in_bytes), the seeds' number, with that page cache in it.
type Idle struct {
	Need  uint64 `json:"need"`  // anon + kernel, median
	File  uint64 `json:"file"`  // page cache, median
	Total uint64 `json:"total"` // memory.current, median

	NeedSamples  []uint64 `json:"need_samples"`
	TotalSamples []uint64 `json:"total_samples"`
}

// IdleMemory measures a group's idle memory as seed 001 did: call it right
// after the proxy served one request; it waits quiet, then reads the group
// samples times, every apart. The median of an even count is the mean of
// the middle two. Seed 001 used quiet = 10 min, samples = 20, every = 30 s.
func IdleMemory(g cgroup.Group, quiet time.Duration, samples int, every time.Duration) (Idle, error) {
	return IdleMemoryContext(context.Background(), g, quiet, samples, every)
}

// IdleMemoryContext is IdleMemory that gives up when ctx is done.
func IdleMemoryContext(ctx context.Context, g cgroup.Group, quiet time.Duration, samples int, every time.Duration) (Idle, error) {
	var idle Idle
	if g == nil {
		return idle, fields.Errorf("idle memory needs a cgroup (not available with {NoCgroups})")
	}
	if samples < 1 {
		return idle, fmt.Errorf("idle memory needs at least 1 sample, got %d", samples)
	}
	var files []uint64
	wait := quiet
	for i := 0; i < samples; i++ {
		select {
		case <-ctx.Done():
			return idle, ctx.Err()
		case <-time.After(wait):
		}
		st, err := g.Stats()
		if err != nil {
			return idle, fmt.Errorf("idle memory of %s: %v", g.Name(), err)
		}
		idle.NeedSamples = append(idle.NeedSamples, st.MemNeed())
		idle.TotalSamples = append(idle.TotalSamples, st.MemCurrent)
		files = append(files, st.MemFile)
		wait = every
	}
	idle.Need, idle.File, idle.Total = Median(idle.NeedSamples), Median(files), Median(idle.TotalSamples)
	return idle, nil
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
