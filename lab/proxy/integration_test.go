package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"github.com/loadlab/loadlab/internal/testutil"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// readyTimeout bounds a proxy's start in tests.
const readyTimeout = 30 * time.Second

// proxyClient returns an HTTPS client that dials the proxy's listener for
// any URL, sends SNI serverName and speaks h2 when h2 is set (else
// HTTP/1.1). It keeps at most one connection open.
func proxyClient(p Params, h2 bool) *http.Client {
	addr := hostPort(p.ListenHost, p.HTTPSPort)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{
			ServerName:         p.ServerName,
			InsecureSkipVerify: true, // test cert; Ready checks the leaf
			NextProtos:         []string{"http/1.1"},
		},
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		ForceAttemptHTTP2:   h2,
	}
	if h2 {
		tr.TLSClientConfig.NextProtos = []string{"h2", "http/1.1"}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// fetch GETs ReadyPath through the proxy with the given Host header and
// returns the status, protocol and body hash.
func fetch(c *http.Client, host string) (status int, proto string, sum [32]byte, n int, err error) {
	req, err := http.NewRequest(http.MethodGet, "https://"+host+ReadyPath, nil)
	if err != nil {
		return 0, "", sum, 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", sum, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Proto, sha256.Sum256(body), len(body), err
}

// Each installed profile starts, becomes ready, and serves the backend's
// /1k byte-identical over HTTPS (HTTP/1.1 and h2) with the site's SNI and
// Host, for an ECDSA P-256 and an RSA-2048 certificate.
func TestProxiesServeBackendBody(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real proxies")
	}
	certDir := t.TempDir()
	backend := startStandInBackend(t)
	want := sha256.Sum256(backend.Body)
	for _, kind := range []string{"p256", "rsa2048"} {
		cert := writeTestCert(t, certDir, kind)
		for _, prof := range profilesOf(RoleProxy) {
			t.Run(kind+"/"+prof.Name, func(t *testing.T) {
				path := installed(t, prof)
				p := startReady(t, prof, path, cert, backend.Port)
				protos := []bool{false}
				if prof.Features.H2 {
					protos = append(protos, true)
				}
				for _, h2 := range protos {
					c := proxyClient(p, h2)
					// Host as a client with -host sends it, and as a URL
					// with the port puts it.
					for _, host := range []string{p.ServerName, hostPort(p.ServerName, p.HTTPSPort)} {
						status, proto, sum, n, err := fetch(c, host)
						if err != nil {
							t.Fatalf("GET %s with Host %s (h2 %v): %v", ReadyPath, host, h2, err)
						}
						if status != 200 || sum != want {
							t.Errorf("Host %s over %s: status %d, %d bytes sha256 %s; want 200, %d bytes sha256 %s",
								host, proto, status, n, shortHash(sum), len(backend.Body), shortHash(want))
						}
						if wantMajor := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2]; proto != wantMajor {
							t.Errorf("Host %s: response over %s, want %s", host, proto, wantMajor)
						}
					}
					c.CloseIdleConnections()
				}
				if got := udpBound(t, p.HTTPSPort); got != prof.Features.H3 {
					t.Errorf("UDP port %d bound = %v, but Features.H3 = %v", p.HTTPSPort, got, prof.Features.H3)
				}
			})
		}
	}
}

// connectionBehaviour is what a profile does with backend connections over
// sequential keep-alive requests from one client connection.
type connectionBehaviour struct {
	perRequest bool   // a new backend connection per request
	proto      string // protocol the backend sees
	closeHdr   bool   // Connection: close sent to the backend
}

