package proxy

import (
	"strings"
	"testing"
)

func TestAllProfilesComplete(t *testing.T) {
	want := []string{"apache2", "caddy-files", "caddy-pool128", "caddy-respond", "caddy-stock", "h2o", "h2o-files", "haproxy",
		"lighttpd", "lighttpd-files", "nginx-files", "nginx-files-nosendfile", "nginx-keepalive", "nginx-keepalive128",
		"nginx-npm", "nginx-stock", "nginx-stock-1.22", "traefik"}
	if got := strings.Join(Names(), " "); got != strings.Join(want, " ") {
		t.Fatalf("Names() = %s, want %s", got, strings.Join(want, " "))
	}
	seen := map[string]bool{}
	for _, p := range All() {
		if seen[p.Name] {
			t.Errorf("duplicate profile %s", p.Name)
		}
		seen[p.Name] = true
		if p.Role != RoleProxy && p.Role != RoleOrigin {
			t.Errorf("%s: Role %q, want %s or %s", p.Name, p.Role, RoleProxy, RoleOrigin)
		}
		if p.FixedBody != nil && p.Role != RoleOrigin {
			t.Errorf("%s: a proxy with a fixed body", p.Name)
		}
		if p.Proxy == "" || p.Description == "" || strings.Contains(p.Description, "\n") {
			t.Errorf("%s: Proxy %q, Description %q: want both, description on one line", p.Name, p.Proxy, p.Description)
		}
		if p.Binary == "" || len(p.command) == 0 || len(p.files) == 0 || !p.Source.Builtin || p.Source.SHA256 == "" {
			t.Errorf("%s: binary %q, %d command args, %d files, source %+v", p.Name, p.Binary, len(p.command), len(p.files), p.Source)
		}
		if _, ok := checkArgs[p.Proxy]; !ok && p.Proxy != "traefik" {
			t.Errorf("%s: no config check for %s in the tests", p.Name, p.Proxy)
		}
		if !p.Features.TLS || !p.Features.H2 {
			t.Errorf("%s: every profile serves TLS and h2, got %v", p.Name, p.Features)
		}
		if p.Features.H3 != (p.Proxy == "caddy" || p.Proxy == "traefik") {
			t.Errorf("%s: H3 = %v; only Caddy and Traefik have QUIC here", p.Name, p.Features.H3)
		}
	}
}

func TestGet(t *testing.T) {
	p, err := Get("nginx-keepalive")
	if err != nil || p.Name != "nginx-keepalive" || p.Proxy != "nginx" {
		t.Fatalf("Get(nginx-keepalive) = %s/%s, %v", p.Name, p.Proxy, err)
	}
	_, err = Get("nginx-fast")
	if err == nil {
		t.Fatal("Get(nginx-fast) succeeded")
	}
	for _, n := range Names() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

func TestCommandsUseDir(t *testing.T) {
	p := sampleParams()
	for _, prof := range All() {
		p.Binary = "/bin/" + prof.Proxy
		args, err := prof.Command(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(args) < 2 || args[0] != "/bin/"+prof.Proxy || !strings.Contains(strings.Join(args, " "), p.Dir) {
			t.Errorf("%s: Command = %q, want the binary first and a config in %s", prof.Name, args, p.Dir)
		}
		files, err := prof.Render(p)
		if err != nil {
			t.Fatal(err)
		}
		// The command's config file is one Render writes.
		found := false
		for name := range files {
			if strings.Contains(strings.Join(args, " "), p.Dir+"/"+name) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: Command %q names none of the rendered files", prof.Name, args)
		}
	}
}

func TestFeaturesString(t *testing.T) {
	for f, want := range map[Features]string{{}: "-", {TLS: true, H2: true}: "tls,h2", {TLS: true, H2: true, H3: true}: "tls,h2,h3"} {
		if got := f.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", f, got, want)
		}
	}
}
