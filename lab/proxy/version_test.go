package proxy

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The version parsers against the exact output formats of the binaries
// (captured from Debian 12's packages), via small scripts.
func TestCommandVersionParsers(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, out string
		re        *regexp.Regexp
		arg, want string
	}{
		{"nginx", "nginx version: nginx/1.22.1", nginxVersionRe, "-v", "nginx 1.22.1"},
		{"haproxy", "HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/\nStatus: long-term", haproxyVersionRe, "-v", "haproxy 2.6.12-1+deb12u4"},
		{"h2o", "h2o version 2.2.5\nOpenSSL: OpenSSL 3.0.17", h2oVersionRe, "--version", "h2o 2.2.5"},
		{"caddy", "2.6.2", caddyVersionRe, "version", "caddy 2.6.2"},
		{"traefik", "Version:      v3.6.12\nCodename:     x", traefikVersionRe, "version", "traefik 3.6.12"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.name)
		// nginx prints to stderr; the others to stdout.
		writeExe(t, path, "#!/bin/sh\n[ \"$1\" = \""+c.arg+"\" ] || exit 3\nprintf '%s\\n' '"+strings.ReplaceAll(c.out, "\n", "' '")+"' >&2\n")
		got, err := commandVersion(c.name, path, c.re, c.arg)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	bad := filepath.Join(dir, "silent")
	writeExe(t, bad, "#!/bin/sh\necho nothing here\n")
	if _, err := commandVersion("nginx", bad, nginxVersionRe, "-v"); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("silent binary: err = %v, want a one-line error", err)
	}
}

// Installed binaries report a version.
func TestInstalledVersions(t *testing.T) {
	for _, prof := range All() {
		found, path, v, err := Status(prof)
		if !found {
			t.Logf("%s: not installed (%v)", prof.Name, err)
			continue
		}
		if err != nil || !strings.HasPrefix(v, prof.Proxy+" ") || v == prof.Proxy+" " {
			t.Errorf("%s: Status = %s %q %v", prof.Name, path, v, err)
			continue
		}
		t.Logf("%s: %s (%s)", prof.Name, v, path)
	}
}
