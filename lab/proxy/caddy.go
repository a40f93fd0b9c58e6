package proxy

import (
	"path/filepath"
	"regexp"
	"syscall"
)

// caddyModule is the Go module a Caddy binary is built from.
const caddyModule = "github.com/caddyserver/caddy/v2"

// caddyOptions select the proxy lines of Caddyfile.tmpl.
type caddyOptions struct {
	IdleConnsPerHost int // transport http keepalive_idle_conns_per_host; 0 = Caddy's default (32)
}

type caddyData struct {
	base
	caddyOptions
}

var caddyVersionRe = regexp.MustCompile(`v?(\d+\.\d+\.\d+\S*)`)

func caddyProfiles() []Profile {
	return []Profile{
		caddyProfile("caddy-stock",
			"Caddy defaults: backend connections reused with an idle pool of 32 per host, past 32 concurrent requests it leaks ports to TIME_WAIT (seed 003); HTTP/3 on (seed 001)",
			caddyOptions{}),
		caddyProfile("caddy-pool128",
			"Caddy with transport http { keepalive_idle_conns_per_host 128 }: seed 003's fix, zero TIME_WAIT at 100 concurrent requests",
			caddyOptions{IdleConnsPerHost: 128}),
	}
}

func caddyProfile(name, desc string, opt caddyOptions) Profile {
	return Profile{
		Name:        name,
		Proxy:       "caddy",
		Role:        RoleProxy,
		Description: desc,
		Features:    Features{TLS: true, H2: true, H3: true},
		Find:        func() (string, error) { return FindBinary("caddy") },
		Version:     caddyVersion,
		Render: func(p Params) (map[string][]byte, error) {
			if err := p.validate(); err != nil {
				return nil, err
			}
			if err := p.rejectOtherUser("caddy"); err != nil {
				return nil, err
			}
			conf, err := execTemplate("Caddyfile.tmpl", caddyData{newBase(name, desc, p), opt})
			if err != nil {
				return nil, err
			}
			return map[string][]byte{"Caddyfile": conf}, nil
		},
		Command: func(path string, p Params) []string {
			return []string{path, "run", "--config", filepath.Join(p.Dir, "Caddyfile"), "--adapter", "caddyfile"}
		},
		Check: func(path string, p Params) []string {
			return []string{path, "validate", "--config", filepath.Join(p.Dir, "Caddyfile"), "--adapter", "caddyfile"}
		},
		StopSignal: syscall.SIGTERM, // graceful stop
		Ready:      httpsReady,
	}
}

// caddyVersion reads the version from the build info (a `go install` build
// answers "unknown" to `caddy version`), else asks `caddy version`.
func caddyVersion(path string) (string, error) {
	if v := goModuleVersion(path, caddyModule); v != "" {
		return "caddy " + trimV(v), nil
	}
	return commandVersion("caddy", path, caddyVersionRe, "version")
}
