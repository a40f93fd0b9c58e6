package proxy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sampleParams are fixed Params for rendering without binaries.
func sampleParams() Params {
	return Params{
		Dir: "/tmp/loadlab-run", ListenHost: "127.0.0.1", HTTPPort: 8080, HTTPSPort: 8443,
		BackendHost: "127.0.0.1", BackendPort: 9000,
		CertFile: "/certs/fullchain.pem", KeyFile: "/certs/key.pem", CombinedPEM: "/certs/combined.pem",
		ServerName: "bench.lab", Workers: 2, MaxConn: 2048, Root: "/srv/loadlab-www",
		Binary: "/usr/sbin/proxy", KeyType: "p256",
	}
}

// render renders profile name with p and returns file -> text.
func render(t *testing.T, name string, p Params) map[string]string {
	t.Helper()
	prof, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	files, err := prof.Render(p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := map[string]string{}
	for k, v := range files {
		out[k] = string(v)
	}
	return out
}

func mustContain(t *testing.T, what, text string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(text, l) {
			t.Errorf("%s: missing %q in:\n%s", what, l, text)
		}
	}
}

// mustNotContain checks the directives of text: comment lines (#) are
// skipped, since they may name what a profile leaves out.
func mustNotContain(t *testing.T, what, text string, lines ...string) {
	t.Helper()
	var directives []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			directives = append(directives, l)
		}
	}
	code := strings.Join(directives, "\n")
	for _, l := range lines {
		if strings.Contains(code, l) {
			t.Errorf("%s: unexpected %q in:\n%s", what, l, text)
		}
	}
}

func TestRenderNginxCommon(t *testing.T) {
	for _, name := range []string{"nginx-stock", "nginx-stock-1.22", "nginx-keepalive", "nginx-keepalive128", "nginx-npm"} {
		conf := render(t, name, sampleParams())["nginx.conf"]
		mustContain(t, name, conf,
			"worker_processes auto;",
			"worker_connections 2048;",
			"access_log off;",
			"ssl_protocols TLSv1.2 TLSv1.3;",
			"listen 127.0.0.1:8080;",
			"listen 127.0.0.1:8443 ssl http2;",
			"server_name bench.lab;",
			"ssl_certificate     /certs/fullchain.pem;",
			"ssl_certificate_key /certs/key.pem;",
			"pid /tmp/loadlab-run/nginx.pid;",
			"error_log /tmp/loadlab-run/error.log",
			"proxy_temp_path /tmp/loadlab-run/proxy_temp;",
		)
		// Defaults stay defaults: no session cache or ticket switches
		// (nginx-npm carries NPM's own session cache lines).
		mustNotContain(t, name, conf, "ssl_session_tickets", "ssl_session_cache off")
	}
}

func TestRenderNginxProxyLines(t *testing.T) {
	stock := render(t, "nginx-stock", sampleParams())["nginx.conf"]
	mustContain(t, "nginx-stock", stock, "proxy_pass http://127.0.0.1:9000/;", "proxy_http_version 1.1;", `proxy_set_header Connection "";`)
	mustNotContain(t, "nginx-stock", stock, "keepalive", "upstream")

	old := render(t, "nginx-stock-1.22", sampleParams())["nginx.conf"]
	mustContain(t, "nginx-stock-1.22", old, "proxy_pass http://127.0.0.1:9000/;")
	mustNotContain(t, "nginx-stock-1.22", locationBlock(t, old, "/"), "proxy_http_version", "Connection", "keepalive", "upstream")
	mustNotContain(t, "nginx-stock-1.22", old, "keepalive", "upstream")

	// Every profile but nginx-npm (whose location / forwards the upgrade
	// headers itself) has a websocket route that does.
	for _, name := range []string{"nginx-stock", "nginx-stock-1.22", "nginx-keepalive", "nginx-keepalive128"} {
		ws := locationBlock(t, render(t, name, sampleParams())["nginx.conf"], "/ws")
		mustContain(t, name+" /ws", ws, "proxy_http_version 1.1;", "proxy_set_header Upgrade $http_upgrade;", `proxy_set_header Connection "upgrade";`)
	}

	for name, n := range map[string]string{"nginx-keepalive": "32", "nginx-keepalive128": "128"} {
		ka := render(t, name, sampleParams())["nginx.conf"]
		mustContain(t, name, ka,
			"upstream backend {", "server 127.0.0.1:9000;", "keepalive "+n+";",
			"proxy_pass http://backend/;", "proxy_http_version 1.1;", `proxy_set_header Connection "";`)
	}

	npm := render(t, "nginx-npm", sampleParams())["nginx.conf"]
	mustContain(t, "nginx-npm", npm,
		"set $forward_scheme http;", `set $server         "127.0.0.1";`, "set $port           9000;",
		"proxy_pass       $forward_scheme://$server:$port$request_uri;",
		"proxy_set_header Host $host;", "proxy_set_header X-Forwarded-For    $proxy_add_x_forwarded_for;",
		"proxy_set_header Connection $http_connection;", "proxy_http_version 1.1;")
	mustNotContain(t, "nginx-npm", npm, "keepalive", "upstream", "resolver")
}

