package plan

import (
	"strings"
	"testing"
	"time"
)

// A hosts scenario is seed 001's method unless it says otherwise: twenty
// named backends, a closed loop of 50 connections over plain HTTP, 3 runs
// of 30 s, the first app's host; backends stays 0 (one backend, as
// before) in the other kinds, so their plan hash is unchanged.
func TestHostsDefaults(t *testing.T) {
	p, err := checkText(t, `
name: p
profiles: [nginx-npm, caddy-stock]
scenarios:
  - kind: hosts
  - name: hosts-spread
    kind: hosts
    backends: 5
    spread: true
    duration: 6s
  - name: hosts-app07
    kind: hosts
    host: app07.lab.test
  - kind: keepalive-1k
  - name: ka-routed
    kind: keepalive-1k
    backends: 3
`)
	if err != nil {
		t.Fatal(err)
	}
	h, spread, app7, ka, routed := &p.Scenarios[0], &p.Scenarios[1], &p.Scenarios[2], &p.Scenarios[3], &p.Scenarios[4]
	if h.Method != MethodClosed || h.Connections != 50 || h.Runs != 3 || h.Duration.D() != 30*time.Second || h.Scheme != SchemeHTTP || h.Path != "/1k" || h.Backends != 20 {
		t.Errorf("hosts resolved to %s, %d connections, %d runs of %v, %s %s, %d backends; want seed 001's method", h.Method, h.Connections, h.Runs, h.Duration, h.Scheme, h.Path, h.Backends)
	}
	for _, c := range []struct {
		s     *Scenario
		named int
		host  string
	}{{h, 20, "app01.lab.test"}, {spread, 5, "app01.lab.test"}, {app7, 20, "app07.lab.test"}, {ka, 0, ""}, {routed, 3, "app01.lab.test"}} {
		if n, host := c.s.NamedBackends(), c.s.HostHeader(); n != c.named || host != c.host {
			t.Errorf("%s: %d named backends, host %q; want %d, %q", c.s.Name, n, host, c.named, c.host)
		}
	}
	if ka.Backends != 0 || ka.Scheme != SchemeHTTPS {
		t.Errorf("keepalive-1k: backends %d, scheme %s; want 0 (one backend) and https", ka.Backends, ka.Scheme)
	}
}

func TestHostsRefused(t *testing.T) {
	for _, c := range []struct{ scenario, want string }{
		{"kind: hosts\n    backends: 1001", "backends must be 1 to 1000"},
		{"kind: hosts\n    host: app21.lab.test", `host "app21.lab.test" is not a routed host: use one of app01.lab.test to app20.lab.test`},
		{"kind: hosts\n    host: bench.lab", "is not a routed host"},
		{"kind: keepalive-1k\n    host: app01.lab.test", "needs named backends"},
		{"kind: hosts\n    backends: 1\n    spread: true", "spread: true needs two backends or more"},
		{"kind: keepalive-1k\n    spread: true", "spread: true needs two backends or more"},
		{"kind: hosts\n    spread: true\n    host: app02.lab.test", "keep one"},
		{"kind: h3\n    backends: 4\n    spread: true", "one request line"},
		{"kind: keepalive-1k\n    role: origin\n    backends: 4\n    profiles: [nginx-files]", "need role proxy"},
	} {
		text := "name: p\nprofiles: [nginx-npm, caddy-stock, nginx-files]\nscenarios:\n  - " + c.scenario + "\n"
		_, err := checkText(t, text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", strings.ReplaceAll(c.scenario, "\n    ", "; "), err, c.want)
		}
	}
}

// The seed-001 plan is seed 001's method at full length: twenty backends,
// 50 connections for 30 s, three runs, over plain HTTP to the first app,
// then spread over every host; idle memory after ten minutes quiet,
// twenty readings 30 s apart, under 2 GiB; Caddy, Traefik and NPM's shape
// with HAProxy; every seed-001 row cited per profile.
func TestSeed001Method(t *testing.T) {
	p, err := Load("seed-001")
	if err != nil {
		t.Fatal(err)
	}
	if m := p.IdleMemory; m.Quiet.D() != 10*time.Minute || m.Samples != 20 || m.Every.D() != 30*time.Second || p.MemoryLimit != 2<<30 || p.Net != NetNetns {
		t.Errorf("idle memory %+v, memory limit %d, net %s: want 10 min quiet, 20 readings 30 s apart, 2 GiB, netns", m, p.MemoryLimit, p.Net)
	}
	if got := strings.Join(p.Profiles, ","); got != "caddy-stock,traefik,nginx-npm,haproxy" {
		t.Errorf("profiles %s", got)
	}
	if len(p.Scenarios) != 2 {
		t.Fatalf("scenarios %d, want hosts and hosts-spread", len(p.Scenarios))
	}
	for i, s := range p.Scenarios {
		if s.Kind != KindHosts || s.Method != MethodClosed || s.NamedBackends() != 20 || s.Connections != 50 || s.Runs != 3 || s.Duration.D() != 30*time.Second || s.Scheme != SchemeHTTP || s.Spread != (i == 1) || s.Eff.Rounds != 1 {
			t.Errorf("%s: %+v is not seed 001's method", s.Name, s)
		}
	}
	if h := p.Scenarios[0].HostHeader(); h != "app01.lab.test" {
		t.Errorf("host %s", h)
	}
	want := map[string]bool{"hosts-idle-memory": true, "hosts-rate": true, "hosts-p99": true, "hosts-502": true, "config-lines": true, "h3-build": true, "restart": true}
	for _, s := range p.Seeds {
		if s.Seed != "001" || !want[s.Finding] {
			t.Errorf("seed %s %s is not one of seed 001's rows", s.Seed, s.Finding)
		}
		delete(want, s.Finding)
	}
	if len(want) > 0 {
		t.Errorf("seed 001's rows not cited: %v", want)
	}
}