var wantBehaviour = map[string]connectionBehaviour{
	"nginx-stock":        {perRequest: true, proto: "HTTP/1.1"},
	"nginx-stock-1.22":   {perRequest: true, proto: "HTTP/1.0", closeHdr: true},
	"nginx-npm":          {perRequest: true, proto: "HTTP/1.1"},
	"nginx-keepalive":    {proto: "HTTP/1.1"},
	"nginx-keepalive128": {proto: "HTTP/1.1"},
	"caddy-stock":        {proto: "HTTP/1.1"},
	"caddy-pool128":      {proto: "HTTP/1.1"},
	"haproxy":            {proto: "HTTP/1.1"},
	"traefik":            {proto: "HTTP/1.1"},
	"h2o":                {proto: "HTTP/1.1"},
	"apache2":            {proto: "HTTP/1.1"},
	// lighttpd's mod_proxy keeps no backend connection: Connection: close
	// on each (with upgrade, for a websocket).
	"lighttpd": {perRequest: true, proto: "HTTP/1.1", closeHdr: true},
}

// The lab's key claim (seed 003): a bare proxy_pass opens one backend
// connection per request and nginx closes it (TIME_WAIT on the proxy's
// side), while an upstream keepalive pool reuses a handful. 200 sequential
// requests over one keep-alive client connection, accepted backend
// connections counted at the stand-in backend.
func TestBackendConnectionReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real proxies")
	}
	const requests = 200
	cert := writeTestCert(t, t.TempDir(), "p256")
	for _, prof := range profilesOf(RoleProxy) {
		t.Run(prof.Name, func(t *testing.T) {
			want, ok := wantBehaviour[prof.Name]
			if !ok {
				t.Fatalf("no expected connection behaviour for %s: add it to wantBehaviour", prof.Name)
			}
			path := installed(t, prof)
			backend := startStandInBackend(t) // own port: TIME_WAIT counts are per profile
			p := startReady(t, prof, path, cert, backend.Port)
			twBackend0, twProxy0 := tcpTimeWait(t, backend.Port)
			before := backend.accepted.Load()
			c := proxyClient(p, false)
			defer c.CloseIdleConnections()
			for i := 0; i < requests; i++ {
				status, _, _, n, err := fetch(c, p.ServerName)
				if err != nil || status != 200 || n != ReadySize {
					t.Fatalf("request %d: status %d, %d bytes, %v", i, status, n, err)
				}
			}
			accepted := backend.accepted.Load() - before
			time.Sleep(200 * time.Millisecond) // let the last close land
			twBackend, twProxy := tcpTimeWait(t, backend.Port)
			twBackend -= twBackend0
			twProxy -= twProxy0
			proto, conn, host := backend.last()
			t.Logf("%s: %d requests -> %d new backend connections (%d since start); TIME_WAIT proxy side %d, backend side %d; backend saw %s, Connection %q, Host %q",
				prof.Name, requests, accepted, backend.accepted.Load(), twProxy, twBackend, proto, conn, host)

			if want.perRequest {
				if accepted < requests {
					t.Errorf("%d backend connections for %d requests, want one per request", accepted, requests)
				}
			} else if total := backend.accepted.Load(); total < 1 || total > 8 {
				// Counted since start: the readiness probe's connection may be the one reused.
				t.Errorf("%d backend connections since start for %d sequential requests, want a reused handful", total, requests)
			}
			if proto != want.proto {
				t.Errorf("backend saw %s, want %s", proto, want.proto)
			}
			if gotClose := conn == "close"; gotClose != want.closeHdr {
				t.Errorf("backend saw Connection %q, want close = %v", conn, want.closeHdr)
			}
			// Without Connection: close the backend never closes first, so
			// every TIME_WAIT socket is on the proxy's side (seed 003).
			if want.perRequest && !want.closeHdr && twProxy < requests*9/10 {
				t.Errorf("TIME_WAIT on the proxy side %d, want about %d (nginx closes each backend connection)", twProxy, requests)
			}
		})
	}
}

// Ready fails (and says where the logs are) when nothing listens.
func TestReadyTimesOut(t *testing.T) {
	c := writeTestCert(t, t.TempDir(), "p256")
	p := testParams(t, c, 9)
	p.HTTPSPort = testutil.RefusedPort(t) // nothing listens there
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	prof, _ := Get("nginx-stock")
	err := prof.Ready(ctx, p)
	if err == nil {
		t.Fatal("Ready succeeded with no proxy listening")
	}
	if want := fmt.Sprintf("see the logs in %s", p.Dir); !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to mention %q", err, want)
	}
}