// Every profile needs the backend as an IP literal (nginx-npm's variables
// in proxy_pass would need a resolver for a name).
func TestRenderNeedsBackendIP(t *testing.T) {
	p := sampleParams()
	p.BackendHost = "backend.lab"
	for _, prof := range All() {
		if _, err := prof.Render(p); err == nil || !strings.Contains(err.Error(), "IP address") {
			t.Errorf("%s with a host name: err = %v, want an IP address error", prof.Name, err)
		}
	}
	p.BackendHost = "::1"
	conf := render(t, "nginx-npm", p)["nginx.conf"]
	mustContain(t, "nginx-npm ipv6", conf, `set $server         "[::1]";`)
}

func TestRenderIPv6(t *testing.T) {
	p := sampleParams()
	p.ListenHost, p.BackendHost = "::1", "::1"
	mustContain(t, "nginx-stock", render(t, "nginx-stock", p)["nginx.conf"],
		"listen [::1]:8443 ssl http2;", "proxy_pass http://[::1]:9000/;")
	mustContain(t, "caddy-stock", render(t, "caddy-stock", p)["Caddyfile"], "bind ::1", "reverse_proxy [::1]:9000")
	mustContain(t, "haproxy", render(t, "haproxy", p)["haproxy.cfg"], "bind [::1]:8443 ssl", "server app [::1]:9000")
	mustContain(t, "traefik", render(t, "traefik", p)["traefik.yml"], `address: "[::1]:8443"`)
}

func TestRenderCaddy(t *testing.T) {
	stock := render(t, "caddy-stock", sampleParams())["Caddyfile"]
	mustContain(t, "caddy-stock", stock,
		"admin off", "auto_https off", "persist_config off",
		"storage file_system /tmp/loadlab-run/caddy-data",
		"https://bench.lab:8443 {", "http://bench.lab:8080 {", "bind 127.0.0.1",
		"tls /certs/fullchain.pem /certs/key.pem", "reverse_proxy 127.0.0.1:9000")
	mustNotContain(t, "caddy-stock", stock, "keepalive_idle_conns_per_host", "transport")

	pool := render(t, "caddy-pool128", sampleParams())["Caddyfile"]
	mustContain(t, "caddy-pool128", pool, "transport http {", "keepalive_idle_conns_per_host 128")
}

func TestRenderHAProxy(t *testing.T) {
	conf := render(t, "haproxy", sampleParams())["haproxy.cfg"]
	mustContain(t, "haproxy", conf,
		"maxconn 2048", "nbthread 2", "http-reuse safe",
		"bind 127.0.0.1:8080\n",
		"bind 127.0.0.1:8443 ssl crt /certs/combined.pem alpn h2,http/1.1",
		"server app 127.0.0.1:9000")

	p := sampleParams()
	p.Workers = 0
	mustNotContain(t, "haproxy workers 0", render(t, "haproxy", p)["haproxy.cfg"], "nbthread")

	p = sampleParams()
	p.CombinedPEM = ""
	prof, _ := Get("haproxy")
	if _, err := prof.Render(p); err == nil || !strings.Contains(err.Error(), "CombinedPEM") {
		t.Errorf("haproxy without CombinedPEM: err = %v", err)
	}

	// maxconn is lowered to what the open-file limit holds (two
	// descriptors per connection and 200 more); nginx keeps MaxConn.
	defer func(f func() (uint64, error)) { openFileLimit = f }(openFileLimit)
	openFileLimit = func() (uint64, error) { return 1200, nil }
	p = sampleParams()
	mustContain(t, "haproxy at 1200 files", render(t, "haproxy", p)["haproxy.cfg"], "maxconn 500\n")
	mustContain(t, "nginx at 1200 files", render(t, "nginx-stock", p)["nginx.conf"], "worker_connections 2048;")
	p.MaxConn = 0
	openFileLimit = func() (uint64, error) { return 1 << 40, nil }
	mustContain(t, "haproxy default maxconn", render(t, "haproxy", p)["haproxy.cfg"], "maxconn "+strconv.Itoa(DefaultMaxConn)+"\n")
}

