package session

import (
	"context"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
)

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
	prof, err := serveProfile(s.o.Self, f, s.o.Scheme)
	if err != nil {
		return nil, err
	}
	return s.start(ctx, prof, key)
}

// serveProfile runs self's serve subcommand as a profile, defined as a
// profile file is. Of f, H2 and H3 add serve's --h2 and --h3; TLS is on
// unless scheme is http, where it serves plain HTTP on the HTTP port (and
// nothing on the HTTPS port).
func serveProfile(self string, f proxy.Features, scheme string) (proxy.Profile, error) {
	argv := []string{"{{.Binary}}", "serve", "--listen", "{{.HTTPSAddr}}", "--tls-cert", "{{.Cert}}", "--tls-key", "{{.Key}}"}
	features := []string{"tls"}
	if scheme == SchemeHTTP {
		argv, features = argv[:4], nil
		argv[3] = "{{.HTTPAddr}}"
	}
	if f.H2 {
		argv = append(argv, "--h2")
		if scheme != SchemeHTTP {
			features = append(features, "h2")
		}
	}
	if f.H3 && scheme != SchemeHTTP {
		argv = append(argv, "--h3")
		features = append(features, "h3")
	}
	text, err := yaml.Marshal(map[string]any{
		"name":        ServeProfile,
		"server":      "loadlab",
		"description": "loadlab serve on the proxy's CPUs: the generator's reference target (its ceiling without a proxy)",
		"binary":      self,
		"version":     "loadlab serve",
		"command":     argv,
		"features":    features,
	})
	if err != nil {
		return proxy.Profile{}, err
	}
	prof, err := proxy.Parse(ServeProfile+".yaml", text)
	if err != nil {
		return proxy.Profile{}, fmt.Errorf("the reference target's profile: %s", strings.TrimSpace(err.Error()))
	}
	// HTTP/2 over plain HTTP (h2c) is served without TLS.
	prof.Features.H2 = f.H2
	return prof, nil
}
