package session

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/netns"
)

// TimeWait counts TCP sockets in TIME_WAIT for a role: "proxy", "backend"
// or "gen". In netns mode it counts inside the role's namespace. In
// loopback mode every role shares the host namespace, so it counts by port:
// "proxy" and "backend" count sockets on the backend's port (both ends of
// the proxy-to-backend connections), "gen" sockets on the listening ports
// of the running proxies.
func (s *Session) TimeWait(role string) (int, error) {
	switch role {
	case RoleProxy, RoleBackend, RoleGen:
	default:
		return 0, fmt.Errorf("unknown role %q: use proxy, backend or gen", role)
	}
	if l := s.netLab(); l != nil {
		return l.TimeWait(role)
	}
	if role != RoleGen {
		if s.backend == nil {
			return 0, fmt.Errorf("backend not started")
		}
		return netns.HostTimeWait(s.backend.addr.Port())
	}
	s.mu.Lock()
	var ports []int
	for p := range s.running {
		ports = append(ports, p.params.HTTPSPort, p.params.HTTPPort)
	}
	s.mu.Unlock()
	total := 0
	for _, port := range ports {
		n, err := netns.HostTimeWait(uint16(port))
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}