func TestRenderTraefik(t *testing.T) {
	files := render(t, "traefik", sampleParams())
	if len(files) != 2 {
		t.Fatalf("traefik rendered %d files, want traefik.yml and traefik-dynamic.yml", len(files))
	}
	mustContain(t, "traefik.yml", files["traefik.yml"],
		`address: "127.0.0.1:8080"`, `address: "127.0.0.1:8443"`, "http3: {}",
		`filename: "/tmp/loadlab-run/traefik-dynamic.yml"`, "checkNewVersion: false")
	mustContain(t, "traefik-dynamic.yml", files["traefik-dynamic.yml"],
		"rule: \"Host(`bench.lab`)\"", `url: "http://127.0.0.1:9000"`,
		`certFile: "/certs/fullchain.pem"`, `keyFile: "/certs/key.pem"`, "tls: {}")
}

func TestRenderH2O(t *testing.T) {
	conf := render(t, "h2o", sampleParams())["h2o.conf"]
	mustContain(t, "h2o", conf,
		"ocsp-update-interval: 0", "num-threads: 2", "max-connections: 2048",
		"pid-file: /tmp/loadlab-run/h2o.pid", `"bench.lab":`,
		`proxy.reverse.url: "http://127.0.0.1:9000/"`, "port: 8443", "certificate-file: /certs/fullchain.pem")
	mustNotContain(t, "h2o without root", conf, "user:")
}

func TestRenderRejectsBadParams(t *testing.T) {
	cases := map[string]func(*Params){
		"relative dir":     func(p *Params) { p.Dir = "run" },
		"no dir":           func(p *Params) { p.Dir = "" },
		"space in path":    func(p *Params) { p.CertFile = "/certs/my cert.pem" },
		"brace in name":    func(p *Params) { p.ServerName = "a}b" },
		"bad server name":  func(p *Params) { p.ServerName = "bench_lab" },
		"no listen host":   func(p *Params) { p.ListenHost = "" },
		"no backend host":  func(p *Params) { p.BackendHost = "" },
		"port 0":           func(p *Params) { p.HTTPPort = 0 },
		"port 70000":       func(p *Params) { p.BackendPort = 70000 },
		"same ports":       func(p *Params) { p.HTTPSPort = p.HTTPPort },
		"no key":           func(p *Params) { p.KeyFile = "" },
		"negative workers": func(p *Params) { p.Workers = -1 },
		"newline":          func(p *Params) { p.Dir = "/tmp/a\nb" },
	}
	for _, prof := range All() {
		for name, mutate := range cases {
			p := sampleParams()
			mutate(&p)
			if _, err := prof.Render(p); err == nil {
				t.Errorf("%s with %s: Render succeeded, want an error", prof.Name, name)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s with %s: error is not one line: %q", prof.Name, name, err)
			}
		}
	}
}

// Params.User reaches the configs of the servers the lab starts as root
// (user: root), which switch users themselves; the others are started as
// that user and name none.
func TestUserParam(t *testing.T) {
	p := sampleParams()
	p.User = "loadlab-user"
	mustContain(t, "nginx user", render(t, "nginx-stock", p)["nginx.conf"], "user loadlab-user;")
	mustContain(t, "haproxy user", render(t, "haproxy", p)["haproxy.cfg"], "user loadlab-user")
	mustContain(t, "h2o user", render(t, "h2o", p)["h2o.conf"], "user: loadlab-user")
	for _, prof := range All() {
		files, err := prof.Render(p)
		if err != nil {
			t.Fatal(err)
		}
		named := false
		for _, text := range files {
			named = named || strings.Contains(string(text), "loadlab-user")
		}
		if named != (prof.User == UserRoot) {
			t.Errorf("%s (user: %s): config names .User = %v", prof.Name, prof.User, named)
		}
	}
}

func TestWriteConfig(t *testing.T) {
	p := sampleParams()
	p.Dir = filepath.Join(t.TempDir(), "new", "run")
	prof, _ := Get("traefik")
	paths, err := WriteConfig(prof, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("wrote %v, want 2 files", paths)
	}
	fi, err := os.Stat(p.Dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("run dir: %v mode %v, want 0700", err, fi.Mode().Perm())
	}
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", path, err)
		}
	}
}

// locationBlock returns the text of nginx's "location PATH { ... }" block.
func locationBlock(t *testing.T, conf, path string) string {
	t.Helper()
	i := strings.Index(conf, "location "+path+" {")
	if i < 0 {
		t.Fatalf("no location %s in:\n%s", path, conf)
	}
	j := strings.Index(conf[i:], "}")
	return conf[i : i+j+1]
}
