package proxy

import (
	"path/filepath"
	"regexp"
	"syscall"
)

// traefikModule is the Go module a Traefik binary is built from.
const traefikModule = "github.com/traefik/traefik/v3"

// traefikDynamicFile is the file provider's config, next to traefik.yml.
const traefikDynamicFile = "traefik-dynamic.yml"

type traefikData struct {
	base
	DynamicFile string
}

var traefikVersionRe = regexp.MustCompile(`Version:\s+v?(\S+)`)

func traefikProfiles() []Profile {
	const name = "traefik"
	const desc = "Traefik v3 file provider near stock: HTTP/3 once the TLS entrypoint sets http3: {}, backend connections pooled (seeds 001, 002)"
	return []Profile{{
		Name:        name,
		Proxy:       "traefik",
		Role:        RoleProxy,
		Description: desc,
		Features:    Features{TLS: true, H2: true, H3: true},
		Find:        func() (string, error) { return FindBinary("traefik") },
		Version:     traefikVersion,
		Render: func(p Params) (map[string][]byte, error) {
			if err := p.validate(); err != nil {
				return nil, err
			}
			if err := p.rejectOtherUser("traefik"); err != nil {
				return nil, err
			}
			d := traefikData{newBase(name, desc, p), traefikDynamicFile}
			static, err := execTemplate("traefik-static", d)
			if err != nil {
				return nil, err
			}
			dynamic, err := execTemplate("traefik-dynamic", d)
			if err != nil {
				return nil, err
			}
			return map[string][]byte{"traefik.yml": static, traefikDynamicFile: dynamic}, nil
		},
		Command: func(path string, p Params) []string {
			return []string{path, "--configFile=" + filepath.Join(p.Dir, "traefik.yml")}
		},
		Check:      nil, // Traefik has no config-check mode
		StopSignal: syscall.SIGTERM,
		Ready:      httpsReady,
	}}
}

// traefikVersion reads the Traefik module version from the build info of
// the wrapper-module build, else asks `traefik version`.
func traefikVersion(path string) (string, error) {
	if v := goModuleVersion(path, traefikModule); v != "" {
		return "traefik " + trimV(v), nil
	}
	return commandVersion("traefik", path, traefikVersionRe, "version")
}
