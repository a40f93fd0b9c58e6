package proxy

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"syscall"
)

// nginxOptions select the proxy lines of nginx.conf.tmpl.
type nginxOptions struct {
	Upstream           bool // proxy_pass to an upstream block instead of host:port
	Keepalive          int  // keepalive N in the upstream block (idle pool per worker)
	ProxyHTTPVersion11 bool // proxy_http_version 1.1 (1.22 default: 1.0)
	ClearConnection    bool // proxy_set_header Connection "" (1.22 default: close)
	NPMStyle           bool // Nginx Proxy Manager's generated proxy_host shape
}

type nginxData struct {
	base
	nginxOptions
	RunAs     string // user directive, set only when nginx starts as root
	NPMServer string // $server for NPMStyle: the backend IP, IPv6 bracketed
}

var nginxVersionRe = regexp.MustCompile(`nginx/(\S+)`)

func nginxProfiles() []Profile {
	return []Profile{
		nginxProfile("nginx-stock",
			"bare proxy_pass http://host:port/ with nginx >= 1.29.7 defaults (HTTP/1.1, no Connection header, no upstream pool): nginx closes every backend connection, the 28,231-then-502 cliff (seed 003)",
			nginxOptions{ProxyHTTPVersion11: true, ClearConnection: true}),
		nginxProfile("nginx-stock-1.22",
			"bare proxy_pass http://host:port/ with Debian 1.22's own defaults (HTTP/1.0, Connection: close to the backend; seed 003's older-nginx case)",
			nginxOptions{}),
		nginxProfile("nginx-keepalive",
			"upstream block with keepalive 32, proxy_http_version 1.1 and an empty Connection header: backend connections reused (seed 003's fix)",
			nginxOptions{Upstream: true, Keepalive: 32, ProxyHTTPVersion11: true, ClearConnection: true}),
		nginxProfile("nginx-keepalive128",
			"as nginx-keepalive with an idle pool of 128 per worker, sized to 100+ concurrent clients (seed 003)",
			nginxOptions{Upstream: true, Keepalive: 128, ProxyHTTPVersion11: true, ClearConnection: true}),
		nginxProfile("nginx-npm",
			"Nginx Proxy Manager's generated proxy_host: proxy_pass $forward_scheme://$server:$port$request_uri, no upstream keepalive, 502s on port exhaustion (seeds 001, 002)",
			nginxOptions{NPMStyle: true}),
	}
}

func nginxProfile(name, desc string, opt nginxOptions) Profile {
	return Profile{
		Name:        name,
		Proxy:       "nginx",
		Role:        RoleProxy,
		Description: desc,
		Features:    Features{TLS: true, H2: true}, // HTTP/3 needs nginx >= 1.25
		Find:        func() (string, error) { return FindBinary("nginx") },
		Version: func(path string) (string, error) {
			return commandVersion("nginx", path, nginxVersionRe, "-v")
		},
		Render: func(p Params) (map[string][]byte, error) { return renderNginx(name, desc, opt, p) },
		Command: func(path string, p Params) []string {
			return []string{path, "-p", p.Dir, "-c", filepath.Join(p.Dir, "nginx.conf"), "-g", "daemon off;"}
		},
		Check: func(path string, p Params) []string {
			return []string{path, "-t", "-q", "-p", p.Dir, "-c", filepath.Join(p.Dir, "nginx.conf"), "-g", "daemon off;"}
		},
		StopSignal: syscall.SIGTERM, // fast shutdown
		Ready:      httpsReady,
	}
}

func renderNginx(name, desc string, opt nginxOptions, p Params) (map[string][]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	d := nginxData{base: newBase(name, desc, p), nginxOptions: opt}
	if opt.NPMStyle {
		// With variables in proxy_pass nginx resolves names at run time and
		// would need a resolver; an IP literal needs none.
		if net.ParseIP(p.BackendHost) == nil {
			return nil, fmt.Errorf("%s: BackendHost %q must be an IP address (variables in proxy_pass need a resolver for names)", name, p.BackendHost)
		}
		d.NPMServer = urlHost(p.BackendHost)
	}
	var err error
	if d.RunAs, err = p.switchUser("nginx"); err != nil {
		return nil, err
	}
	conf, err := execTemplate("nginx.conf.tmpl", d)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"nginx.conf": conf}, nil
}
