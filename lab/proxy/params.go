package proxy

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Params are what the lab gives a rendering: where to listen, where the
// backend is, which certificate to serve, how big the server may grow and
// whom it serves as. Data derives the template parameters from them.
type Params struct {
	Binary      string // the server binary, absolute (Profile.Find)
	Dir         string // per-run directory (0700): configs, logs and pid file go here
	ListenHost  string // address the server listens on, e.g. 127.0.0.1
	HTTPPort    int    // plain HTTP listener
	HTTPSPort   int    // TLS listener (TCP), and HTTP/3 (UDP) where supported
	BackendHost string // backend IP literal
	BackendPort int    // backend plain HTTP port
	// Routes are the hostnames the server answers and the backend of each
	// (host:port); nil: one route, ServerName to the backend.
	Routes []Route

	CertFile    string // PEM certificate chain (leaf first)
	KeyFile     string // PEM private key
	CombinedPEM string // chain and key in one PEM (HAProxy)
	CAFile      string // the lab's CA certificate (PEM); "" if none
	KeyType     string // the certificate's key type: p256, rsa2048, rsa4096
	ServerName  string // Host and SNI the site answers
	Root        string // origins: the document root the lab filled (WriteFiles); proxies ignore it
	Workers     int    // CPUs the server has: HAProxy nbthread, h2o num-threads; 0 = the server's default. nginx keeps worker_processes auto, which on 1.22 counts the machine's online CPUs, not its cpuset (checked with taskset)
	MaxConn     int    // connection cap (nginx worker_connections, HAProxy maxconn); 0 = DefaultMaxConn
	// User is the user the server serves as when the lab runs as root:
	// the lab's proxy user ("root" with proxy user root); "" when the lab
	// is not root and nothing switches. A profile with user: root is
	// started as root and its config hands this user to the server
	// (nginx's user directive); one with user: lab is started as it.
	User string
}

// Route is one hostname the server answers and the backend it forwards
// it to. Host and Backend are what the lab gives; BackendHost and
// BackendPort are Backend split, for templates that need them apart
// (Nginx Proxy Manager's set $server/$port).
type Route struct {
	Host        string // the Host (and SNI) of the route
	Backend     string // host:port of its backend, IPv6 bracketed
	BackendHost string // its IP as in a URL (IPv6 bracketed); filled from Backend
	BackendIP   string // its IP, IPv6 unbracketed (lighttpd's proxy.server host); filled from Backend
	BackendPort int    // its port; filled from Backend
}

// DefaultMaxConn is the connection cap used when Params.MaxConn is 0.
const DefaultMaxConn = 4096

// configDangerous are characters that would break out of a config value in
// one of the servers' syntaxes.
const configDangerous = " \t\r\n\"'`;{}#$\\"

// validate checks the fields every server uses and returns a one-line
// error naming the bad field.
func (p Params) validate() error {
	if p.Dir == "" || !filepath.IsAbs(p.Dir) {
		return fmt.Errorf("proxy params: Dir %q must be an absolute directory", p.Dir)
	}
	for _, f := range []struct{ name, v string }{
		{"Dir", p.Dir}, {"ListenHost", p.ListenHost}, {"BackendHost", p.BackendHost},
		{"CertFile", p.CertFile}, {"KeyFile", p.KeyFile}, {"CombinedPEM", p.CombinedPEM}, {"CAFile", p.CAFile},
		{"KeyType", p.KeyType}, {"ServerName", p.ServerName}, {"User", p.User}, {"Root", p.Root},
	} {
		if strings.ContainsAny(f.v, configDangerous) {
			return fmt.Errorf("proxy params: %s %q contains a space, quote or config syntax character: use a plain path or name", f.name, f.v)
		}
	}
	if p.ListenHost == "" {
		return fmt.Errorf("proxy params: ListenHost is empty: give an address such as 127.0.0.1")
	}
	if net.ParseIP(p.BackendHost) == nil {
		// With variables in proxy_pass (nginx-npm) nginx resolves names at
		// run time and would need a resolver; an IP literal needs none.
		return fmt.Errorf("proxy params: BackendHost %q must be an IP address", p.BackendHost)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"HTTPPort", p.HTTPPort}, {"HTTPSPort", p.HTTPSPort}, {"BackendPort", p.BackendPort}} {
		if f.v < 1 || f.v > 65535 {
			return fmt.Errorf("proxy params: %s %d is not a TCP port (1-65535)", f.name, f.v)
		}
	}
	if p.HTTPPort == p.HTTPSPort {
		return fmt.Errorf("proxy params: HTTPPort and HTTPSPort are both %d: give two ports", p.HTTPPort)
	}
	if p.CertFile == "" || p.KeyFile == "" || p.CombinedPEM == "" {
		return fmt.Errorf("proxy params: CertFile, KeyFile and CombinedPEM are required: create them with loadlab certs")
	}
	if !validServerName(p.ServerName) {
		return fmt.Errorf("proxy params: ServerName %q is not a DNS name such as bench.lab", p.ServerName)
	}
	for i, r := range p.Routes {
		if !validServerName(r.Host) {
			return fmt.Errorf("proxy params: Routes[%d].Host %q is not a DNS name such as app01.lab.test", i, r.Host)
		}
		if _, _, err := net.SplitHostPort(r.Backend); err != nil || strings.ContainsAny(r.Backend, configDangerous) {
			return fmt.Errorf("proxy params: Routes[%d].Backend %q is not host:port", i, r.Backend)
		}
	}
	if p.Workers < 0 || p.MaxConn < 0 {
		return fmt.Errorf("proxy params: Workers %d and MaxConn %d must not be negative", p.Workers, p.MaxConn)
	}
	return nil
}

// validServerName reports whether s is a plain DNS name (letters, digits,
// hyphens and dots), which every server's host matcher accepts unquoted.
func validServerName(s string) bool {
	if s == "" || len(s) > 253 || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
		return false
	}
	for _, r := range s {
		ok := r == '.' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// hostPort joins host and port, bracketing IPv6 literals.
func hostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// urlHost returns host as it appears in a URL: IPv6 literals in brackets.
func urlHost(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// fdReserve is what a server needs beyond two descriptors per connection
// (listeners, pollers, logs): MaxConnFD's margin.
const fdReserve = 200

// openFileLimit is the soft open-file limit of this process, which the
// servers it starts inherit (a variable for the golden configs).
var openFileLimit = func() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the open-file limit: %v", err)
	}
	return rl.Cur, nil
}

// maxConnFD is the largest connection count the open-file limit holds at
// two descriptors per connection (client and backend side) plus fdReserve.
func maxConnFD() (int, error) {
	cur, err := openFileLimit()
	if err != nil {
		return 0, err
	}
	cur = min(cur, 1<<24) // unlimited or huge: the servers' own caps apply
	n := (int64(cur) - fdReserve) / 2
	if n < 1 {
		return 0, fmt.Errorf("open-file limit %d is too low for a proxy: raise ulimit -n", cur)
	}
	return int(n), nil
}
