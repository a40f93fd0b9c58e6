package session

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/pin"
)

// Aim is where the generator aims at one of a session's proxies, and
// where it runs: the proxy's addresses, the name it serves and the CA
// that signed its certificate; the generator's CPUs and, in netns mode,
// its namespace and source addresses. The lab's step builds the
// generator's Config from it (lab/scenario).
type Aim struct {
	HTTPS      netip.AddrPort // TLS (TCP, and UDP for HTTP/3)
	HTTP       netip.AddrPort // plain HTTP
	ServerName string         // the Host header and SNI the proxy serves
	CAFile     string         // the lab CA's certificate (PEM)
	CPUs       pin.CPUSet     // the generator's CPUs (the session's CPU plan)
	NetNS      string         // the generator's namespace ("" on loopback)
	SrcAddrs   []netip.Addr   // the generator namespace's addresses (netns mode)
}

// Aim says where the generator aims at p.
func (p *Proxy) Aim() Aim {
	s := p.e
	a := Aim{
		HTTPS:      p.addr,
		HTTP:       netip.AddrPortFrom(p.addr.Addr(), uint16(p.params.HTTPPort)),
		ServerName: s.Host(),
		CAFile:     s.ca,
		CPUs:       s.plan.Loadgen,
	}
	if l := s.netLab(); l != nil {
		a.NetNS = l.NSPath(RoleGen)
		a.SrcAddrs = l.GenAddrs()
	}
	return a
}

// Config returns base aimed at the proxy (the one builder of the
// generator's Config in the lab: a step gives the base, the aim the rest): the URL's scheme, host and port
// become the proxy's address (https and its TLS port unless base.URL says
// http://, then the plain port; base.URL's path and query are kept and may
// be given alone, like "/1k"), the Host header and SNI become the server
// name, the lab CA is trusted (unless base.TLS.Insecure), the loops run on
// the generator's CPUs (unless base.CPUs is set), and in netns mode inside
// the generator's namespace, with new connections spread over its source
// addresses when base.NewConn is set and base.SrcAddrs is empty.
func (a Aim) Config(base gen.Config) gen.Config {
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
	addr := a.HTTPS
	if scheme == "http" {
		addr = a.HTTP
	}
	c.URL = scheme + "://" + addr.String() + path
	c.Headers = nil
	for _, h := range base.Headers {
		if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(strings.TrimSpace(name), "host") {
			continue
		}
		c.Headers = append(c.Headers, h)
	}
	c.Headers = append(c.Headers, "Host: "+a.ServerName)
	c.TLS.SNI = a.ServerName
	if !c.TLS.Insecure && c.TLS.CAFile == "" {
		c.TLS.CAFile = a.CAFile
	}
	if len(c.CPUs) == 0 {
		c.CPUs = append(c.CPUs, a.CPUs...)
	}
	if a.NetNS != "" {
		c.NetNS = a.NetNS
		if c.NewConn && len(c.SrcAddrs) == 0 {
			c.SrcAddrs = slices.Clone(a.SrcAddrs)
		}
	}
	return c
}
