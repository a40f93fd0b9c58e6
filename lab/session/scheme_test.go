package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/proxy"
)

// A session over plain HTTP: an origin starts and is ready over its HTTP
// port, serves the lab's files byte-identical over both schemes, survives
// Renew (its restart probed by a reset TCP connect), the generator reaches
// it over http:// with no TLS; the reference target serves plain HTTP on
// the HTTP port only.
func TestPlainHTTPSession(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-files")
	e := openSession(t, Options{Net: NetNS, Scheme: SchemeHTTP})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-files", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := p.CheckBodiesDetail(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range checks {
		keys = append(keys, c.Key())
	}
	if got := strings.Join(keys, " "); got != "/1k /1m h2 /1k h2 /1m http /1k http /1m" {
		t.Errorf("checks %s, want HTTPS, h2 and plain HTTP of /1k and /1m", got)
	}
	if _, err := e.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	res := runGen(t, e, p, gen.Config{URL: "http://x/100k", Connections: 2, Duration: 2 * time.Second, Requests: 100})
	if res.OK != 100 || res.TLS != nil {
		t.Errorf("http://…/100k from nginx-files: %d ok of 100, tls %+v, errors %v", res.OK, res.TLS, res.Errors)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}

	s, err := e.StartServe(ctx, certs.P256, proxy.Features{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile().Features.TLS {
		t.Errorf("serve over http: features %v, want no TLS", s.Profile().Features)
	}
	checks, err = s.CheckBodiesDetail(ctx)
	if err != nil || len(checks) != 2 || checks[0].Proto != protoHTTP {
		t.Errorf("serve over http: checks %+v, %v; want the two plain-HTTP ones", checks, err)
	}
	res = runGen(t, e, s, gen.Config{URL: "http://x/1k", Connections: 2, Duration: 2 * time.Second, Requests: 100})
	if res.OK != 100 || res.TLS != nil {
		t.Errorf("http://…/1k from loadlab serve: %d ok of 100, tls %+v, errors %v", res.OK, res.TLS, res.Errors)
	}
}

// caddy-respond is ready on its fixed body, and its checks compare with it.
func TestFixedBodyOrigin(t *testing.T) {
	realLab(t)
	installedProfile(t, "caddy-respond")
	e := openSession(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "caddy-respond", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := p.CheckBodiesDetail(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.OK || c.Bytes != len("hello") {
			t.Errorf("%s: %+v, want hello", c.Key(), c)
		}
	}
}
