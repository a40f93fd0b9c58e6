package proxy

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// Data are the template parameters of a profile's files and command,
// derived from Params (docs/lab.md lists each). The names are a contract:
// users' templates use them.
type Data struct {
	Name        string // the profile's name
	Description string // the profile's description
	Binary      string // the server binary, absolute
	Prefix      string // the directory above the binary's (/usr for /usr/sbin/apache2): where its modules and data live
	Dir         string // the server's run directory (0700, its own): configs, logs, pid files
	ErrorLog    string // Dir/error.log: the lab scans it (and the server's output) for known error causes
	ListenHost  string // the address to listen on (IPv6 unbracketed)
	IPv6        bool   // ListenHost is an IPv6 address (lighttpd's server.use-ipv6)
	HTTPPort    int    // the plain HTTP port
	HTTPSPort   int    // the TLS port (TCP), and HTTP/3's (UDP)
	HTTPAddr    string // ListenHost:HTTPPort, IPv6 bracketed
	HTTPSAddr   string // ListenHost:HTTPSPort, IPv6 bracketed
	ServerName  string // the Host and SNI the site answers
	Backend     string // host:port of the lab's backend, IPv6 bracketed
	BackendHost string // the backend's IP as in a URL (IPv6 bracketed)
	BackendIP   string // the backend's IP (IPv6 unbracketed)
	BackendPort int    // the backend's port
	Routes      []Route
	Cert        string // the certificate chain (PEM, leaf first) of the step's key type
	Key         string // its private key (PEM)
	CertKey     string // chain and key in one PEM file (HAProxy's crt)
	CA          string // the lab's CA certificate (PEM)
	KeyType     string // p256, rsa2048 or rsa4096
	Workers     int    // CPUs of the server's group (0: the server's default)
	MaxConn     int    // the connection cap the lab asks for (4096 by default)
	MaxConnFD   int    // MaxConn, lowered to what the open-file limit holds at two descriptors per connection plus 200
	User        string // whom the server serves as, when the lab runs as root (a user: root profile's config hands it to the server); "" otherwise
	Root        string // the document root an origin serves ("" for a proxy)
}

// data derives the template parameters of prm for p.
func (p Profile) data(prm Params) (Data, error) {
	d := Data{
		Name: p.Name, Description: p.Description,
		Binary: prm.Binary, Prefix: prefixOf(prm.Binary),
		Dir: prm.Dir, ErrorLog: filepath.Join(prm.Dir, "error.log"),
		ListenHost: prm.ListenHost, IPv6: strings.Contains(prm.ListenHost, ":"), HTTPPort: prm.HTTPPort, HTTPSPort: prm.HTTPSPort,
		HTTPAddr: hostPort(prm.ListenHost, prm.HTTPPort), HTTPSAddr: hostPort(prm.ListenHost, prm.HTTPSPort),
		ServerName: prm.ServerName,
		Backend:    hostPort(prm.BackendHost, prm.BackendPort), BackendHost: urlHost(prm.BackendHost), BackendIP: prm.BackendHost, BackendPort: prm.BackendPort,
		Routes: prm.Routes,
		Cert:   prm.CertFile, Key: prm.KeyFile, CertKey: prm.CombinedPEM, CA: prm.CAFile, KeyType: prm.KeyType,
		Workers: prm.Workers, MaxConn: prm.MaxConn, User: prm.User, Root: prm.Root,
	}
	if d.Routes == nil {
		d.Routes = []Route{{Host: prm.ServerName, Backend: d.Backend}}
	}
	d.Routes = slices.Clone(d.Routes)
	for i := range d.Routes {
		r := &d.Routes[i]
		host, port, err := net.SplitHostPort(r.Backend)
		if err != nil {
			return d, fmt.Errorf("proxy params: Routes[%d].Backend %q is not host:port", i, r.Backend)
		}
		r.BackendHost, r.BackendIP = urlHost(host), host
		if r.BackendPort, err = strconv.Atoi(port); err != nil {
			return d, fmt.Errorf("proxy params: Routes[%d].Backend %q has no port number", i, r.Backend)
		}
	}
	if d.MaxConn == 0 {
		d.MaxConn = DefaultMaxConn
	}
	limit, err := maxConnFD()
	if err != nil {
		return d, err
	}
	d.MaxConnFD = min(d.MaxConn, limit)
	return d, nil
}

// prefixOf is the directory above the binary's: /usr for /usr/sbin/nginx.
func prefixOf(binary string) string {
	if binary == "" {
		return ""
	}
	return filepath.Dir(filepath.Dir(binary))
}

// check validates prm for p: the fields every server uses, and for an
// origin that serves files, its document root.
func (p Profile) check(prm Params) error {
	if err := prm.validate(); err != nil {
		return err
	}
	if prm.Binary == "" || !filepath.IsAbs(prm.Binary) {
		return fmt.Errorf("proxy params: Binary %q must be the absolute path of %s's binary (Find)", prm.Binary, p.Name)
	}
	if p.IsOrigin() && p.ServesFiles() && (prm.Root == "" || !filepath.IsAbs(prm.Root)) {
		return fmt.Errorf("%s: Params.Root %q must be an absolute directory (the files the lab writes with WriteFiles)", p.Name, prm.Root)
	}
	return nil
}

// Render returns the profile's config files rendered for prm, keyed by
// path relative to prm.Dir.
func (p Profile) Render(prm Params) (map[string][]byte, error) {
	d, err := p.checkedData(prm)
	if err != nil {
		return nil, err
	}
	return p.render(d)
}

// checkedData checks prm for p and derives the template parameters.
func (p Profile) checkedData(prm Params) (Data, error) {
	if err := p.check(prm); err != nil {
		return Data{}, err
	}
	return p.data(prm)
}

func (p Profile) render(d Data) (map[string][]byte, error) {
	out := make(map[string][]byte, len(p.files))
	for _, f := range p.files {
		var b bytes.Buffer
		if err := f.tmpl.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("profile %s: %v", p.Name, trimTemplateErr(err))
		}
		out[f.Name] = b.Bytes()
	}
	return out, nil
}

// Command returns the argv (the binary first) that runs the server in the
// foreground with the config Render wrote into prm.Dir.
func (p Profile) Command(prm Params) ([]string, error) {
	d, err := p.checkedData(prm)
	if err != nil {
		return nil, err
	}
	return p.argv(d)
}

func (p Profile) argv(d Data) ([]string, error) {
	return execArgs(p.Name, "command", p.command, d)
}

// execArgs renders an argv's templates with d.
func execArgs(profile, field string, args []*template.Template, d any) ([]string, error) {
	out := make([]string, 0, len(args))
	for i, t := range args {
		var b strings.Builder
		if err := t.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("profile %s: %s[%d]: %v", profile, field, i, trimTemplateErr(err))
		}
		out = append(out, b.String())
	}
	return out, nil
}

// trimTemplateErr drops text/template's "template: " prefix.
func trimTemplateErr(err error) string {
	return strings.TrimPrefix(err.Error(), "template: ")
}

// WriteConfig renders prof for p and writes the files into p.Dir (created
// 0700 if missing; files 0600). It returns the written paths, sorted.
func WriteConfig(prof Profile, p Params) ([]string, error) {
	files, err := prof.Render(p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating run directory: %v", err)
	}
	var written []string
	for _, f := range prof.files {
		path := filepath.Join(p.Dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating config directory: %v", err)
		}
		if err := os.WriteFile(path, files[f.Name], 0o600); err != nil {
			return nil, fmt.Errorf("writing config: %v", err)
		}
		written = append(written, path)
	}
	return written, nil
}
