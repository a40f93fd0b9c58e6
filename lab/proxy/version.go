package proxy

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
)

// versionTimeout bounds a `server -v` style call.
const versionTimeout = 10 * time.Second

// versionData is what a version argv may use.
type versionData struct {
	Binary string // the binary, absolute
	Prefix string // the directory above the binary's
}

// Version reports the version of the binary at path, e.g. "nginx 1.22.1":
// a fixed text; else the Go build info's version of the profile's module
// (a `go install` build of Caddy answers "unknown" to `caddy version`);
// else what the version command prints: its first line, or the match of
// version_match.
func (p Profile) Version(path string) (string, error) {
	v := p.version
	if v.Text != "" {
		return v.Text, nil
	}
	if v.Module != "" {
		if mv := goModuleVersion(path, v.Module); mv != "" {
			return p.Proxy + " " + trimV(mv), nil
		}
	}
	if len(v.Args) == 0 {
		return "", fmt.Errorf("profile %s: %s has no version in its build info and the profile gives no version command", p.Name, path)
	}
	args, err := execArgs(p.Name, "version", v.Args, versionData{Binary: path, Prefix: prefixOf(path)})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	// It runs as root: a program that passes the lab's rule, in the
	// minimal environment.
	bin, err := findbin.Runnable(args[0])
	if err != nil {
		return "", fmt.Errorf("profile %s: version: %w", p.Name, err)
	}
	cmd := exec.CommandContext(ctx, bin, args[1:]...)
	cmd.Env = findbin.Environ("", nil)
	out, err := cmd.CombinedOutput()
	if v.Match == nil {
		line := firstLine(out)
		if line == "" {
			if err != nil {
				return "", fmt.Errorf("%s failed (%v) and printed nothing: check that %s is a working %s binary", strings.Join(args, " "), err, path, p.Proxy)
			}
			return "", fmt.Errorf("%s printed nothing: give the profile a version command that prints the version", strings.Join(args, " "))
		}
		return line, nil
	}
	m := v.Match.FindSubmatch(out)
	if m == nil {
		if err != nil {
			return "", fmt.Errorf("%s failed (%v): check that %s is a working %s binary", strings.Join(args, " "), err, path, p.Proxy)
		}
		return "", fmt.Errorf("%s printed no version (%q): check that %s is a %s binary", strings.Join(args, " "), firstLine(out), path, p.Proxy)
	}
	found := m[0]
	if len(m) > 1 {
		found = m[1]
	}
	return p.Proxy + " " + string(found), nil
}

// goModuleVersion reads the version of module mod from a Go binary's build
// info: the main module's version or a dependency's (after replacement).
// It returns "" when the binary is not Go, has no such module, or was built
// from a checkout ("(devel)").
func goModuleVersion(path, mod string) string {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return ""
	}
	clean := func(v string) string {
		if v == "" || v == "(devel)" {
			return ""
		}
		return v
	}
	if bi.Main.Path == mod {
		return clean(bi.Main.Version)
	}
	for _, d := range bi.Deps {
		if d.Path != mod {
			continue
		}
		if d.Replace != nil {
			return clean(d.Replace.Version)
		}
		return clean(d.Version)
	}
	return ""
}

// trimV drops a leading "v" from a Go module version.
func trimV(v string) string { return strings.TrimPrefix(v, "v") }

// firstLine is the first non-empty line of b, at most 120 bytes.
func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
