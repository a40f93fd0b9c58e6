package session

import (
	"time"

	"github.com/loadlab/loadlab/lab/watch"
)

// Watch samples the running instance's group every interval (1 s when
// every <= 0): CPU cores busy, memory (current, anon, peak), processes and
// threads, and TIME_WAIT in the proxy's namespace (on loopback: sockets on
// the backend port, the proxy's backend-facing connections). Stop it with
// Stop; a restart starts a new group, so watch again after Restart.
func (p *Proxy) Watch(every time.Duration) *watch.Watcher {
	return watch.Start(p.Group(), func() (int, error) { return p.e.TimeWait(RoleProxy) }, every)
}

// WatchBackend samples the running backend's group every interval like
// Watch samples a proxy's (CPU, memory, processes; no TIME_WAIT): nil
// without cgroups. A renewal starts a new backend group: watch after it.
func (s *Session) WatchBackend(every time.Duration) *watch.Watcher {
	s.mu.Lock()
	b := s.backend
	s.mu.Unlock()
	if b == nil || b.group == nil {
		return nil
	}
	return watch.Start(b.group, nil, every)
}
