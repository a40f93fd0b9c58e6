package session

import (
	"fmt"
	"maps"
	"slices"

	"github.com/loadlab/loadlab/lab/netns"
)

// ListenSysctls are the settings of a listening socket's queues: they are
// set in the backend's namespace too, since the backend listens for the
// proxy's connections as the proxy does for the generator's.
var ListenSysctls = map[string]bool{"net.core.somaxconn": true, "net.ipv4.tcp_max_syn_backlog": true}

// applySysctls sets Options.Sysctls in the new namespaces of l, in key
// order; the error names the key.
func (s *Session) applySysctls(l *netns.Lab) error {
	for _, k := range slices.Sorted(maps.Keys(s.o.Sysctls)) {
		v := s.o.Sysctls[k]
		roles := []string{RoleProxy}
		if ListenSysctls[k] {
			roles = append(roles, RoleBackend)
		}
		for _, r := range roles {
			if err := l.SetSysctl(r, k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Sysctls reads back Options.Sysctls in the proxy's namespace: what the
// kernel took (nil without settings or namespaces).
func (s *Session) Sysctls() (map[string]string, error) {
	l := s.netLab()
	if l == nil || len(s.o.Sysctls) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(s.o.Sysctls))
	for k := range s.o.Sysctls {
		v, err := l.Sysctl(RoleProxy, k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// TCPExt reads the TcpExt counters of the proxy's namespace (nil in
// loopback mode, where they would be the host's).
func (s *Session) TCPExt() (map[string]uint64, error) {
	l := s.netLab()
	if l == nil {
		return nil, nil
	}
	return l.TCPExt(RoleProxy)
}

// quotaWords is " under a CPU quota of Q" for the progress line of a
// proxy under one.
func quotaWords(q float64, profile string) string {
	if q <= 0 || profile == ServeProfile {
		return ""
	}
	return fmt.Sprintf(" under a CPU quota of %g", q)
}
