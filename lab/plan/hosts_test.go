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
