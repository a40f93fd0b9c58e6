package proxy

import (
	"path/filepath"
	"regexp"
	"syscall"
)

type h2oData struct {
	base
	RunAs string // user h2o switches to when started as root
}

var h2oVersionRe = regexp.MustCompile(`h2o version (\S+)`)

func h2oProfiles() []Profile {
	const name = "h2o"
	const desc = "Debian h2o 2.2 near stock: proxy.reverse.url with its default backend keep-alive (2 s idle); not in the seeds, a fast C reference"
	return []Profile{{
		Name:        name,
		Proxy:       "h2o",
		Role:        RoleProxy,
		Description: desc,
		Features:    Features{TLS: true, H2: true},
		Find:        func() (string, error) { return FindBinary("h2o") },
		Version: func(path string) (string, error) {
			return commandVersion("h2o", path, h2oVersionRe, "--version")
		},
		Render: func(p Params) (map[string][]byte, error) {
			if err := p.validate(); err != nil {
				return nil, err
			}
			d := h2oData{base: newBase(name, desc, p)}
			// Unset, h2o started as root drops to nobody, who cannot
			// write into the 0700 run directory.
			var err error
			if d.RunAs, err = p.switchUser("h2o"); err != nil {
				return nil, err
			}
			conf, err := execTemplate("h2o.conf.tmpl", d)
			if err != nil {
				return nil, err
			}
			return map[string][]byte{"h2o.conf": conf}, nil
		},
		Command: func(path string, p Params) []string {
			return []string{path, "-c", filepath.Join(p.Dir, "h2o.conf")}
		},
		Check: func(path string, p Params) []string {
			return []string{path, "-t", "-c", filepath.Join(p.Dir, "h2o.conf")}
		},
		StopSignal: syscall.SIGTERM,
		Ready:      httpsReady,
	}}
}
