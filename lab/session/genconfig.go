package session

import (
	"net/url"
	"strings"

	"github.com/loadlab/loadlab/gen"
)

// GenConfig returns base aimed at the proxy: the URL's scheme, host and
// port become the proxy's address (https and its TLS port unless base.URL
// says http://, then the plain port; base.URL's path and query are kept and
// may be given alone, like "/1k"), the Host header and SNI become the
// server name, the lab CA is trusted, the loops run on the generator CPUs
// (unless base.CPUs is set), and in netns mode inside the generator's
// namespace, with new connections spread over its source addresses when
// base.NewConn is set and base.SrcAddrs is empty.
func (s *Session) GenConfig(p *Proxy, base gen.Config) gen.Config {
	c := base
	scheme, path := "https", "/"
	if u, err := url.Parse(base.URL); err == nil && base.URL != "" {
		if strings.EqualFold(u.Scheme, "http") {
			scheme = "http"
		}
		if u.EscapedPath() != "" {
			path = u.EscapedPath()
		}
		if u.RawQuery != "" {
			path += "?" + u.RawQuery
		}
	}
	port := p.params.HTTPSPort
	if scheme == "http" {
		port = p.params.HTTPPort
	}
	c.URL = scheme + "://" + hostPort(p.addr.Addr(), port) + path
	c.Headers = nil
	for _, h := range base.Headers {
		if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(name), "host") {
			continue
		}
		c.Headers = append(c.Headers, h)
	}
	c.Headers = append(c.Headers, "Host: "+s.o.ServerName)
	c.TLS.SNI = s.o.ServerName
	if !c.TLS.Insecure && c.TLS.CAFile == "" {
		c.TLS.CAFile = s.ca
	}
	if len(c.CPUs) == 0 {
		c.CPUs = append(c.CPUs, s.plan.Loadgen...)
	}
	if l := s.netLab(); l != nil {
		c.NetNS = l.NSPath(RoleGen)
		if c.NewConn && len(c.SrcAddrs) == 0 {
			c.SrcAddrs = l.GenAddrs()
		}
	}
	return c
}
