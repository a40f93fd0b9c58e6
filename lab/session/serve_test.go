package session

import (
	"context"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/proxy"
)

// The reference target runs where a proxy would (the proxy's CPUs and
// namespace), serves the backend's bodies over TLS, survives Renew, and the
// generator reaches it through Aim.Config.
func TestServeTarget(t *testing.T) {
	realLab(t)
	e := openSession(t, Options{Net: NetNS})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartServe(ctx, certs.P256, proxy.Features{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Params().ListenHost != "10.213.0.2" || p.Version() != "loadlab serve" {
		t.Errorf("serve target on %s (%s), want the proxy's namespace address", p.Params().ListenHost, p.Version())
	}
	if _, err := p.CheckBodies(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 4, Duration: 2 * time.Second, Requests: 200})
	if res.OK != 200 || res.TLS == nil {
		t.Errorf("against the serve target: %d ok of 200, tls %+v, errors %v", res.OK, res.TLS, res.Errors)
	}
	st, err := p.Stats()
	if err != nil || st.Procs != 1 {
		t.Errorf("serve target's cgroup: %+v, %v; want its one process", st, err)
	}
}

// With H2 the reference target also serves HTTP/2 (serve --h2): the
// generator's h2 runs reach it by ALPN h2.
func TestServeTargetH2(t *testing.T) {
	realLab(t)
	e := openSession(t, Options{Net: NetNS})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartServe(ctx, certs.P256, proxy.Features{H2: true})
	if err != nil {
		t.Fatal(err)
	}
	res := runGen(t, e, p, gen.Config{URL: "/1k", HTTP2: true, Connections: 2, Duration: 2 * time.Second, Requests: 200})
	if res.OK != 200 || res.Protocol != "h2" || res.TLS == nil || res.TLS.ALPN != "h2" {
		t.Errorf("h2 against the serve target: %d ok of 200, protocol %s, tls %+v, errors %v %v", res.OK, res.Protocol, res.TLS, res.Errors, res.ErrorSamples)
	}
}
