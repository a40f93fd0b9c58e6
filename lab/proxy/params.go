package proxy

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// Params are what a rendering needs: where to listen, where the backend is,
// which certificate to serve and how big the proxy may grow.
type Params struct {
	Dir         string // per-run directory (0700): configs, logs and pid file go here
	ListenHost  string // address the proxy listens on, e.g. 127.0.0.1
	HTTPPort    int    // plain HTTP listener
	HTTPSPort   int    // TLS listener (TCP), and HTTP/3 (UDP) where supported
	BackendHost string // backend IP (nginx-npm requires an IP literal)
	BackendPort int    // backend plain HTTP port

	CertFile    string // PEM certificate chain (leaf first)
	KeyFile     string // PEM private key
	CombinedPEM string // chain and key in one PEM (HAProxy)

	ServerName string // Host and SNI the site answers
	Root       string // origins: the document root the lab filled (WriteFiles); proxies ignore it
	Workers    int    // CPUs the proxy has: HAProxy nbthread, h2o num-threads; 0 = the proxy's default. nginx keeps worker_processes auto, which on 1.22 counts the machine's online CPUs, not its cpuset (checked with taskset)
	MaxConn    int    // connection cap (nginx worker_connections, HAProxy maxconn); 0 = DefaultMaxConn; must fit the open-file limit
	// User is the user the proxy serves as; "" = the current user. nginx,
	// HAProxy and h2o started as root switch to it through their config (the
	// caller must then make Dir reachable for it); Caddy and Traefik cannot
	// switch, so their Render rejects any user but the current one.
	User string
}

// DefaultMaxConn is the connection cap used when Params.MaxConn is 0.
const DefaultMaxConn = 4096

// configDangerous are characters that would break out of a config value in
// one of the proxies' syntaxes.
const configDangerous = " \t\r\n\"'`;{}#$\\"

// validate checks the fields every proxy uses and returns a one-line error
// naming the bad field.
func (p Params) validate() error {
	if p.Dir == "" || !filepath.IsAbs(p.Dir) {
		return fmt.Errorf("proxy params: Dir %q must be an absolute directory", p.Dir)
	}
	for _, f := range []struct{ name, v string }{
		{"Dir", p.Dir}, {"ListenHost", p.ListenHost}, {"BackendHost", p.BackendHost},
		{"CertFile", p.CertFile}, {"KeyFile", p.KeyFile}, {"CombinedPEM", p.CombinedPEM},
		{"ServerName", p.ServerName}, {"User", p.User},
	} {
		if strings.ContainsAny(f.v, configDangerous) {
			return fmt.Errorf("proxy params: %s %q contains a space, quote or config syntax character: use a plain path or name", f.name, f.v)
		}
	}
	if p.ListenHost == "" {
		return fmt.Errorf("proxy params: ListenHost is empty: give an address such as 127.0.0.1")
	}
	if p.BackendHost == "" {
		return fmt.Errorf("proxy params: BackendHost is empty: give the backend's IP")
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
	if p.CertFile == "" || p.KeyFile == "" {
		return fmt.Errorf("proxy params: CertFile and KeyFile are required: create them with loadlab certs")
	}
	if !validServerName(p.ServerName) {
		return fmt.Errorf("proxy params: ServerName %q is not a DNS name such as bench.lab", p.ServerName)
	}
	if p.Workers < 0 || p.MaxConn < 0 {
		return fmt.Errorf("proxy params: Workers %d and MaxConn %d must not be negative", p.Workers, p.MaxConn)
	}
	return nil
}

// validServerName reports whether s is a plain DNS name (letters, digits,
// hyphens and dots), which every proxy's host matcher accepts unquoted.
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

// maxConn returns MaxConn or DefaultMaxConn.
func (p Params) maxConn() int {
	if p.MaxConn > 0 {
		return p.MaxConn
	}
	return DefaultMaxConn
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

// runUser resolves Params.User: the named user, or the current user's name
// when empty.
func (p Params) runUser() (string, error) {
	if p.User != "" {
		return p.User, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("proxy params: cannot name the current user (%v): set Params.User", err)
	}
	return u.Username, nil
}

// isRoot reports whether this process runs with uid 0; proxies started by it
// start as root and may switch users. A variable so the golden configs can
// be rendered both ways.
var isRoot = func() bool { return os.Geteuid() == 0 }

// switchUser is the user a proxy that switches users itself (nginx, h2o)
// is told to serve as: runUser when this process is root; "" otherwise,
// after checking that p.User asks for no other user (server names the
// proxy in the error).
func (p Params) switchUser(server string) (string, error) {
	if isRoot() {
		return p.runUser()
	}
	return "", p.rejectOtherUser(server + " started without root")
}

// rejectOtherUser returns an error when p.User names a user other than the
// current one, for proxies that cannot switch users themselves.
func (p Params) rejectOtherUser(proxy string) error {
	if p.User == "" {
		return nil
	}
	cur, err := user.Current()
	if err == nil && cur.Username == p.User {
		return nil
	}
	return fmt.Errorf("%s cannot switch to user %q itself: leave Params.User empty and start it as that user", proxy, p.User)
}
