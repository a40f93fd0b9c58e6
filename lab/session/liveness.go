package session

import (
	"context"
	"fmt"

	"github.com/loadlab/loadlab/lab/cleanup"
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

// WatchBackendExit watches the running backend like Proxy.WatchExit.
func (s *Session) WatchBackendExit() *watch.ExitWatcher {
	s.mu.Lock()
	b := s.backend
	s.mu.Unlock()
	if b == nil {
		return watch.WatchExit(nil, nil)
	}
	return watch.WatchExit(b.proc, b.group)
}

// RestartBackend stops what is left of the backend and starts it again in
// a fresh cgroup on the same address (the proxies' configs name it),
// waiting until it answers.
func (s *Session) RestartBackend(ctx context.Context) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	fmt.Fprintf(s.o.Log, "restarting the backend after it died\n")
	if err := s.stopBackend(); err != nil {
		return fmt.Errorf("restart the backend: %v", oneLine(err))
	}
	if err := s.launchBackend(ctx); err != nil {
		return fmt.Errorf("restart the backend: %v", err)
	}
	return nil
}

// startReaper starts the child that removes this session's processes,
// cgroups and namespaces if loadlab dies without closing it (kill -9). A
// reaper that cannot start is a note, not an error: the next run, or
// `loadlab lab cleanup`, removes the leftovers then.
func (s *Session) startReaper() {
	r, err := cleanup.StartReaper(s.o.Self, !s.o.NoCgroups, netPrefix)
	if err != nil {
		fmt.Fprintf(s.o.Log, "note: %v; if loadlab is killed, `loadlab lab cleanup` removes what it leaves\n", err)
		return
	}
	s.mu.Lock()
	s.reaper = r
	s.mu.Unlock()
}

// stopReaper tells the reaper that the session cleaned up by itself.
func (s *Session) stopReaper() error {
	s.mu.Lock()
	r := s.reaper
	s.reaper = nil
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.Stop()
}

// track asks the reaper to kill pgid's process group if loadlab dies: only
// without cgroups, where nothing else finds what the program forked (a
// program the lab starts leads its own process group, lab/proc).
func (s *Session) track(pgid int) {
	if r := s.groupReaper(); r != nil {
		r.Track(pgid)
	}
}

// untrack undoes track once the group is stopped.
func (s *Session) untrack(pgid int) {
	if r := s.groupReaper(); r != nil {
		r.Untrack(pgid)
	}
}

// groupReaper is the reaper that tracks process groups: nil with cgroups
// (they find the processes) or without a reaper.
func (s *Session) groupReaper() *cleanup.Reaper {
	s.mu.Lock()
	r := s.reaper
	s.mu.Unlock()
	if s.cg != nil {
		return nil
	}
	return r
}
