package session

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Renew gives the session a clean slate for the next step. In netns mode
// it stops the running proxies and the backend, removes the network
// namespaces, makes new ones, starts the backend in them and restarts
// every proxy that was running, with the same config, ports and
// certificate, each in a fresh cgroup. A new namespace has its own
// ephemeral port range and no socket in TIME_WAIT, so a step cannot start
// with ports the one before left behind (seed 002's 100 s pause, seed
// 003's fresh containers). The restarted proxies are waited for with a
// TLS handshake that is reset, not a request, so nothing of the lab's own
// goes through them or leaves a TIME_WAIT socket before the step. In
// loopback mode Renew does nothing: the host's namespace cannot be
// replaced (see the cool-down in lab/scenario). It returns how long it took.
func (s *Session) Renew(ctx context.Context) (time.Duration, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if s.netLab() == nil {
		return 0, nil
	}
	t0 := time.Now()
	s.mu.Lock()
	var proxies []*Proxy
	for p := range s.running {
		proxies = append(proxies, p)
	}
	s.mu.Unlock()
	var errs []error
	for _, p := range proxies {
		p.mu.Lock()
		pr, g := p.proc, p.group
		p.proc, p.group = nil, nil
		p.mu.Unlock()
		if pr != nil {
			errs = append(errs, p.stopInstance(pr, g))
		}
	}
	errs = append(errs, s.stopBackend(), s.closeLab())
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("renew the lab: %v", oneLine(err))
	}
	if err := s.newLab(); err != nil {
		return 0, fmt.Errorf("renew the lab: %v", err)
	}
	s.mu.Lock()
	s.renewals++
	s.mu.Unlock()
	if err := s.launchBackend(ctx); err != nil {
		return 0, fmt.Errorf("renew the lab: %v", err)
	}
	for _, p := range proxies {
		if err := p.launch(ctx, readyHandshake); err != nil {
			return 0, fmt.Errorf("renew the lab: restart %s: %v", p.prof.Name, err)
		}
	}
	return time.Since(t0), nil
}

// Renewals is how many times Renew made new namespaces.
func (s *Session) Renewals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.renewals
}
