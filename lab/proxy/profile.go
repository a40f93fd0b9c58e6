package proxy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"

	"github.com/loadlab/loadlab/internal/findbin"
)

// Features are the protocols a profile serves on its TLS listener.
type Features struct {
	TLS bool `json:"tls"` // HTTPS on HTTPSPort
	H2  bool `json:"h2"`  // HTTP/2 by ALPN on HTTPSPort
	H3  bool `json:"h3"`  // HTTP/3 on UDP HTTPSPort
}

// String lists the enabled features, e.g. "tls,h2,h3", or "-" for none.
func (f Features) String() string {
	var s []string
	if f.TLS {
		s = append(s, "tls")
	}
	if f.H2 {
		s = append(s, "h2")
	}
	if f.H3 {
		s = append(s, "h3")
	}
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

// Profile is one proxy configuration the lab can run.
type Profile struct {
	Name        string   // e.g. "nginx-stock"
	Proxy       string   // "nginx", "caddy", "haproxy", "traefik", "h2o"
	Description string   // one line: what the profile reproduces and from which seed
	Features    Features // protocols the rendered config serves
	// Role is RoleProxy (forwards to the backend) or RoleOrigin (serves
	// the lab's files in Params.Root itself).
	Role string
	// FixedBody, if set, is what the profile answers for every path (an
	// origin that serves no file, such as caddy-respond); nil: it answers
	// the lab's paths with their bytes (ServesFiles).
	FixedBody []byte

	// Find locates the proxy binary (see FindBinary for the search order).
	Find func() (path string, err error)
	// Version reports the binary's version, e.g. "nginx 1.22.1".
	Version func(path string) (string, error)
	// Render returns the config files, keyed by path relative to p.Dir.
	Render func(p Params) (files map[string][]byte, err error)
	// Command returns the argv (path first) that runs the proxy in the
	// foreground with the config Render wrote into p.Dir.
	Command func(path string, p Params) (args []string)
	// Check returns the argv that validates the rendered config without
	// serving, or nil when the proxy has no such mode.
	Check func(path string, p Params) (args []string)
	// StopSignal asks the foreground process to exit.
	StopSignal syscall.Signal
	// Ready returns nil once an HTTPS GET of /1k with the site's Host and
	// SNI returns 200 and 1024 bytes (FixedBody when set); it polls until
	// ctx ends.
	Ready func(ctx context.Context, p Params) error
}

// All returns every profile, in a stable order (by proxy, then name).
func All() []Profile {
	var all []Profile
	all = append(all, nginxProfiles()...)
	all = append(all, caddyProfiles()...)
	all = append(all, haproxyProfiles()...)
	all = append(all, traefikProfiles()...)
	all = append(all, h2oProfiles()...)
	all = append(all, originProfiles()...)
	return all
}

// Names returns the names of all profiles, sorted.
func Names() []string {
	var names []string
	for _, p := range All() {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Get returns the profile called name; the error lists the known profiles.
func Get(name string) (Profile, error) {
	for _, p := range All() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown proxy profile %q: use one of %s", name, strings.Join(Names(), ", "))
}

// ErrNotFound is wrapped by Find errors when the binary is not installed.
var ErrNotFound = findbin.ErrNotFound

// Status finds p's binary and asks its version. A missing binary gives
// found=false and an error wrapping ErrNotFound that says how to install it;
// a binary whose version cannot be read gives found=true and the error.
func Status(p Profile) (found bool, path, version string, err error) {
	path, err = p.Find()
	if err != nil {
		return false, "", "", err
	}
	version, err = p.Version(path)
	return true, path, version, err
}
