package plan

import (
	"strings"
	"testing"
)

func checkText(t *testing.T, text string) (*Plan, error) {
	t.Helper()
	p, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p, p.Check()
}

// A scenario without profiles runs on the plan's profiles of its role;
// size picks the path, scheme defaults to https.
func TestRolesSizeScheme(t *testing.T) {
	p, err := checkText(t, `
name: p
profiles: [nginx-stock, nginx-files, caddy-files]
scenarios:
  - name: proxied
    kind: keepalive-1k
    size: 100k
    scheme: http
  - name: files
    role: origin
    kind: keepalive-1k
    method: closed
    size: 1k
  - kind: file-1m
    role: origin
    profiles: [caddy-files]
`)
	if err != nil {
		t.Fatal(err)
	}
	px, files, big := &p.Scenarios[0], &p.Scenarios[1], &p.Scenarios[2]
	if px.Path != "/100k" || px.Scheme != SchemeHTTP || px.Role != RoleProxy || files.Path != "/1k" || files.Scheme != SchemeHTTPS || files.Role != RoleOrigin || big.Path != "/1m" {
		t.Fatalf("resolved: proxied %s %s %s, files %s %s %s, file-1m %s", px.Path, px.Scheme, px.Role, files.Path, files.Scheme, files.Role, big.Path)
	}
	runs := func(s *Scenario) (out []string) {
		for _, n := range p.Profiles {
			if p.RunsOn(s, n) {
				out = append(out, n)
			}
		}
		return out
	}
	if got := strings.Join(runs(px), ","); got != "nginx-stock" {
		t.Errorf("proxy scenario runs on %s, want nginx-stock", got)
	}
	if got := strings.Join(runs(files), ","); got != "nginx-files,caddy-files" {
		t.Errorf("origin scenario runs on %s, want nginx-files,caddy-files", got)
	}
	if got := strings.Join(runs(big), ","); got != "caddy-files" {
		t.Errorf("origin scenario with profiles runs on %s, want caddy-files", got)
	}
	// show's output parses again: size without the path it picked
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(out)
	if err != nil {
		t.Fatalf("marshalled plan does not parse: %v\n%s", err, out)
	}
	if err := q.Check(); err != nil || q.Scenarios[0].Path != "/100k" || q.Scenarios[0].Scheme != SchemeHTTP {
		t.Fatalf("round trip: %v, %+v", err, q.Scenarios[0])
	}
	// narrowing to proxies drops the origin scenarios with a note
	if err := p.Narrow(Selection{Profiles: []string{"nginx-stock"}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) != 1 || !strings.Contains(strings.Join(p.Notes, " "), "scenario files dropped: none of the selected profiles nginx-stock is of its role (origin)") {
		t.Errorf("after --profiles nginx-stock: %v, notes %v", p.ScenarioNames(), p.Notes)
	}
}

// Naming a profile of the other role fails validation with the profiles
// that fit; so do a bad size, scheme or role, and size with path.
func TestRoleAndTargetErrors(t *testing.T) {
	head := "name: p\nprofiles: [nginx-stock, caddy-stock, nginx-files, caddy-respond]\nscenarios:\n"
	for _, c := range []struct{ scen, want string }{
		{"  - kind: keepalive-1k\n    role: origin\n    profiles: [nginx-stock]\n",
			"scenarios[0] (keepalive-1k): profile nginx-stock is a proxy, but this scenario's role is origin: the origin profiles of the plan are nginx-files, caddy-respond"},
		{"  - kind: keepalive-1k\n    profiles: [caddy-respond]\n",
			"scenarios[0] (keepalive-1k): profile caddy-respond is an origin, but this scenario's role is proxy: the proxy profiles of the plan are nginx-stock, caddy-stock, or set role: origin"},
		{"  - kind: keepalive-1k\n    size: 1k\n    path: /1k\n", "size 1k and path /1k are both set: size picks the path (/1k), so keep one"},
		{"  - kind: keepalive-1k\n    size: 2k\n", "size \"2k\": use one of 1k, 100k, 1m"},
		{"  - kind: keepalive-1k\n    scheme: ftp\n", "scheme \"ftp\": use https or http"},
		{"  - kind: handshake\n    scheme: http\n", "scheme http with kind handshake: handshake needs TLS"},
		{"  - kind: h3\n    scheme: http\n", "scheme http with kind h3"},
		{"  - kind: keepalive-1k\n    role: server\n", "role \"server\": use proxy (forwards to the backend) or origin"},
	} {
		_, err := checkText(t, head+c.scen)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n  err  %v\n  want %s", c.scen, err, c.want)
		}
	}
	_, err := checkText(t, "name: p\nprofiles: [nginx-stock]\nscenarios:\n  - kind: keepalive-1k\n    role: origin\n")
	if want := "no profiles of role origin to run on: the plan has no origin profile; add one of caddy-files, caddy-respond, h2o-files, lighttpd-files, nginx-files, nginx-files-nosendfile to its profiles"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("origin scenario in a proxy-only plan: %v, want %s", err, want)
	}
}
