package session

import (
	"bytes"
	"context"
	"fmt"
	"time"
)

// Restart stops the proxy and starts it again in a fresh cgroup with the
// same config, ports and certificate files. seconds runs from the stop
// signal until the proxy answers GET /1k again (as seed 001 timed a
// container restart); certUnchanged compares the leaf certificate served
// before and after.
func (p *Proxy) Restart(ctx context.Context) (seconds float64, certUnchanged bool, err error) {
	p.mu.Lock()
	pr, g, stopped := p.proc, p.group, p.stopped
	p.mu.Unlock()
	if pr == nil || stopped {
		return 0, false, fmt.Errorf("%s is not running: start it with StartProxy", p.name)
	}
	before, err := p.e.servedLeaf(ctx, p.addr.String())
	if err != nil {
		return 0, false, fmt.Errorf("restart %s: certificate before: %v", p.prof.Name, err)
	}
	fmt.Fprintf(p.e.o.Log, "restarting %s (%s)\n", p.prof.Name, p.key)
	t0 := time.Now()
	if err := p.stopInstance(pr, g); err != nil {
		return 0, false, fmt.Errorf("restart %s: %v", p.prof.Name, err)
	}
	if err := p.launch(ctx, readyRequest); err != nil {
		return 0, false, fmt.Errorf("restart %s: %v", p.prof.Name, err)
	}
	seconds = time.Since(t0).Seconds()
	after, err := p.e.servedLeaf(ctx, p.addr.String())
	if err != nil {
		return seconds, false, fmt.Errorf("restart %s: certificate after: %v", p.prof.Name, err)
	}
	return seconds, bytes.Equal(before, after), nil
}
