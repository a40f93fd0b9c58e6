package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/watch"
)

// installedProfile skips the test when the profile's binary is missing.
func installedProfile(t *testing.T, name string) {
	t.Helper()
	prof, err := proxy.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prof.Find(); errors.Is(err, proxy.ErrNotFound) {
		t.Skipf("%s not installed: %v", prof.Proxy, err)
	}
}

// runGen runs the generator through Aim.Config with a bounded request count
// and duration.
func runGen(t *testing.T, e *Session, p *Proxy, base gen.Config) *result.Result {
	t.Helper()
	cfg := p.Aim().Config(base)
	cfg.Defaults()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+30*time.Second)
	defer cancel()
	res, err := gen.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("gen.Run %s: %v", cfg.URL, err)
	}
	return res
}

// In netns mode backend, proxy and generator sit in their own namespaces:
// the proxy listens on its namespace address, the generator reaches it
// from the gen namespace through Aim.Config, the proxy reaches the backend
// across the bridge, and TIME_WAIT is counted per namespace. Close removes
// the namespaces.
func TestNetnsCarriesTraffic(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{Net: NetNS})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Addr(), "10.213.0.2:") || !strings.HasPrefix(e.BackendAddr(), "10.213.0.1:") {
		t.Errorf("proxy on %s, backend on %s; want the namespace addresses 10.213.0.2 and .1", p.Addr(), e.BackendAddr())
	}
	if _, err := p.CheckBodies(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := e.BackendStats()
	if err != nil {
		t.Fatal(err)
	}
	res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 4, Duration: 3 * time.Second, Requests: 300})
	after, err := e.BackendStats()
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("through netns: %d ok, errors %v %v, status %v", res.OK, res.Errors, res.ErrorSamples, res.Status)
	}
	// nginx-stock opens one backend connection per request and closes it
	// first: TIME_WAIT piles up in the proxy's namespace.
	if d := after.Requests - before.Requests; d < res.OK {
		t.Errorf("backend served %d requests, generator got %d ok", d, res.OK)
	}
	tw, err := e.TimeWait(RoleProxy)
	if err != nil {
		t.Fatal(err)
	}
	if tw < int(res.OK)/2 {
		t.Errorf("TIME_WAIT in the proxy namespace %d after %d requests through nginx-stock, want about one per request", tw, res.OK)
	}
	t.Logf("netns: %d ok, backend accepted %d, proxy-namespace TIME_WAIT %d", res.OK, after.Accepted-before.Accepted, tw)
	names := nsNames(t)
	if !strings.Contains(names, e.NSPath(RoleProxy)[len("/var/run/netns/"):]) {
		t.Fatalf("ip netns list does not show the proxy namespace: %s", names)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if names := nsNames(t); strings.Contains(names, netPrefix+strconv.Itoa(os.Getpid())+"-") {
		t.Errorf("namespaces left after Close: %s", names)
	}
}

// nsNames lists the named network namespaces.
func nsNames(t *testing.T) string {
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		t.Skipf("ip netns list: %v", err)
	}
	return string(out)
}

// Seed 003's claim made visible through the lab: 500 keep-alive requests
// through nginx-stock open about 500 backend connections (proxy_pass
// without an upstream pool), through nginx-keepalive only a handful.
func TestKeepaliveBackendConnections(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{})
	const requests = 500
	for _, c := range []struct {
		profile  string
		min, max uint64
	}{{"nginx-stock", requests * 95 / 100, requests + 10}, {"nginx-keepalive", 0, 20}} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p, err := e.StartProxy(ctx, c.profile, certs.P256)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.BackendStats()
		if err != nil {
			t.Fatal(err)
		}
		w := p.Watch(200 * time.Millisecond)
		res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 4, Duration: 20 * time.Second, Requests: requests})
		samples := w.Stop()
		after, err := e.BackendStats()
		if err != nil {
			t.Fatal(err)
		}
		// One /_stats connection is counted per stats call.
		accepted := after.Accepted - before.Accepted - 1
		t.Logf("%s: %d ok -> %d new backend connections", c.profile, res.OK, accepted)
		if res.OK != requests {
			t.Errorf("%s: %d ok of %d requests (errors %v)", c.profile, res.OK, requests, res.Errors)
		}
		if accepted < c.min || accepted > c.max {
			t.Errorf("%s: %d new backend connections for %d keep-alive requests, want %d..%d", c.profile, accepted, requests, c.min, c.max)
		}
		checkSamples(t, c.profile, samples, w.Err())
		if c.profile == "nginx-stock" {
			// On loopback TIME_WAIT is counted on the backend's port: nginx
			// closes each backend connection first.
			if tw := samples[len(samples)-1].TimeWait; tw < requests*9/10 {
				t.Errorf("nginx-stock: TIME_WAIT on the backend port %d after %d requests, want about one per request", tw, requests)
			}
		}
		if err := p.Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSamples checks that the watcher saw the proxy's group: memory,
// processes, threads, CPU use, and a TIME_WAIT count.
func checkSamples(t *testing.T, name string, samples []watch.Sample, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: watch: %v", name, err)
	}
	if len(samples) == 0 {
		t.Fatalf("%s: no watch samples", name)
	}
	busy := 0.0
	for _, s := range samples {
		if s.MemCurrent == 0 || s.MemPeak < s.MemCurrent || s.Procs < 1 || s.Threads < s.Procs || s.TimeWait < 0 {
			t.Errorf("%s: sample %+v: want memory, peak >= current, processes, threads and a TIME_WAIT count", name, s)
		}
		busy = max(busy, s.CPUCores)
	}
	if busy <= 0 {
		t.Errorf("%s: no CPU use seen in %d samples while serving", name, len(samples))
	}
}

// Seed 003's cliff in miniature: across veth TIME_WAIT ports are not
// reused, so nginx-stock (a new backend connection per request, closed by
// nginx) runs out of local ports and answers 502, and its error log says
// why. The proxy namespace gets 500 local ports instead of 28,232, so the
// cliff comes after about 500 requests instead of 28,231.
func TestNetnsPortExhaustionCliff(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{Net: NetNS})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	const ports = 500
	err = e.netLab().Do(RoleProxy, func() error {
		return os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40499"), 0o644)
	})
	if err != nil {
		t.Fatalf("narrowing the proxy namespace's port range: %v", err)
	}
	res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 4, Duration: 20 * time.Second, Requests: 3 * ports})
	lines, causes, err := p.ErrorLog()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ok, status %v; error log: %d lines, causes %v", res.OK, res.Status, lines, causes)
	if res.OK < ports*8/10 || res.OK > ports+10 {
		t.Errorf("%d ok before the cliff, want about %d (the port range)", res.OK, ports)
	}
	if res.Status["502"] < ports {
		t.Errorf("%d responses with 502 after the ports ran out, want most of the rest", res.Status["502"])
	}
	if causes["addr_not_avail"] == 0 || lines < causes["addr_not_avail"] {
		t.Errorf("error log causes %v (%d lines), want Cannot assign requested address", causes, lines)
	}
}
