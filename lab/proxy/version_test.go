package proxy

import (
	"path/filepath"
	"strings"
	"testing"
)

// The built-ins' version commands and patterns against the exact output
// formats of the binaries (captured from Debian 12's packages), via small
// scripts in the binaries' place; a profile without version_match takes
// the first line printed, on stdout or stderr.
func TestVersionFromCommand(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		profile, out, arg, want string
	}{
		{"nginx-stock", "nginx version: nginx/1.22.1", "-v", "nginx 1.22.1"},
		{"haproxy", "HAProxy version 2.6.12-1+deb12u4 2026/10/17 - https://haproxy.org/\nStatus: long-term", "-v", "haproxy 2.6.12-1+deb12u4"},
		{"h2o", "h2o version 2.2.5\nOpenSSL: OpenSSL 3.0.17", "--version", "h2o 2.2.5"},
		{"caddy-stock", "2.6.2", "version", "caddy 2.6.2"},
		{"traefik", "Version:      v3.6.12\nCodename:     x", "version", "traefik 3.6.12"},
	}
	for _, c := range cases {
		prof, err := Get(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, prof.Proxy)
		// nginx prints to stderr; the others to stdout.
		writeExe(t, path, "#!/bin/sh\n[ \"$1\" = \""+c.arg+"\" ] || exit 3\nprintf '%s\\n' '"+strings.ReplaceAll(c.out, "\n", "' '")+"' >&2\n")
		got, err := prof.Version(path)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.profile, got, err, c.want)
		}
	}
	bad := filepath.Join(dir, "silent")
	writeExe(t, bad, "#!/bin/sh\necho nothing here\n")
	nginx, _ := Get("nginx-stock")
	if _, err := nginx.Version(bad); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("silent binary: err = %v, want a one-line error", err)
	}
	mine := loadString(t, "name: mine\nbinary: mine\nversion: [\"{{.Binary}}\", \"--version\"]\ncommand: [\"{{.Binary}}\"]\n")
	writeExe(t, bad, "#!/bin/sh\necho >&2\necho 'mine 0.3 (dev)' >&2\necho second line\n")
	if v, err := mine.Version(bad); err != nil || v != "mine 0.3 (dev)" {
		t.Errorf("first line: %q, %v; want the first non-empty line", v, err)
	}
	fixed := loadString(t, "name: mine2\nbinary: mine\nversion: mine devel\ncommand: [\"{{.Binary}}\"]\n")
	if v, err := fixed.Version(bad); err != nil || v != "mine devel" {
		t.Errorf("fixed version: %q, %v", v, err)
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
