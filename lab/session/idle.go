package session

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/lab/watch"
)

// IdleMemory measures the proxy's idle memory as seed 001 did: one request
// served through it, a quiet period, then samples readings of its group
// every apart (watch.Idle: anon + kernel as the headline, page cache and
// memory.current beside it, medians and every reading). Seed 001 used
// 10 min, 20 samples, 30 s; quick runs shorten all three. With NoCgroups
// the group is the /proc process tree (resident set sums).
func (p *Proxy) IdleMemory(ctx context.Context, quiet time.Duration, samples int, every time.Duration) (watch.Idle, error) {
	if err := p.probe(ctx); err != nil {
		return watch.Idle{}, fmt.Errorf("idle memory of %s: the request before the quiet period failed: %v", p.prof.Name, err)
	}
	g := p.Group()
	if g == nil {
		return watch.Idle{}, fmt.Errorf("%s is not running", p.name)
	}
	return watch.IdleMemoryContext(ctx, g, quiet, samples, every)
}
