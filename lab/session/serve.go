package session

import (
	"context"
	"net"
	"strconv"
	"syscall"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
)

// ServeProfile is the name of the generator's reference target.
const ServeProfile = "loadlab-serve"

// StartServe starts the generator's reference target where a proxy would
// run: `loadlab serve` over TLS (and HTTP/3 with h3) with key's
// certificate, or over plain HTTP on the HTTP port when the session's
// scheme is http, on the proxy's CPUs, in its own cgroup and, in netns
// mode, in the proxy's namespace. It answers the backend's paths itself, so a
// run against it measures what the generator can drive in the same layout
// without a proxy: the generator's ceiling. It is a Proxy like the others
// (Aim.Config aims at it, Renew restarts it, Stop stops it).
func (s *Session) StartServe(ctx context.Context, key certs.KeyType, f proxy.Features) (*Proxy, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	return s.start(ctx, serveProfile(s.o.Self, f, s.o.Scheme), key)
}

// serveProfile runs self's serve subcommand as a proxy profile.
// Of f, H2 and H3 add serve's --h2 and --h3; TLS is on unless scheme is
// http, where it serves plain HTTP on the HTTP port (and nothing on the
// HTTPS port).
func serveProfile(self string, f proxy.Features, scheme string) proxy.Profile {
	return proxy.Profile{
		Name:        ServeProfile,
		Proxy:       "loadlab",
		Role:        proxy.RoleProxy,
		Description: "loadlab serve on the proxy's CPUs: the generator's reference target (its ceiling without a proxy)",
		Features:    proxy.Features{TLS: scheme != SchemeHTTP, H2: f.H2, H3: f.H3 && scheme != SchemeHTTP},
		Find:        func() (string, error) { return self, nil },
		Version:     func(string) (string, error) { return "loadlab serve", nil },
		Render:      func(proxy.Params) (map[string][]byte, error) { return map[string][]byte{}, nil },
		Command: func(path string, p proxy.Params) []string {
			if scheme == SchemeHTTP {
				argv := []string{path, "serve", "--listen", net.JoinHostPort(p.ListenHost, strconv.Itoa(p.HTTPPort))}
				if f.H2 {
					argv = append(argv, "--h2")
				}
				return argv
			}
			argv := []string{path, "serve", "--listen", net.JoinHostPort(p.ListenHost, strconv.Itoa(p.HTTPSPort)), "--tls-cert", p.CertFile, "--tls-key", p.KeyFile}
			if f.H2 {
				argv = append(argv, "--h2")
			}
			if f.H3 {
				argv = append(argv, "--h3")
			}
			return argv
		},
		StopSignal: syscall.SIGTERM,
	}
}
