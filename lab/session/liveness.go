package session

import (
	"context"
	"fmt"

	"github.com/loadlab/loadlab/lab/watch"
)

// WatchExit watches the running instance for the length of a step: its exit
// (the wait status the supervisor collects) and OOM kills in its cgroup.
// A restart starts a new instance: watch again after Relaunch or Renew.
func (p *Proxy) WatchExit() *watch.ExitWatcher {
	p.mu.Lock()
	pr, g := p.proc, p.group
	p.mu.Unlock()
	return watch.WatchExit(pr, g)
}

// Relaunch stops what is left of the running instance (an OOM kill may
// have taken only workers) and starts the proxy again in a fresh cgroup
// with the same config, ports and certificate, waiting until it answers:
// after it died during a step, for the next one.
func (p *Proxy) Relaunch(ctx context.Context) error {
	p.mu.Lock()
	pr, g, stopped := p.proc, p.group, p.stopped
	p.proc, p.group = nil, nil
	p.mu.Unlock()
	if stopped {
		return fmt.Errorf("%s was stopped: start it with StartProxy", p.name)
	}
	fmt.Fprintf(p.e.o.Log, "restarting %s (%s) for the next step\n", p.prof.Name, p.key)
	if pr != nil {
		if err := p.stopInstance(pr, g); err != nil {
			return fmt.Errorf("restart %s: %v", p.prof.Name, err)
		}
	}
	if err := p.launch(ctx, readyRequest); err != nil {
		return fmt.Errorf("restart %s: %v", p.prof.Name, err)
	}
	return nil
}

// WatchBackend watches the running backend like Proxy.WatchExit.
func (e *Session) WatchBackend() *watch.ExitWatcher {
	e.mu.Lock()
	b := e.backend
	e.mu.Unlock()
	if b == nil {
		return watch.WatchExit(nil, nil)
	}
	return watch.WatchExit(b.proc, b.group)
}

// RestartBackend stops what is left of the backend and starts it again in
// a fresh cgroup on the same address (the proxies' configs name it),
// waiting until it answers.
func (e *Session) RestartBackend(ctx context.Context) error {
	if err := e.checkOpen(); err != nil {
		return err
	}
	fmt.Fprintf(e.o.Log, "restarting the backend after it died\n")
	if err := e.stopBackend(); err != nil {
		return fmt.Errorf("restart the backend: %v", oneLine(err))
	}
	if err := e.launchBackend(ctx); err != nil {
		return fmt.Errorf("restart the backend: %v", err)
	}
	return nil
}
