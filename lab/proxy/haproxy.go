package proxy

import (
	"fmt"
	"path/filepath"
	"regexp"
	"syscall"
)

// haproxyOptions select the proxy lines of haproxy.cfg.tmpl.
type haproxyOptions struct {
	HTTPReuse string // http-reuse mode: never, safe (default), aggressive, always
}

type haproxyData struct {
	base
	haproxyOptions
	RunAs string // global user, set only when HAProxy starts as root and Params.User is set
}

// haproxyFDReserve is what HAProxy needs beyond two descriptors per
// connection (listeners, pollers, logs).
const haproxyFDReserve = 200

var haproxyVersionRe = regexp.MustCompile(`HAProxy version (\S+)`)

func haproxyProfiles() []Profile {
	return []Profile{
		haproxyProfile("haproxy",
			"Debian HAProxy 2.6 near stock: TLS with alpn h2,http/1.1, http-reuse safe (its default) pools backend connections, nbthread = Workers",
			haproxyOptions{HTTPReuse: "safe"}),
	}
}

func haproxyProfile(name, desc string, opt haproxyOptions) Profile {
	return Profile{
		Name:        name,
		Proxy:       "haproxy",
		Role:        RoleProxy,
		Description: desc,
		Features:    Features{TLS: true, H2: true}, // Debian's build has no QUIC
		Find:        func() (string, error) { return FindBinary("haproxy") },
		Version: func(path string) (string, error) {
			return commandVersion("haproxy", path, haproxyVersionRe, "-v")
		},
		Render: func(p Params) (map[string][]byte, error) { return renderHAProxy(name, desc, opt, p) },
		Command: func(path string, p Params) []string {
			return []string{path, "-db", "-f", filepath.Join(p.Dir, "haproxy.cfg")}
		},
		Check: func(path string, p Params) []string {
			return []string{path, "-c", "-q", "-f", filepath.Join(p.Dir, "haproxy.cfg")}
		},
		StopSignal: syscall.SIGTERM, // hard stop; SIGUSR1 would drain
		Ready:      httpsReady,
	}
}

func renderHAProxy(name, desc string, opt haproxyOptions, p Params) (map[string][]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if p.CombinedPEM == "" {
		return nil, fmt.Errorf("%s: CombinedPEM is required (HAProxy loads chain and key from one file): create it with loadlab certs", name)
	}
	d := haproxyData{base: newBase(name, desc, p), haproxyOptions: opt}
	limit, err := haproxyMaxConnLimit()
	if err != nil {
		return nil, err
	}
	switch {
	case p.MaxConn == 0 && d.MaxConnN > limit:
		d.MaxConnN = limit
	case d.MaxConnN > limit:
		return nil, fmt.Errorf("%s: MaxConn %d needs about %d file descriptors but the open-file limit allows maxconn %d: lower MaxConn or raise ulimit -n", name, d.MaxConnN, 2*d.MaxConnN+haproxyFDReserve, limit)
	}
	if p.User != "" {
		if isRoot() {
			d.RunAs = p.User
		} else if err := p.rejectOtherUser("haproxy started without root"); err != nil {
			return nil, err
		}
	}
	conf, err := execTemplate("haproxy.cfg.tmpl", d)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"haproxy.cfg": conf}, nil
}

// haproxyMaxConnLimit is the largest maxconn the soft open-file limit of
// this process (inherited by the proxy) can hold.
func haproxyMaxConnLimit() (int, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the open-file limit: %v", err)
	}
	cur := rl.Cur
	if cur > 1<<24 { // unlimited or huge: HAProxy's own caps apply
		cur = 1 << 24
	}
	n := (int64(cur) - haproxyFDReserve) / 2
	if n < 1 {
		return 0, fmt.Errorf("open-file limit %d is too low for HAProxy: raise ulimit -n", rl.Cur)
	}
	return int(n), nil
}
