package session

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
)

// With Options.Backends the session's one loadlab serve is N named
// backends: each address the session gives answers as its own app, from
// where the proxy sits, and keeps its address across Renew (the
// proxies' configs name it); /_stats counts each app apart; the lab's own
// requests use the first app's host.
func TestNamedBackendsSession(t *testing.T) {
	realLab(t)
	t0 := time.Now()
	for _, net := range []string{NetLoopback, NetNS} {
		t.Run(net, func(t *testing.T) {
			e := openSession(t, Options{Net: net, Backends: 3})
			addrs := e.BackendAddrs()
			if len(addrs) != 3 || addrs[0] != e.BackendAddr() || e.Host() != "app01.lab.test" {
				t.Fatalf("BackendAddrs() = %v (BackendAddr %s), Host %s; want 3 with the backend's first, app01.lab.test", addrs, e.BackendAddr(), e.Host())
			}
			ask := func(from int) {
				t.Helper()
				c := e.plainClientIn(RoleProxy) // the namespaces of now
				for i, a := range addrs {
					if i+1 < from {
						continue
					}
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+a+"/1k", nil)
					resp, err := c.Do(req)
					cancel()
					if err != nil {
						t.Fatalf("%s: %v", a, err)
					}
					resp.Body.Close()
					if got, want := resp.Header.Get(backend.AppHeader), backend.AppName(i+1); resp.StatusCode != 200 || got != want {
						t.Fatalf("GET http://%s/1k: %s, %s %q; want 200 from %s", a, resp.Status, backend.AppHeader, got, want)
					}
				}
			}
			ask(1)
			if _, err := e.Renew(context.Background()); err != nil {
				t.Fatal(err)
			}
			if again := e.BackendAddrs(); !slices.Equal(again, addrs) {
				t.Fatalf("after Renew the backends are at %v, were at %v", again, addrs)
			}
			ask(2)
			st, err := e.BackendStats()
			if err != nil {
				t.Fatal(err)
			}
			// Loopback: one backend across the Renew, which did nothing;
			// app01 served the session's own two body hashes too. Netns:
			// a fresh backend in the fresh namespaces.
			want := []uint64{3, 2, 2}
			if net == NetNS {
				want = []uint64{0, 1, 1}
			}
			if !slices.Equal(st.Apps, want) {
				t.Errorf("/_stats apps %v, want %v", st.Apps, want)
			}
		})
	}
	t.Logf("wall time %s", time.Since(t0).Round(100*time.Millisecond))
}

// plainClientIn is a plain HTTP client dialing from role's namespace (the
// host's in loopback mode).
func (s *Session) plainClientIn(role string) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	if l := s.netLab(); l != nil {
		tr.DialContext = l.DialContext(role, nil)
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Every installed proxy profile in front of 20 named backends: each host
// name reaches its own backend, which names itself (X-Loadlab-Backend),
// over plain HTTP and HTTPS (SNI and Host app NN); a Host no route names
// gets the proxy's own answer, from no app; the checks (bodies over every
// protocol the profile serves, the WebSocket route) pass through the
// first app's host.
func TestHostsRouting(t *testing.T) {
	realLab(t)
	t0 := time.Now()
	e := openSession(t, Options{Net: NetNS, Backends: 20})
	for _, prof := range proxy.All() {
		if prof.IsOrigin() {
			continue
		}
		t.Run(prof.Name, func(t *testing.T) {
			if _, err := prof.Find(); errors.Is(err, proxy.ErrNotFound) {
				t.Skipf("%s not installed: %v", prof.Proxy, err)
			}
			t1 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := e.StartProxy(ctx, prof.Name, certs.P256)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			ask := func(scheme, host string) (int, string) {
				t.Helper()
				c := p.clientFor(scheme, protoH1)
				defer c.CloseIdleConnections()
				req, _ := http.NewRequestWithContext(ctx, "GET", scheme+"://"+host+"/1k", nil)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", scheme, host, err)
				}
				resp.Body.Close()
				return resp.StatusCode, resp.Header.Get(backend.AppHeader)
			}
			for i := 1; i <= 20; i++ {
				for _, scheme := range []string{SchemeHTTP, SchemeHTTPS} {
					if scheme == SchemeHTTPS && i%5 != 1 {
						continue // HTTPS on a few: the TLS handshakes cost more than they tell
					}
					if code, app := ask(scheme, backend.AppHost(i)); code != 200 || app != backend.AppName(i) {
						t.Errorf("%s %s: %d from %q, want 200 from %s", scheme, backend.AppHost(i), code, app, backend.AppName(i))
					}
				}
			}
			code, app := ask(SchemeHTTP, "nope.lab.test")
			if app != "" {
				t.Errorf("Host nope.lab.test: %d from %s, want the proxy's own answer, from no app", code, app)
			}
			checks, err := p.RunChecks(ctx, false)
			if err != nil {
				t.Errorf("checks through %s: %v (%+v)", backend.AppHost(1), err, checks)
			}
			t.Logf("%s: wrong Host answered %d; %s", prof.Name, code, time.Since(t1).Round(10*time.Millisecond))
		})
	}
	t.Logf("wall time %s", time.Since(t0).Round(100*time.Millisecond))
}
