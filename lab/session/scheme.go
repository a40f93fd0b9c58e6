package session

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/loadlab/loadlab/lab/proxy"
)

// protoHTTP is a check over plain HTTP/1.1 on the server's HTTP port.
const protoHTTP = "http"

// probeScheme GETs /1k on a new connection over scheme (SchemeHTTPS:
// HTTP/1.1 over TLS with the lab's CA and server name; SchemeHTTP: plain
// HTTP on the HTTP port, the connection reset afterwards) and wants 200
// with the readiness body: 1024 bytes, or the profile's FixedBody.
func (p *Proxy) probeScheme(ctx context.Context, scheme string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := p.clientFor(scheme, protoH1)
	defer c.CloseIdleConnections()
	status, _, body, err := fetch(ctx, c, p.schemeURL(scheme, proxy.ReadyPath))
	if err != nil {
		return err
	}
	if fixed := p.prof.FixedBody; fixed != nil {
		if status != 200 || !bytes.Equal(body, fixed) {
			return fmt.Errorf("%s %s answered %d with %q, want 200 with %q", scheme, proxy.ReadyPath, status, truncate(string(body), 40), fixed)
		}
		return nil
	}
	if status != 200 || len(body) != proxy.ReadySize {
		return fmt.Errorf("%s %s answered %d with %d bytes", scheme, proxy.ReadyPath, status, len(body))
	}
	return nil
}

// clientFor is the check client of scheme: plain HTTP/1.1 to the HTTP
// port, or proto (h1, h2) over TLS to the HTTPS port.
func (p *Proxy) clientFor(scheme, proto string) *http.Client {
	if scheme == SchemeHTTP {
		return p.e.plainClient(p.httpAddr.String())
	}
	return p.e.httpsClient(p.addr.String(), proto)
}

// schemeURL is the URL a check requests over scheme: the server name
// (Host, SNI) and the path; the clients dial the server's own address.
func (p *Proxy) schemeURL(scheme, path string) string {
	return scheme + "://" + p.e.Host() + path
}

// HTTPAddr returns the server's plain-HTTP address.
func (p *Proxy) HTTPAddr() string { return p.httpAddr.String() }

// Scheme returns what the lab's clients speak to the servers under test.
func (s *Session) Scheme() string { return s.o.Scheme }

// servesPlain reports whether the server listens for plain HTTP on its
// HTTP port: every profile does; the reference target (loadlab serve) only
// when the session's scheme is http (it has one listener).
func (p *Proxy) servesPlain() bool {
	return p.prof.Name != ServeProfile || p.e.o.Scheme == SchemeHTTP
}
